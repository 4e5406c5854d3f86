package cluster_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pi-actors/pi-actors/actors/cluster"
	"github.com/pi-actors/pi-actors/internal/clustertest"
	"github.com/pi-actors/pi-actors/internal/testproc"
)

// TestClusterRoutes: three kernels on loopback with mutual TLS. A run is
// spawned on another node and supervised there; inspect, logs, message
// and kill reach it by run:<id>@<node> and by its bare id; a bare id two
// nodes have is refused with both candidates; its follow-ups reach the
// spawning session's node exactly once.
func TestClusterRoutes(t *testing.T) {
	t.Parallel()
	c := clustertest.New(t, bin, "a", "b", "c")

	out := c.Run("a", "spawn", "as=run:w1", "node=b", "template=sh -c 'echo hello from $PI_ACTORS_RUN_ID; sleep 60'")
	if !strings.Contains(out, "address=run:w1@b node=b status=running") {
		t.Fatalf("spawn node=b: %s", out)
	}
	if !strings.Contains(out, filepath.Join(c.Members["b"].Root, "tmp", "pi-actors", "runs", "w1")) {
		t.Fatalf("the run's state dir is not on b: %s", out)
	}
	// The same answers by node-qualified and by bare address.
	for _, target := range []string{"run:w1@b", "run:w1"} {
		clustertest.Eventually(t, 10*time.Second, "hello in the tail of "+target, func() bool {
			o, code := c.CLI("a", "inspect", "target="+target, "view=tail")
			return code == 0 && strings.Contains(o, "hello from w1")
		})
	}
	env, _ := c.JSON("a", "inspect", "target=run:w1", "view=status")
	if res, _ := env["result"].(map[string]any); res["node"] != "b" || !strings.Contains(fmt.Sprint(res["next_actions"]), "target=run:w1@b view=tail") {
		t.Fatalf("a routed result carries node b and its next actions name it: %v", env)
	}
	if o := c.Run("a", "inspect", "target=run:w1", "view=status"); !strings.Contains(o, "target=run:w1@b_view=tail") {
		t.Fatalf("next actions of a routed inspect name the node: %s", o)
	}
	if o := c.Run("a", "logs", "w1@b"); !strings.Contains(o, "hello from w1") {
		t.Fatalf("logs w1@b: %s", o)
	}
	// A message lands in the run's inbox on b; the answer names the node.
	// Its next actions name the node too (a bare run:w1 is a's own).
	if o := c.Run("a", "message", "to=run:w1@b", "type=greet.hello", "body:={\"n\":1}"); !strings.Contains(o, "to=run:w1@b type=greet.hello node=b") ||
		!strings.Contains(o, "next=inspect_target=run:w1@b_view=mailbox|inspect_target=run:w1@b_view=status") {
		t.Fatalf("message to a run on b: %s", o)
	}
	inbox, _ := os.ReadFile(filepath.Join(c.Members["b"].Root, "tmp", "pi-actors", "runs", "w1", "inbox.jsonl"))
	if !strings.Contains(string(inbox), "greet.hello") {
		t.Fatalf("b's inbox of w1: %s", inbox)
	}
	// Another session is refused there exactly as it would be locally.
	if o, code := c.CLIIn("a", "s2", "", "message", "to=run:w1@b", "type=control.kill"); code != 77 {
		t.Fatalf("another session's kill: exit %d, want 77\n%s", code, o)
	}

	// logs -f of a run on another node: its stderr lines go to stderr, as
	// locally (they came on stdout).
	c.Run("a", "spawn", "as=run:lf", "node=c", "template=sh -c 'for i in 1 2 3; do echo out$i; echo err$i >&2; sleep 0.2; done'")
	stdout, stderr, code := c.CLISplit("a", "logs", "lf@c", "-f")
	if code != 0 || !strings.Contains(stdout, "out3") || strings.Contains(stdout, "err2") || !strings.Contains(stderr, "err3") {
		t.Fatalf("logs lf@c -f: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	// wait=ready on another node waits for the run's own ready_timeout and
	// says what the probe saw (it waited the default 60 s + grace, and
	// named no probe error).
	o, code := c.CLI("a", "spawn", "as=run:rd", "node=b", "template=sleep 60", "ready=log:NEVER", "ready_timeout=1s", "wait=ready")
	if code != 75 || !strings.Contains(o, "not ready after its ready_timeout (1s): no output line matched") {
		t.Fatalf("spawn node=b wait=ready: exit %d\n%s", code, o)
	}

	// A bare id two nodes have.
	c.Run("a", "spawn", "as=run:dup", "node=b", "template=sleep 60")
	c.Run("a", "spawn", "as=run:dup", "node=c", "template=sleep 60")
	o, code = c.CLI("a", "inspect", "target=run:dup", "view=status")
	if code != 64 || !strings.Contains(o, "run:dup@b") || !strings.Contains(o, "run:dup@c") {
		t.Fatalf("ambiguous bare id: exit %d\n%s", code, o)
	}

	// A bare id is this node's run whenever it has one, also in a
	// state_dir of its own (not the default one), although b has one too.
	own := filepath.Join(c.Dir, "own-state", "mine")
	c.Run("a", "spawn", "as=run:mine", "state_dir="+own, "template=sleep 60")
	c.Run("a", "spawn", "as=run:mine", "node=b", "template=sleep 60")
	env, _ = c.JSON("a", "inspect", "target=run:mine", "view=status")
	if res, _ := env["result"].(map[string]any); res["node"] == "b" || !strings.Contains(fmt.Sprint(res), own) {
		t.Fatalf("bare run:mine on a, which has it in its own state_dir: %v", env)
	}
	c.Run("a", "message", "to=run:mine", "type=greet.mine")
	if inbox, _ := os.ReadFile(filepath.Join(own, "inbox.jsonl")); !strings.Contains(string(inbox), "greet.mine") {
		t.Fatalf("a message to bare run:mine did not reach a's run: %s", inbox)
	}

	// ps --cluster: every node's runs, with a NODE column.
	o = c.Run("a", "ps", "--cluster")
	if !strings.Contains(o, "NODE") || !regexpMatch(`(?m)^b +dup `, o) || !regexpMatch(`(?m)^c +dup `, o) {
		t.Fatalf("ps --cluster:\n%s", o)
	}

	// A state directory is a path on the node that supervises the run:
	// another member may not choose it (64), and nothing is made there.
	sd := filepath.Join(t.TempDir(), "sd")
	if env, code := c.JSON("a", "spawn", "as=run:sd", "node=b", "state_dir="+sd, "template=true"); code != 64 || !strings.Contains(fmt.Sprint(env), "not served to other nodes") {
		t.Fatalf("spawn node=b state_dir=: exit %d %v", code, env)
	}
	if _, err := os.Stat(sd); err == nil {
		t.Fatal("the refused spawn made its state_dir")
	}

	// Follow-ups of runs on b and c reach a's session queue exactly once.
	c.Run("a", "kill", "w1@b")
	c.Run("a", "spawn", "as=run:quick", "node=c", "template=sh -c 'exit 3'")
	var got []string
	drain := func() bool {
		env, _ := c.JSON("a", "inspect", "target=coordinator", "view=followups")
		res, _ := env["result"].(map[string]any)
		list, _ := res["followups"].([]any)
		done := false
		for _, f := range list {
			m := f.(map[string]any)
			got = append(got, fmt.Sprint(m["id"]))
			if m["run"] == "quick" && m["kind"] == "transition" {
				if m["node"] != "c" || m["address"] != "run:quick@c" {
					t.Fatalf("follow-up does not name its node: %v", m)
				}
				done = true
			}
		}
		return done
	}
	clustertest.Eventually(t, 20*time.Second, "the transition follow-up of run:quick on a", drain)
	time.Sleep(6 * time.Second) // another delivery pass
	drain()
	// Memory across nodes: run:quick was captured into c's knowledge;
	// recall scope=cluster from a finds it, labelled with its node.
	clustertest.Eventually(t, 20*time.Second, "recall scope=cluster finds run:quick on c", func() bool {
		env, code := c.JSON("a", "knowledge", "recall", "query=run quick failed exit 3", "scope=cluster")
		res, _ := env["result"].(map[string]any)
		hits, _ := res["hits"].([]any)
		for _, h := range hits {
			m := h.(map[string]any)
			if m["node"] == "c" && strings.Contains(fmt.Sprint(m["name"], m["snippet"]), "quick") {
				return code == 0
			}
		}
		return false
	})
	seen := map[string]int{}
	for _, id := range got {
		seen[id]++
		if seen[id] > 1 {
			t.Fatalf("follow-up %s delivered twice", id)
		}
	}
}

// TestClusterFollowupsAcrossHomeRestart: the spawning node's kernel is
// killed while the run on another node ends; the follow-up waits in that
// node's durable queue and reaches the restarted kernel exactly once.
func TestClusterFollowupsAcrossHomeRestart(t *testing.T) {
	t.Parallel()
	c := clustertest.New(t, bin, "a", "b")
	c.Run("a", "spawn", "as=run:job", "node=b", "template=sh -c 'sleep 2; exit 0'")
	syscall.Kill(c.KernelPid("a"), syscall.SIGKILL)
	clustertest.Eventually(t, 15*time.Second, "run:job ends on b", func() bool {
		o, _ := c.CLI("b", "inspect", "target=run:job", "view=status")
		return strings.Contains(o, "status=done")
	})
	time.Sleep(2 * time.Second) // b tried to deliver while a was down
	c.Start("a")
	c.WaitUp("a", 10*time.Second, "b")
	count := 0
	clustertest.Eventually(t, 20*time.Second, "the follow-up of run:job on the restarted a", func() bool {
		env, _ := c.JSON("a", "inspect", "target=coordinator", "view=followups")
		res, _ := env["result"].(map[string]any)
		list, _ := res["followups"].([]any)
		for _, f := range list {
			if m := f.(map[string]any); m["run"] == "job" && m["kind"] == "transition" {
				count++
			}
		}
		return count > 0
	})
	time.Sleep(6 * time.Second)
	env, _ := c.JSON("a", "inspect", "target=coordinator", "view=followups")
	res, _ := env["result"].(map[string]any)
	for _, f := range res["followups"].([]any) {
		if m := f.(map[string]any); m["run"] == "job" && m["kind"] == "transition" {
			count++
		}
	}
	if count != 1 {
		t.Fatalf("run:job's follow-up delivered %d times, want once", count)
	}
}

// TestClusterSpreadPlacement: 30 runs spawned with placement=spread land on
// every node, none with more than half.
func TestClusterSpreadPlacement(t *testing.T) {
	t.Parallel()
	c := clustertest.New(t, bin, "a", "b", "c")
	var items []string
	for i := range 30 {
		items = append(items, fmt.Sprintf(`{"as":"run:s%02d","placement":"spread","template":"sleep 60"}`, i))
	}
	out, code := c.CLIIn("a", "s1", strings.Join(items, "\n"), "spawn", "-")
	if code != 0 {
		t.Fatalf("spawn - : exit %d\n%s", code, out)
	}
	per := map[string]int{}
	for _, l := range strings.Split(out, "\n") {
		switch {
		case strings.Contains(l, " node=b "):
			per["b"]++
		case strings.Contains(l, " node=c "):
			per["c"]++
		case strings.Contains(l, "address=run:s"):
			per["a"]++
		}
	}
	// Three members with no run: the batch places each spawn once, by
	// the runs each member has plus those the batch gave it, so each
	// gets about a third (placing one twice gave 4/13/13).
	for _, n := range []string{"a", "b", "c"} {
		if per[n] < 8 || per[n] > 12 {
			t.Fatalf("spread placement of 30 runs over three idle members: %v, want about 10 each\n%s", per, out)
		}
	}
	// The runs of other nodes travel as one batch per node; the answers
	// keep the batch's order.
	next := 0
	for _, l := range strings.Split(out, "\n") {
		if strings.Contains(l, fmt.Sprintf("address=run:s%02d", next)) {
			next++
		}
	}
	if next != 30 {
		t.Fatalf("spread answers out of order (in order up to s%02d):\n%s", next, out)
	}
	// One batch mixing this node, a named node and a node nobody knows:
	// each item is answered for itself.
	out, code = c.CLIIn("a", "s1", `{"as":"run:m1","template":"sleep 60"}
{"as":"run:m2","node":"b","template":"sleep 60"}
{"as":"run:m3","node":"nosuch","template":"sleep 60"}
{"as":"run:m4","node":"c","template":"sleep 60"}`, "spawn", "-")
	if code == 0 || !strings.Contains(out, "nosuch") {
		t.Fatalf("a batch with an unknown node: exit %d\n%s", code, out)
	}
	for _, want := range []string{"address=run:m1", "address=run:m2@b", "address=run:m4@c"} {
		if !strings.Contains(out, want) {
			t.Fatalf("mixed batch lacks %s:\n%s", want, out)
		}
	}
	// session suspend/resume act on this node's runs and name the
	// session's runs on the others they did not reach: suspend the live
	// ones, resume the suspended ones (none here: b's and c's run on).
	out, code = c.CLI("a", "session", "suspend")
	if code != 0 || !strings.Contains(out, "on other nodes, not suspended") || !strings.Contains(out, "@b") || !strings.Contains(out, "@c") {
		t.Fatalf("session suspend on a clustered kernel: exit %d\n%s", code, out)
	}
	out, code = c.CLI("a", "session", "resume")
	if code != 0 || strings.Contains(out, "on other nodes") {
		t.Fatalf("session resume on a clustered kernel: exit %d\n%s", code, out)
	}
	// kill all: the session's runs on every node, another session's
	// left alone.
	if out, code := c.CLIIn("a", "s2", "", "spawn", "as=run:other", "node=b", "template=sleep 60"); code != 0 {
		t.Fatalf("spawn for s2: exit %d\n%s", code, out)
	}
	// A session with runs on other nodes only: suspend on a says where
	// they are (it said the session had none).
	if out, code := c.CLIIn("a", "s2", "", "session", "suspend"); code != 66 || !strings.Contains(out, "its runs on other nodes: run:other@b") {
		t.Fatalf("session suspend with runs elsewhere only: exit %d\n%s", code, out)
	}
	out, code = c.CLI("a", "kill", "all")
	if code != 0 || !strings.Contains(out, "run:s00") || !strings.Contains(out, "@b") || !strings.Contains(out, "@c") || strings.Contains(out, "other") {
		t.Fatalf("kill all across the cluster: exit %d\n%s", code, out)
	}
	for _, n := range []string{"a", "b", "c"} {
		if o := c.Run(n, "ps", "session=s1"); strings.Contains(o, "running") {
			t.Fatalf("node %s still runs s1's runs after kill all:\n%s", n, o)
		}
	}
	if o, _ := c.CLIIn("a", "s2", "", "inspect", "target=run:other@b", "view=status"); !strings.Contains(o, "status=running") {
		t.Fatalf("kill all of s1 touched s2's run: %s", o)
	}
	// A kernel stopped on purpose says goodbye: left, not unreachable.
	c.Run("c", "kernel", "stop")
	c.WaitStatus("a", 10*time.Second, "left", "c")
	// all never passes a member by in silence: c's runs are untouched.
	c.Run("a", "spawn", "as=run:late", "template=sleep 60")
	out, code = c.CLI("a", "kill", "all")
	if code != 69 || !strings.Contains(out, "node=c") || !strings.Contains(out, "run:late") {
		t.Fatalf("kill all with c gone: exit %d, want 69 naming node c\n%s", code, out)
	}
	// Neither does session suspend.
	c.Run("a", "spawn", "as=run:late2", "template=sleep 60")
	out, code = c.CLI("a", "session", "suspend")
	if code != 0 || !strings.Contains(out, "node=c could not be asked") {
		t.Fatalf("session suspend with c gone: exit %d, want it to name node c\n%s", code, out)
	}
	c.Run("a", "session", "resume")
}

// TestClusterMemberLoss: a kernel killed with -9 is unreachable for the
// others within 5 s; its runs keep running; inspect of them answers at
// once with the last known status and 69; a message to them is refused
// with 69 and written nowhere; the restarted kernel is up again within
// 10 s. A kernel stopped with SIGSTOP is treated the same and rejoins
// after SIGCONT (under a new member id: the engine blocks the old one).
func TestClusterMemberLoss(t *testing.T) {
	t.Parallel()
	c := clustertest.New(t, bin, "a", "b", "c")
	c.Run("a", "spawn", "as=run:keep", "node=b", "template=sleep 120")
	clustertest.Eventually(t, 10*time.Second, "a knows run:keep", func() bool {
		_, code := c.CLI("a", "inspect", "target=run:keep", "view=status")
		return code == 0
	})
	syscall.Kill(c.KernelPid("b"), syscall.SIGKILL)
	// Asked before a noticed: the answer comes once it does, not after
	// the forward's timeout.
	start := time.Now()
	if o, code := c.CLI("a", "inspect", "target=run:keep@b", "view=status"); code != 69 || time.Since(start) > 7*time.Second {
		t.Fatalf("inspect of a run on a node killed a moment ago: exit %d after %s\n%s", code, time.Since(start), o)
	}
	if d := c.WaitStatus("a", 5*time.Second, "unreachable", "b"); d > 5*time.Second {
		t.Fatalf("loss detected after %s", d)
	}
	start = time.Now()
	o, code := c.CLI("a", "inspect", "target=run:keep@b", "view=status")
	if code != 69 || !strings.Contains(o, "last known status of run:keep@b: running") || time.Since(start) > 2*time.Second {
		t.Fatalf("inspect of a run on a lost node: exit %d after %s\n%s", code, time.Since(start), o)
	}
	deadBefore, _ := os.ReadFile(filepath.Join(c.Members["a"].Root, "tmp", "pi-actors", "dead_letters.jsonl"))
	if o, code := c.CLI("a", "message", "to=run:keep@b", "type=greet.hi"); code != 69 {
		t.Fatalf("message to a lost node: exit %d\n%s", code, o)
	}
	deadAfter, _ := os.ReadFile(filepath.Join(c.Members["a"].Root, "tmp", "pi-actors", "dead_letters.jsonl"))
	inbox, _ := os.ReadFile(filepath.Join(c.Members["b"].Root, "tmp", "pi-actors", "runs", "keep", "inbox.jsonl"))
	if string(deadBefore) != string(deadAfter) || strings.Contains(string(inbox), "greet.hi") {
		t.Fatal("a refused message was written somewhere")
	}
	// The run kept running on b's machine.
	o = c.Run("b", "inspect", "target=run:keep", "view=status")
	if !strings.Contains(o, "status=running") {
		t.Fatalf("run:keep after its kernel died: %s", o)
	}
	c.Start("b") // any call that needs the kernel starts it again
	if d := c.WaitUp("a", 10*time.Second, "b"); d > 10*time.Second {
		t.Fatalf("rejoin took %s", d)
	}
	c.WaitUp("c", 10*time.Second, "b")
	if o := c.Run("a", "inspect", "target=run:keep@b", "view=status"); !strings.Contains(o, "status=running") {
		t.Fatalf("run:keep after b rejoined: %s", o)
	}

	// SIGSTOP: the same, and back after SIGCONT. Streams across it end
	// on both sides: a's logs -f of a run on c ends once c is unreachable
	// (a stopped node never says so itself), c's logs -f of a run on a
	// once c's kernel runs again (it rejoins under a new member id, and
	// its old member hears nothing more).
	c.Run("a", "spawn", "as=run:ticker", "node=c", "template=sh -c 'while :; do echo tick; sleep 0.3; done'")
	c.Run("a", "spawn", "as=run:quiet", "template=sh -c 'echo ready; sleep 120'")
	clustertest.Eventually(t, 10*time.Second, "c knows run:quiet", func() bool {
		_, code := c.CLI("c", "inspect", "target=run:quiet@a", "view=status")
		return code == 0
	})
	fromA := c.Background("a", "logs", "ticker@c", "-f")
	fromC := c.Background("c", "logs", "quiet@a", "-f")
	clustertest.Eventually(t, 10*time.Second, "both streams flow", func() bool {
		return strings.Contains(fromA.Out.String(), "tick") && strings.Contains(fromC.Out.String(), "ready")
	})
	cpid := c.KernelPid("c")
	syscall.Kill(cpid, syscall.SIGSTOP)
	c.WaitStatus("a", 5*time.Second, "unreachable", "c")
	if code := fromA.Exited(t, 5*time.Second, "a's logs -f of a run on the stopped node c"); code != 69 {
		t.Fatalf("a's logs -f of a run on the stopped node c: exit %d, want 69\n%s", code, fromA.Out.String())
	}
	syscall.Kill(cpid, syscall.SIGCONT)
	if code := fromC.Exited(t, 10*time.Second, "c's logs -f of a run on a, after c ran again"); code != 69 {
		t.Fatalf("c's logs -f of a run on a after c ran again: exit %d, want 69\n%s", code, fromC.Out.String())
	}
	c.WaitUp("a", 15*time.Second, "c")
	c.WaitUp("c", 15*time.Second, "a", "b")
	// c rejoins under a new member id after it ran again: until a has
	// seen the new one answer, a spawn there can meet the moment the old
	// id left (69, unavailable: try again). It must get through soon.
	clustertest.Eventually(t, 10*time.Second, "a spawns on c after c ran again", func() bool {
		o, code := c.CLI("a", "spawn", "as=run:afterstop", "node=c", "template=sleep 30")
		switch code {
		case 0, 75: // 75: an earlier try got there and only its answer was lost
			return true
		case 69:
			return false
		}
		t.Fatalf("spawn on c after c ran again: exit %d\n%s", code, o)
		return false
	})
	if o := c.Run("c", "inspect", "target=run:afterstop", "view=status"); !strings.Contains(o, "status=running") {
		t.Fatalf("run:afterstop on c: %s", o)
	}
}

// TestClusterForeignCertificate: a kernel of another CA (its own tls_ca
// and certificate) is listed as a peer by every member, yet none shows it,
// it can neither spawn on nor message a member, and kernel status on each
// side names the peer refused at the handshake and why.
func TestClusterForeignCertificate(t *testing.T) {
	t.Parallel()
	c := clustertest.WithCA(t, bin)
	other := filepath.Join(c.Dir, "other-ca")
	c.Run("", "cluster", "ca", "dir="+other)
	c.Run("", "cluster", "cert", "node=x", "ca="+other, "out="+c.Certs)
	c.Add("a", nil)
	c.Add("b", nil)
	c.Add("x", func(m *clustertest.Member) { // its certificate exists: from the other CA, which it trusts
		m.Config = strings.Replace(m.Config, filepath.Join(c.CA, "ca.crt"), filepath.Join(other, "ca.crt"), 1)
	})
	c.WriteConfigs()
	c.StartAll()
	c.WaitUp("a", 20*time.Second, "b")
	c.WaitUp("b", 20*time.Second, "a")
	time.Sleep(4 * time.Second) // x had every chance to be seen
	for _, n := range []string{"a", "b"} {
		if st, ok := c.Nodes(n)["x"]; ok && st == "up" {
			t.Fatalf("node %s shows the foreign kernel x up: %v", n, c.Nodes(n))
		}
	}
	if o, code := c.CLI("x", "spawn", "as=run:evil", "node=a", "template=sleep 30"); code == 0 {
		t.Fatalf("the foreign kernel spawned on a: %s", o)
	}
	if _, err := os.Stat(filepath.Join(c.Members["a"].Root, "tmp", "pi-actors", "runs", "evil")); err == nil {
		t.Fatal("a has a run dir for the foreign kernel's spawn")
	}
	for n, peer := range map[string]string{"a": "x", "b": "x", "x": "[ab]"} {
		clustertest.Eventually(t, 10*time.Second, n+"'s kernel status names the refused peer", func() bool {
			o, _ := c.CLI(n, "kernel", "status")
			return regexp.MustCompile(`cluster_tls_rejected: peer=` + peer + ` role=server count=\d+ last=\S+ reason=x509: certificate signed by unknown authority`).MatchString(o)
		})
	}
	o, _ := c.CLI("a", "kernel", "status", "--json")
	var st struct {
		Result struct {
			Cluster struct {
				Rejected []cluster.Rejected `json:"tls_rejected"`
			} `json:"cluster"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(o), &st); err != nil {
		t.Fatalf("a's kernel status --json: %v\n%s", err, o)
	}
	if r := st.Result.Cluster.Rejected; len(r) != 1 || r[0].Peer != "x" || r[0].Role != "server" || r[0].Count < 1 || r[0].Last.IsZero() {
		t.Fatalf("a's kernel status --json tls_rejected: %+v", r)
	}
}

// TestClusterBadConfig: a kernel whose [cluster] cannot work still serves
// its own machine; kernel status says why the cluster side is down, and
// calls that need the cluster exit 78 (config) or 69 (unavailable).
func TestClusterBadConfig(t *testing.T) {
	t.Parallel()
	c := clustertest.WithCA(t, bin)
	c.Add("a", nil)
	// A certificate for another node name.
	c.Add("wrongcert", func(m *clustertest.Member) {
		m.Config = strings.ReplaceAll(m.Config, "wrongcert.crt", "a.crt")
		m.Config = strings.ReplaceAll(m.Config, "wrongcert.key", "a.key")
	})
	// A bind that is not loopback, without TLS.
	c.Add("notls", func(m *clustertest.Member) {
		m.Config = fmt.Sprintf("name = \"test\"\nnode = \"notls\"\nprovider = \"automanaged\"\nmanage = \"127.0.0.1:%d\"\nbind = \"0.0.0.0:1\"\nadvertise = \"127.0.0.1:1\"\n", m.Manage)
	})
	// An etcd nobody runs.
	c.Add("noetcd", func(m *clustertest.Member) {
		m.Config = strings.Replace(m.Config, "provider = \"automanaged\"", "provider = \"etcd\"\nendpoints = [\"http://127.0.0.1:1\"]", 1)
	})
	// A bind port another process holds.
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	c.Add("busyport", func(m *clustertest.Member) {
		m.Config = strings.Replace(m.Config, "bind = \"127.0.0.1:0\"", "bind = \""+held.Addr().String()+"\"", 1)
	})
	// Its manage port held on another loopback address: the automanaged
	// provider listens on that port of every address.
	c.Add("busymanage", func(m *clustertest.Member) {
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.2:%d", m.Manage))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
	})
	c.WriteConfigs()
	c.StartAll()
	for n, want := range map[string]string{"wrongcert": `is for node`, "notls": "tls_ca", "noetcd": "etcd", "busyport": "another process has the port",
		"busymanage": "the automanaged provider listens on that port of every address"} {
		clustertest.Eventually(t, 20*time.Second, n+"'s kernel status names the cause", func() bool {
			o, _ := c.CLI(n, "kernel", "status", "--json")
			return strings.Contains(o, `"state":"down"`) && strings.Contains(o, want)
		})
		// Its own machine still works.
		c.Run(n, "spawn", "as=run:local", "template=sleep 30")
		o, code := c.CLI(n, "spawn", "as=run:far", "node=a", "template=sleep 30")
		if code != 78 && code != 69 {
			t.Fatalf("%s: spawn node=a exit %d, want 78 or 69\n%s", n, code, o)
		}
	}
	if _, code := c.CLI("wrongcert", "inspect", "target=cluster", "view=nodes"); code != 78 {
		t.Fatalf("inspect cluster on a kernel with a wrong certificate: exit %d, want 78", code)
	}
}

// TestClusterDuplicateNode: a second kernel with a member's node name
// leaves the cluster (the first one stays).
func TestClusterDuplicateNode(t *testing.T) {
	t.Parallel()
	c := clustertest.New(t, bin, "a", "b")
	dup := c.Add("b2", func(m *clustertest.Member) {
		m.Config = strings.Replace(m.Config, "node = \"b2\"", "node = \"b\"", 1)
		m.Config = strings.ReplaceAll(m.Config, "b2.crt", "b.crt")
		m.Config = strings.ReplaceAll(m.Config, "b2.key", "b.key")
	})
	_ = dup
	c.WriteConfigs()
	c.Start("b2")
	clustertest.Eventually(t, 20*time.Second, "the duplicate's status says duplicate", func() bool {
		o, _ := c.CLI("b2", "kernel", "status", "--json")
		return strings.Contains(o, "duplicate node name")
	})
	if st := c.Nodes("a")["b"]; st != "up" {
		t.Fatalf("the first b is %s on a", st)
	}

	// The same when the first b was away while the second one came, and
	// came back under a new member id (its engine starts anew): the
	// kernel started later still leaves, not the one that renewed last.
	c.Run("b2", "kernel", "stop")
	bpid := c.KernelPid("b")
	syscall.Kill(bpid, syscall.SIGSTOP)
	c.WaitStatus("a", 10*time.Second, "unreachable", "b")
	c.Start("b2")
	clustertest.Eventually(t, 20*time.Second, "the second b is a member while the first one is stopped", func() bool {
		o, _ := c.CLI("b2", "kernel", "status", "--json")
		return strings.Contains(o, `"state":"up"`)
	})
	syscall.Kill(bpid, syscall.SIGCONT)
	clustertest.Eventually(t, 30*time.Second, "the second b leaves again", func() bool {
		o, _ := c.CLI("b2", "kernel", "status", "--json")
		return strings.Contains(o, "duplicate node name")
	})
	// The first b rejoins (under a new member id after its stop: its
	// side is "starting" a moment) and stays.
	clustertest.Eventually(t, 20*time.Second, "the first b up again", func() bool {
		o, _ := c.CLI("b", "kernel", "status", "--json")
		if strings.Contains(o, "duplicate node name") {
			t.Fatalf("the first b was taken for the duplicate:\n%s", o)
		}
		return strings.Contains(o, `"state":"up"`)
	})
}

// TestClusterRoomsAndStreams: a worker on b takes part in the room of a
// coordinator run on a (claims from its branch inbox, finishes the
// message, posts a result), watches that room live from b, and a run's
// logs on b are followed from a until it ends.
func TestClusterRoomsAndStreams(t *testing.T) {
	t.Parallel()
	c := clustertest.New(t, bin, "a", "b")
	c.Run("a", "spawn", "as=run:coord", "template=sleep 120")
	c.Run("a", "message", "to=branch:coord/w1", "type=task.assign", "body:={\"task\":7}")

	// The watcher on b starts first and must see the post.
	wout := c.Background("b", "watch", "target=room:coord@a").Out

	// A bare room address resolves to the one node that has the run.
	clustertest.Eventually(t, 10*time.Second, "b knows run:coord is on a", func() bool {
		_, code := c.CLI("b", "inspect", "target=run:coord", "view=status")
		return code == 0
	})
	bout := c.Background("b", "watch", "target=room:coord").Out

	env, code := c.JSON("b", "mailbox", "claim", "address=branch:coord/w1@a", "wait=10s")
	if code != 0 {
		t.Fatalf("claim from b: exit %d %v", code, env)
	}
	res, _ := env["result"].(map[string]any)
	id, _ := res["id"].(string)
	if id == "" || !strings.Contains(fmt.Sprint(res), "task") {
		t.Fatalf("claimed %v", res)
	}
	c.Run("b", "mailbox", "done", "id="+id, "status=handled", "address=branch:coord/w1@a")
	// The answer names the node in the room's address (a bare room:coord
	// on b would be b's).
	if o := c.Run("b", "message", "to=room:coord@a", "from=branch:coord/w1", "type=task.result", "body:={\"task\":7,\"ok\":true}"); !strings.Contains(o, "to=room:coord@a ") {
		t.Fatalf("room post from b: %s", o)
	}
	clustertest.Eventually(t, 10*time.Second, "b's watch of room:coord@a shows the result", func() bool {
		return strings.Contains(wout.String(), "task.result")
	})
	clustertest.Eventually(t, 10*time.Second, "b's watch of the bare room:coord shows the result", func() bool {
		return strings.Contains(bout.String(), "task.result")
	})
	// A room of a run another node does not have: the error names the
	// node (it said run:nope, as if it were this node's).
	if o, code := c.CLI("b", "watch", "target=room:nope@a"); code != 66 || !strings.Contains(o, "run:nope@a") {
		t.Fatalf("watch of a missing room on a: exit %d\n%s", code, o)
	}
	o := c.Run("a", "inspect", "target=branch:coord/w1", "view=mailbox")
	if !strings.Contains(o, "handled") {
		t.Fatalf("the branch message is not handled on a: %s", o)
	}
	// A claim waits on the other node as long as it asked, past the
	// forward timeout (15 s), and ends as a local one does: 66, empty.
	start := time.Now()
	out, code := c.CLI("b", "mailbox", "claim", "address=branch:coord/w1@a", "wait=16s")
	if code != 66 || !strings.Contains(out, "no message arrived within 16s") || time.Since(start) < 16*time.Second {
		t.Fatalf("a 16 s claim across nodes on an empty branch: exit %d after %s\n%s", code, time.Since(start).Round(time.Millisecond), out)
	}

	// logs -f of a run on b, from a, ends with the run.
	c.Run("a", "spawn", "as=run:talk", "node=b", "template=sh -c 'for i in 1 2 3; do echo line$i; sleep 0.3; done'")
	out, code = c.CLI("a", "logs", "talk@b", "-f", "--lines=10")
	if code != 0 {
		t.Fatalf("logs -f talk@b: exit %d\n%s", code, out)
	}
	for _, want := range []string{"line1", "line2", "line3"} {
		if !strings.Contains(out, want) {
			t.Fatalf("logs -f talk@b: %s", out)
		}
	}
}

func regexpMatch(re, s string) bool { return regexp.MustCompile(re).MatchString(s) }

// TestClusterNonMemberRefused: a kernel that lists a member in its peers,
// while that member does not list it, is refused there (69, nothing
// started): the run's follow-ups could never go back to it.
func TestClusterNonMemberRefused(t *testing.T) {
	t.Parallel()
	c := clustertest.WithCA(t, bin)
	c.Add("a", nil)
	c.Add("b", nil)
	c.WriteConfigs() // a and b list each other
	x := c.Add("x", nil)
	x.Config += fmt.Sprintf("peers = [%q, %q]\n", fmt.Sprintf("127.0.0.1:%d", c.Members["a"].Manage), fmt.Sprintf("127.0.0.1:%d", x.Manage))
	if err := os.WriteFile(filepath.Join(x.Root, "pi-actors.toml"), []byte("[cluster]\n"+x.Config), 0o600); err != nil {
		t.Fatal(err)
	}
	c.StartAll()
	c.WaitUp("a", 20*time.Second, "b")
	c.WaitUp("x", 20*time.Second, "a")
	time.Sleep(2 * time.Second) // a had every chance to see x
	o, code := c.CLI("x", "spawn", "as=run:stray", "node=a", "template=sleep 30")
	if code != 69 || !strings.Contains(o, "not a member") {
		t.Fatalf("spawn from a non-member on a: exit %d: %s", code, o)
	}
	if _, err := os.Stat(filepath.Join(c.Members["a"].Root, "tmp", "pi-actors", "runs", "stray")); err == nil {
		t.Fatal("a has a run dir for the non-member's spawn")
	}
}

// TestClusterCutMemberLeavesOthersAlone: a member cut off (its remote
// port gone, its health port still answering, so the topology keeps it)
// is shown unreachable, and the other members stay as they are: none
// renews its member id over it, which ended their streams to every
// healthy member (a's logs -f of a run on b exited 69).
func TestClusterCutMemberLeavesOthersAlone(t *testing.T) {
	t.Parallel()
	c := clustertest.WithCA(t, bin)
	bindC, front := testproc.MustFreePort(t), testproc.MustFreePort(t)
	c.Add("a", nil)
	c.Add("b", nil)
	c.Add("c", func(m *clustertest.Member) {
		m.Config = strings.Replace(m.Config, `bind = "127.0.0.1:0"`, fmt.Sprintf("bind = \"127.0.0.1:%d\"\nadvertise = \"127.0.0.1:%d\"", bindC, front), 1)
	})
	cut := tcpProxy(t, fmt.Sprintf("127.0.0.1:%d", front), fmt.Sprintf("127.0.0.1:%d", bindC))
	c.WriteConfigs()
	c.StartAll()
	for _, n := range c.Order {
		c.WaitUp(n, 30*time.Second, c.Order...)
	}
	c.Run("a", "spawn", "as=run:ticker", "node=b", "template=sh -c 'while :; do echo tick; sleep 0.3; done'")
	stream := c.Background("a", "logs", "ticker@b", "-f")
	clustertest.Eventually(t, 10*time.Second, "a's stream from b flows", func() bool { return strings.Contains(stream.Out.String(), "tick") })
	cut()
	c.WaitStatus("a", 10*time.Second, "unreachable", "c")
	time.Sleep(2 * stuckAfterForTest) // well past the renewal of the old rule
	if code, ended := stream.Ended(); ended {
		t.Fatalf("a's stream from the healthy b ended (exit %d) when c was cut off\n%s", code, stream.Out.String())
	}
	for _, n := range []string{"a", "b"} {
		log, _ := os.ReadFile(filepath.Join(c.Root(n), "tmp", "pi-actors", "kernel.log"))
		if strings.Contains(string(log), "new member id") {
			t.Errorf("%s renewed its member id over the cut-off c:\n%s", n, log)
		}
	}
	c.WaitUp("a", 5*time.Second, "b")
}

// stuckAfterForTest is the directory's stuckAfter (3 s), for the test's
// waits.
const stuckAfterForTest = 3 * time.Second

// tcpProxy forwards from to to until the returned cut closes it and every
// connection through it.
func tcpProxy(t *testing.T, from, to string) (cut func()) {
	ln, err := net.Listen("tcp", from)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", to)
			if err != nil {
				in.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, in, out)
			mu.Unlock()
			go func() { io.Copy(out, in); out.Close() }()
			go func() { io.Copy(in, out); in.Close() }()
		}
	}()
	var once sync.Once
	cut = func() {
		once.Do(func() {
			ln.Close()
			mu.Lock()
			for _, c := range conns {
				c.Close()
			}
			mu.Unlock()
		})
	}
	t.Cleanup(cut)
	return cut
}
