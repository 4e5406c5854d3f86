package actors_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/pprof"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pi-actors/pi-actors/actors"
	"github.com/pi-actors/pi-actors/internal/config"
	"github.com/pi-actors/pi-actors/internal/testproc"
	"github.com/pi-actors/pi-actors/runs"
	"github.com/pi-actors/pi-actors/verbs/wire"
)

// piActors is a pi-actors binary built for these tests: the kernel starts
// `pi-actors supervise <dir>` for every run.
var piActors string

// TestMain builds the supervisor binary, and doubles as the helper
// processes run leaves start (internal/testproc).
func TestMain(m *testing.M) {
	testproc.NoRaceExitSleep()
	if os.Getenv(testproc.EnvVar) != "" {
		testproc.Main(os.Args[1:])
	}
	testproc.Watchdog()
	dir, err := os.MkdirTemp("", "pa-kernel-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	piActors = filepath.Join(dir, "pi-actors")
	build := exec.Command("go", "build", "-o", piActors, "../cmd/pi-actors")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build pi-actors:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// kernel is one kernel run by a test, in this process.
type kernel struct {
	t     *testing.T
	agent string
	stop  context.CancelFunc
	done  chan error
}

// newAgent returns a short agent root (socket paths are limited) that is
// removed, and whose runs are killed, when the test ends.
func newAgent(t *testing.T) string {
	t.Helper()
	agent, err := os.MkdirTemp("", "pak")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		killRuns(agent)
		os.RemoveAll(agent)
	})
	return agent
}

// killRuns kills every supervisor of the agent root and its session.
func killRuns(agent string) {
	filepath.WalkDir(runs.Root(agent), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != runs.RunFile {
			return nil
		}
		if m, err := runs.Dir(filepath.Dir(p)).Meta(); err == nil && m.Pid > 0 {
			runs.KillAll(runs.SessionMembers(m.Pid), syscall.SIGKILL)
		}
		return nil
	})
	// Supervisors an in-process kernel started are our children: reap them.
	for {
		pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			break
		}
	}
}

// settings are the defaults with a short kill grace.
func settings(edit func(*config.Config)) config.Config {
	c := config.Defaults()
	c.Exec.KillGraceMS = 300
	if edit != nil {
		edit(&c)
	}
	return c
}

// startKernel runs a kernel for agent until stopped (or the test ends).
func startKernel(t *testing.T, agent string, cfg config.Config) *kernel {
	t.Helper()
	return startKernelConfig(t, actors.Config{AgentDir: agent, Settings: cfg})
}

// startKernelConfig runs a kernel of cfg (its supervisor and version
// set here) in this process until the test ends.
func startKernelConfig(t *testing.T, cfg actors.Config) *kernel {
	t.Helper()
	cfg.Supervisor, cfg.Version = []string{piActors, "supervise"}, "test"
	ctx, cancel := context.WithCancel(context.Background())
	k := &kernel{t: t, agent: cfg.AgentDir, stop: cancel, done: make(chan error, 1)}
	go func() { k.done <- actors.Run(ctx, cfg) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		if c, err := wire.Dial(cfg.AgentDir, time.Second); err == nil {
			c.Close()
			break
		}
		select {
		case err := <-k.done:
			t.Fatalf("kernel exited: %v", err)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("kernel did not answer within 10 s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Cleanup(k.shutdown)
	return k
}

// shutdown stops the kernel and waits for it (runs keep running).
func (k *kernel) shutdown() {
	k.stop()
	select {
	case <-k.done:
		k.done <- nil // later calls return at once
	case <-time.After(10 * time.Second):
		k.t.Errorf("kernel did not stop")
	}
}

// callTimeout bounds every request: a kernel that stops answering fails
// the test with a dump of its goroutines (it runs in this process)
// instead of hanging until the test binary's timeout.
const callTimeout = 30 * time.Second

// call sends one request as session.
func (k *kernel) call(op, session string, params map[string]any, items ...map[string]any) *wire.Response {
	k.t.Helper()
	return callConn(k.t, k.agent, wire.Request{Op: op, Session: session, Cwd: k.agent, Env: append(os.Environ(), testproc.EnvVar+"=1"), Params: rawParams(params), Items: rawItems(items)})
}

// rawParams encodes a request's parameters (nil stays absent).
func rawParams(params map[string]any) json.RawMessage {
	if params == nil {
		return nil
	}
	b, err := json.Marshal(params)
	if err != nil {
		panic(err)
	}
	return b
}

func rawItems(items []map[string]any) []json.RawMessage {
	var out []json.RawMessage
	for _, it := range items {
		out = append(out, rawParams(it))
	}
	return out
}

// resultMap decodes a response's result as a JSON object.
func resultMap(t *testing.T, resp *wire.Response) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(resp.Result, &m); err != nil {
		t.Fatalf("result %s: %v", resp.Result, err)
	}
	return m
}

// callConn sends one request on a new connection, bounded by callTimeout.
func callConn(t *testing.T, agent string, req wire.Request) *wire.Response {
	t.Helper()
	c, err := wire.Dial(agent, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	type answer struct {
		resp *wire.Response
		err  error
	}
	ch := make(chan answer, 1)
	go func() {
		resp, err := c.Call(req)
		ch <- answer{resp, err}
	}()
	select {
	case a := <-ch:
		if a.err != nil {
			t.Fatalf("%s: %v", req.Op, a.err)
		}
		return a.resp
	case <-time.After(callTimeout):
		var b strings.Builder
		pprof.Lookup("goroutine").WriteTo(&b, 2)
		t.Fatalf("%s: no answer from the kernel within %s; goroutines:\n%s", req.Op, callTimeout, b.String())
		return nil
	}
}

// spawnParams spawns a helper leaf: {bin} args...
func spawnParams(id string, args string, values map[string]any) map[string]any {
	v := map[string]any{"bin": os.Args[0]}
	for k, x := range values {
		v[k] = x
	}
	return map[string]any{"as": "run:" + id, "template": "{bin} " + args, "values": v}
}

func (k *kernel) spawn(session, id, args string, values map[string]any) map[string]any {
	k.t.Helper()
	resp := k.call("spawn", session, spawnParams(id, args, values))
	if resp.Error != nil {
		k.t.Fatalf("spawn run:%s: %+v", id, resp.Error)
	}
	return resultMap(k.t, resp)
}

// liveRuns reads the kernel's live run count.
func (k *kernel) liveRuns() int {
	k.t.Helper()
	resp := k.call("status", "", nil)
	n, _ := resultMap(k.t, resp)["live_runs"].(float64)
	return int(n)
}

func (k *kernel) waitIdle() {
	k.t.Helper()
	eventually(k.t, 15*time.Second, "no live runs", func() bool { return k.liveRuns() == 0 })
}

// followups drains the session's queue.
func (k *kernel) followups(session string) []actors.Followup {
	k.t.Helper()
	resp := k.call("followups", session, nil)
	if resp.Error != nil {
		k.t.Fatalf("followups: %+v", resp.Error)
	}
	var out struct{ Followups []actors.Followup }
	b := []byte(resp.Result)
	if err := json.Unmarshal(b, &out); err != nil {
		k.t.Fatal(err)
	}
	return out.Followups
}

func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", d, what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func transitions(fs []actors.Followup) map[string][]string {
	out := map[string][]string{}
	for _, f := range fs {
		if f.Kind == "transition" {
			out[f.Run] = append(out[f.Run], f.Status)
		}
	}
	return out
}

// Concurrent spawns of one id (a batch): exactly one starts, the others
// are refused as busy (75) and start nothing.
func TestSpawnSameIDConcurrently(t *testing.T) {
	agent := newAgent(t)
	k := startKernel(t, agent, settings(nil))
	var items []map[string]any
	for i := 0; i < 8; i++ {
		items = append(items, spawnParams("dup", "sleep-forever", nil))
	}
	resp := k.call("spawn", "s1", nil, items...)
	ok, busy := 0, 0
	for _, r := range resp.Results {
		switch {
		case r.Error == nil:
			ok++
		case r.Error.Exit == 75:
			busy++
		default:
			t.Errorf("unexpected error %+v", r.Error)
		}
	}
	if ok != 1 || busy != 7 {
		t.Fatalf("%d started, %d busy; want 1 and 7", ok, busy)
	}
	if n := k.liveRuns(); n != 1 {
		t.Fatalf("live runs %d, want 1", n)
	}
}

// Every kernel-side refusal carries its sysexits code.
func TestKernelErrorExitCodes(t *testing.T) {
	agent := newAgent(t)
	k := startKernel(t, agent, settings(func(c *config.Config) { c.Runs.MaxLivePerSession = 1 }))
	k.spawn("s1", "own", "sleep-forever", nil)
	cases := []struct {
		name, op, session string
		params            map[string]any
		exit              int
		code              string
	}{
		{"unknown run", "message", "s1", map[string]any{"to": "run:nope", "type": "task.assign"}, 66, "not_found"},
		{"no type", "message", "s1", map[string]any{"to": "run:own"}, 65, ""},
		{"bad address", "message", "s1", map[string]any{"to": "run:../x", "type": "task.assign"}, 65, ""},
		{"bad metadata", "message", "s1", map[string]any{"to": "run:own", "type": "task.assign", "metadata": []any{1}}, 65, ""},
		{"other session", "message", "s2", map[string]any{"to": "run:own", "type": "control.kill"}, 77, "session_mismatch"},
		{"traversal id", "spawn", "s3", spawnParams("..", "exit 0", nil), 65, ""},
		{"slash id", "spawn", "s3", map[string]any{"run_id": "a/b", "template": "true"}, 65, ""},
		{"busy id", "spawn", "s3", spawnParams("own", "exit 0", nil), 75, "busy"},
		{"live limit", "spawn", "s1", spawnParams("second", "exit 0", nil), 75, "limit_exceeded"},
		{"bad restart", "spawn", "s3", map[string]any{"as": "run:r", "template": "true", "restart": "sometimes"}, 65, ""},
	}
	for _, c := range cases {
		resp := k.call(c.op, c.session, c.params)
		if resp.Error == nil {
			t.Errorf("%s: succeeded: %v", c.name, resp.Result)
			continue
		}
		if resp.Error.Exit != c.exit || (c.code != "" && resp.Error.Code != c.code) {
			t.Errorf("%s: exit %d code %s (%s), want %d %s", c.name, resp.Error.Exit, resp.Error.Code, resp.Error.Message, c.exit, c.code)
		}
	}
	// The denial says whose run it is.
	resp := k.call("message", "s2", map[string]any{"to": "run:own", "type": "task.assign"})
	d, _ := resp.Error.Details.(map[string]any)
	if d["owner_session"] != "s1" || d["current_session"] != "s2" || !strings.Contains(resp.Error.Hint, "session:s1") {
		t.Errorf("denial details %v hint %q", d, resp.Error.Hint)
	}
	// Nothing was created for the refused spawns.
	for _, id := range []string{"second", "r", "x"} {
		if _, err := os.Stat(runs.StateDirFor(agent, id).Path(runs.RunFile)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("run:%s has a state dir after a refused spawn", id)
		}
	}
	if _, err := os.Stat(filepath.Join(agent, "tmp", "pi-actors", "x")); err == nil {
		t.Error("a traversal id created a directory")
	}
}

// A nested spawn one level past runs.max_depth is refused (65).
func TestSpawnDepthLimit(t *testing.T) {
	agent := newAgent(t)
	k := startKernel(t, agent, settings(func(c *config.Config) { c.Runs.MaxDepth = 2 }))
	for depth, wantOK := range map[int]bool{0: true, 1: true, 2: false} {
		id := fmt.Sprintf("d%d", depth)
		resp := callConn(t, agent, wire.Request{Op: "spawn", Session: "s1", Cwd: agent,
			Env: append(os.Environ(), testproc.EnvVar+"=1", fmt.Sprintf("PI_ACTORS_DEPTH=%d", depth)), Params: rawParams(spawnParams(id, "exit 0", nil))})
		if wantOK != (resp.Error == nil) {
			t.Errorf("caller depth %d: error %+v, want ok=%v", depth, resp.Error, wantOK)
		}
		if !wantOK && resp.Error != nil && (resp.Error.Exit != 65 || !strings.Contains(resp.Error.Message, "max_depth")) {
			t.Errorf("caller depth %d: %+v", depth, resp.Error)
		}
	}
	k.waitIdle()
}

// Many runs ending at once, drained by several concurrent consumers: each
// transition is handed out exactly once, only to its owner.
func TestFollowupsExactlyOnceUnderConcurrentDrains(t *testing.T) {
	agent := newAgent(t)
	k := startKernel(t, agent, settings(nil))
	const n = 12
	var items []map[string]any
	want := map[string]string{}
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("r%02d", i)
		items = append(items, spawnParams(id, fmt.Sprintf("exit %d", i%2), nil))
		want[id] = map[bool]string{true: runs.StatusDone, false: runs.StatusFailed}[i%2 == 0]
	}
	for _, r := range k.call("spawn", "s1", nil, items...).Results {
		if r.Error != nil {
			t.Fatalf("spawn: %+v", r.Error)
		}
	}
	k.spawn("s2", "theirs", "exit 0", nil)
	k.spawn("", "nobody", "exit 0", nil)
	k.waitIdle()

	var (
		mu  sync.Mutex
		got []actors.Followup
		wg  sync.WaitGroup
	)
	for w := 0; w < 4; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				c, err := wire.Dial(agent, time.Second)
				if err != nil {
					t.Error(err)
					return
				}
				resp, err := c.Call(wire.Request{Op: "followups", Session: "s1"})
				c.Close()
				if err != nil || resp.Error != nil {
					t.Errorf("followups: %v %+v", err, resp.Error)
					return
				}
				var out struct{ Followups []actors.Followup }
				b := []byte(resp.Result)
				json.Unmarshal(b, &out)
				mu.Lock()
				got = append(got, out.Followups...)
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	tr := transitions(got)
	if len(tr) != n {
		t.Errorf("transitions for %d runs, want %d: %v", len(tr), n, tr)
	}
	for id, st := range want {
		if len(tr[id]) != 1 || tr[id][0] != st {
			t.Errorf("run:%s transitions %v, want exactly one %s", id, tr[id], st)
		}
	}
	ids := map[string]int{}
	for _, f := range got {
		ids[f.ID]++
		if ids[f.ID] > 1 {
			t.Errorf("follow-up %s handed out twice", f.ID)
		}
	}
	if tr := transitions(k.followups("s2")); len(tr) != 1 || len(tr["theirs"]) != 1 {
		t.Errorf("s2 transitions %v, want its one run", tr)
	}
	// The unowned run raised nothing in any queue.
	ents, _ := os.ReadDir(filepath.Join(agent, "tmp", "pi-actors", "sessions"))
	for _, e := range ents {
		data, _ := os.ReadFile(filepath.Join(agent, "tmp", "pi-actors", "sessions", e.Name()))
		if strings.Contains(string(data), `"run":"nobody"`) {
			t.Errorf("%s holds a follow-up of the unowned run", e.Name())
		}
	}
}

// The kernel stops while two runs are live; one ends while no kernel
// runs, the other after a new kernel re-attached it. Each follow-up is
// queued exactly once, and a third kernel adds nothing.
func TestKernelRestartDeliversOnce(t *testing.T) {
	agent := newAgent(t)
	gate := func(name string) string { return filepath.Join(agent, name) }
	waiter := func(id, g string) map[string]any {
		return map[string]any{"as": "run:" + id, "template": "sh -c {s}",
			"values": map[string]any{"s": "while [ ! -e " + g + " ]; do sleep 0.02; done; echo " + id}}
	}
	k1 := startKernel(t, agent, settings(nil))
	for id, g := range map[string]string{"late": gate("g1"), "live": gate("g2")} {
		if resp := k1.call("spawn", "s1", waiter(id, g)); resp.Error != nil {
			t.Fatalf("spawn: %+v", resp.Error)
		}
	}
	k1.shutdown()

	os.WriteFile(gate("g1"), nil, 0o600)
	late := runs.StateDirFor(agent, "late")
	eventually(t, 10*time.Second, "run:late result", func() bool { return late.Result() != nil })

	k2 := startKernel(t, agent, settings(nil))
	if n := k2.liveRuns(); n != 1 {
		t.Fatalf("live runs after restart %d, want run:live re-attached", n)
	}
	os.WriteFile(gate("g2"), nil, 0o600)
	k2.waitIdle()
	tr := transitions(k2.followups("s1"))
	for _, id := range []string{"late", "live"} {
		if len(tr[id]) != 1 || tr[id][0] != runs.StatusDone {
			t.Errorf("run:%s transitions %v, want exactly one done", id, tr[id])
		}
		if res := runs.StateDirFor(agent, id).Result(); res == nil || res.Status != runs.StatusDone {
			t.Errorf("run:%s result %+v", id, res)
		}
	}
	k2.shutdown()

	k3 := startKernel(t, agent, settings(nil))
	if tr := transitions(k3.followups("s1")); len(tr) != 0 {
		t.Errorf("a third kernel queued %v again", tr)
	}
}

// watch streams the session's follow-ups as they are queued.
func TestWatchStreamsFollowups(t *testing.T) {
	agent := newAgent(t)
	k := startKernel(t, agent, settings(nil))
	c, err := wire.Dial(agent, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Send(wire.Request{Op: "watch", Session: "s1"}); err != nil {
		t.Fatal(err)
	}
	if ack, err := c.Read(); err != nil || ack.Error != nil {
		t.Fatalf("watch ack: %v %+v", err, ack)
	}
	k.spawn("s1", "w", "exit 0", nil)
	got := make(chan actors.Followup, 4)
	go func() {
		for {
			resp, err := c.Read()
			if err != nil {
				close(got)
				return
			}
			var f actors.Followup
			b := []byte(resp.Result)
			if json.Unmarshal(b, &f) == nil && f.Kind != "" {
				got <- f
			}
		}
	}()
	select {
	case f := <-got:
		if f.Kind != "transition" || f.Run != "w" || f.Status != runs.StatusDone {
			t.Fatalf("streamed %+v, want run:w done", f)
		}
	case <-time.After(15 * time.Second):
		t.Fatal("no follow-up streamed")
	}
	// Handed over: the queue no longer holds it.
	if fs := k.followups("s1"); len(fs) != 0 {
		t.Errorf("still queued after watch delivered it: %v", fs)
	}
}

// A run killed by a batch `message -` and spawned again by another client
// while the batch is still recording its kills: the new run must not be
// marked killed by the old run's result.
func TestRespawnDuringBatchKill(t *testing.T) {
	agent := newAgent(t)
	k := startKernel(t, agent, settings(func(c *config.Config) { c.Runs.MaxLivePerSession = 100 }))
	const n = 40
	for round := range 3 {
		var items []map[string]any
		for i := range n {
			id := fmt.Sprintf("b%d-%d", round, i)
			k.spawn("s1", id, "sleep-forever", nil)
			items = append(items, map[string]any{"to": "run:" + id, "type": "control.kill"})
		}
		last := fmt.Sprintf("b%d-%d", round, n-1)
		killed := make(chan *wire.Response, 1)
		go func() { killed <- k.call("message", "s1", nil, items...) }()
		// Spawn the batch's last run again as soon as it is free.
		deadline := time.Now().Add(10 * time.Second)
		for {
			resp := k.call("spawn", "s1", spawnParams(last, "sleep-forever", nil))
			if resp.Error == nil {
				break
			}
			if resp.Error.Exit != 75 || time.Now().After(deadline) {
				t.Fatalf("respawn run:%s: %+v", last, resp.Error)
			}
			time.Sleep(time.Millisecond)
		}
		if resp := <-killed; resp.Error != nil {
			t.Fatalf("kill batch: %+v", resp.Error)
		}
		in, err := runs.Load(runs.StateDirFor(agent, last))
		if err != nil {
			t.Fatal(err)
		}
		if in.Status != runs.StatusRunning || in.Result != nil {
			t.Fatalf("round %d: the respawned run:%s is %s (result %+v), want running", round, last, in.Status, in.Result)
		}
		k.call("message", "s1", map[string]any{"to": "run:" + last, "type": "control.kill"})
		k.waitIdle()
	}
}

// Kills of one run that meet (a workflow's nodes are killed by its kill
// and by its end; a batch may name a run twice) are one kill: its events
// hold one run.kill, and a kill that came while another was under way is
// told the run is stopped and is handled with it. A kill after the run
// ended is a message to an ended run, as ever.
func TestConcurrentKillsAreOneKill(t *testing.T) {
	agent := newAgent(t)
	k := startKernel(t, agent, settings(nil))
	check := func(id string, answers []*wire.Response) {
		t.Helper()
		dir := runs.StateDirFor(agent, id)
		inbox, _ := os.ReadFile(dir.Path(runs.InboxFile))
		for _, r := range answers {
			if r.Error != nil {
				t.Fatalf("kill run:%s: %+v", id, r.Error)
			}
			m := resultMap(t, r)
			applied := m["reason"] == "control_applied" && m["stopped"] == true
			if ended := m["reason"] == "run_not_running" && m["status"] == runs.StatusKilled; !applied && !ended {
				t.Fatalf("kill run:%s answered %v, want control_applied stopped (or run_not_running after it ended)", id, m)
			}
			handled := regexp.MustCompile(fmt.Sprintf(`"id":"%s"[^\n]*"status":"handled"`, m["inbox_id"])).Match(inbox)
			if applied != handled {
				t.Fatalf("kill run:%s answered %v; its inbox record handled=%v:\n%s", id, m, handled, inbox)
			}
		}
		ev, _ := os.ReadFile(dir.Path(runs.EventsFile))
		if n := strings.Count(string(ev), `"event":"run.kill"`); n != 1 {
			t.Fatalf("run:%s has %d run.kill events, want 1:\n%s", id, n, ev)
		}
		if in, err := runs.Load(dir); err != nil || in.Status != runs.StatusKilled {
			t.Fatalf("run:%s: %v %v", id, in, err)
		}
	}
	for round := range 3 {
		id := fmt.Sprintf("many%d", round)
		k.spawn("s1", id, "sleep-forever", nil)
		answers := make([]*wire.Response, 4)
		var wg sync.WaitGroup
		for i := range answers {
			wg.Go(func() {
				answers[i] = k.call("message", "s1", map[string]any{"to": "run:" + id, "type": "control.kill"})
			})
		}
		wg.Wait()
		check(id, answers)
	}

	k.spawn("s1", "twice", "sleep-forever", nil)
	kill := map[string]any{"to": "run:twice", "type": "control.kill"}
	resp := k.call("message", "s1", nil, kill, kill)
	if resp.Error != nil || len(resp.Results) != 2 {
		t.Fatalf("batch: %+v", resp)
	}
	check("twice", []*wire.Response{&resp.Results[0], &resp.Results[1]})
}

// A run's environment names the agent root of the kernel that supervises
// it, whatever root the caller's environment named (a spawn routed from
// another cluster member carries that member's).
func TestRunEnvNamesTheKernelsRoot(t *testing.T) {
	agent := newAgent(t)
	k := startKernel(t, agent, settings(nil))
	env := append(os.Environ(), testproc.EnvVar+"=1", "PI_CODING_AGENT_DIR=/elsewhere/agent")
	resp := callConn(t, agent, wire.Request{Op: "spawn", Session: "s1", Cwd: agent, Env: env,
		Params: rawParams(map[string]any{"as": "run:root", "template": "sh -c 'echo root=$PI_CODING_AGENT_DIR'"})})
	if resp.Error != nil {
		t.Fatalf("spawn: %+v", resp.Error)
	}
	dir := runs.StateDirFor(agent, "root")
	deadline := time.Now().Add(10 * time.Second)
	for dir.Result() == nil && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	out, err := os.ReadFile(dir.Path(runs.StdoutLog))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.TrimSpace(string(out)), "root="+agent; got != want {
		t.Errorf("the run printed %q, want %q", got, want)
	}
	k.waitIdle()
}

// A kernel's start removes stale temporary entries (24 h) but keeps what
// lives in <agent>/tmp/pi-actors for good, whatever its directory's age:
// the sessions' causal records, capture spools and the graph hints of
// stores that still exist.
func TestStartKeepsDurableTempEntries(t *testing.T) {
	agent := newAgent(t)
	k := startKernel(t, agent, settings(nil))
	k.spawn("s1", "a", "exit 0", nil)
	k.shutdown()
	tmp := wire.TmpDir(agent)
	store := filepath.Join(t.TempDir(), "knowledge.db")
	os.WriteFile(store, nil, 0o600)
	files := []struct {
		path, body string
		kept       bool
	}{
		{"trace/s1.jsonl", "", true}, // written by the spawn
		{"capture/0123.jsonl", "{}\n", true},
		{"hints/0123.json", `{"store":"` + store + `"}`, true},
		{"hints/4567.json", `{"store":"` + store + `.gone"}`, false},
		{"outputs/tool-output-1/exec-stdout.txt", "out\n", false},
		// The coordinator's logs: kept, each trimmed to its newest records.
		{"dead_letters.jsonl", numbered(actors.LogKeep + 5), true},
		{"tool_messages.jsonl", numbered(3), true},
	}
	old := time.Now().Add(-48 * time.Hour)
	for _, f := range files {
		p := filepath.Join(tmp, f.path)
		if f.body != "" {
			if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(f.body), 0o600); err != nil {
				t.Fatal(err)
			}
		} else if _, err := os.Stat(p); err != nil {
			t.Fatalf("the spawn wrote no %s: %v", f.path, err)
		}
		for d := f.path; d != "."; d = filepath.Dir(d) {
			os.Chtimes(filepath.Join(tmp, d), old, old)
		}
	}
	// Its first answer comes after the start's clean-up.
	startKernel(t, agent, settings(nil)).liveRuns()
	for _, f := range files {
		_, err := os.Stat(filepath.Join(tmp, f.path))
		if f.kept && err != nil {
			t.Errorf("%s removed at the kernel's start: %v", f.path, err)
		}
		if !f.kept && err == nil {
			t.Errorf("stale %s kept", f.path)
		}
	}
	for name, want := range map[string]string{"dead_letters.jsonl": numbered(actors.LogKeep + 5)[len(numbered(5)):], "tool_messages.jsonl": numbered(3)} {
		if b, _ := os.ReadFile(filepath.Join(tmp, name)); string(b) != want {
			t.Errorf("%s after the start: %d lines, want the newest %d", name, strings.Count(string(b), "\n"), strings.Count(want, "\n"))
		}
	}
}

// numbered is n JSONL records, {"id":"1"} to {"id":"n"}.
func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "{\"id\":\"%d\"}\n", i)
	}
	return b.String()
}

// watchFollowups connects a watcher of session s1 (ack: it acknowledges)
// and streams the ids of the follow-ups it is handed.
func watchFollowups(t *testing.T, agent string, ack bool) (*wire.Conn, <-chan string) {
	t.Helper()
	c, err := wire.Dial(agent, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.Send(wire.Request{Op: "watch", Session: "s1", Ack: ack}); err != nil {
		t.Fatal(err)
	}
	if resp, err := c.Read(); err != nil || resp.Error != nil {
		t.Fatalf("watch: %v %+v", err, resp)
	}
	got := make(chan string, 16)
	go func() {
		defer close(got)
		for {
			resp, err := c.Read()
			if err != nil {
				return
			}
			var f actors.Followup
			if json.Unmarshal([]byte(resp.Result), &f) == nil && f.ID != "" {
				got <- f.ID
			}
		}
	}()
	return c, got
}

func nextID(t *testing.T, got <-chan string, within time.Duration) string {
	t.Helper()
	select {
	case id, ok := <-got:
		if !ok {
			t.Fatal("the watcher ended")
		}
		return id
	case <-time.After(within):
		t.Fatalf("no follow-up within %s", within)
	}
	return ""
}

// A follow-up handed to a watcher that acknowledges and never does goes
// back to the queue after ackWait while the watcher stays connected, and
// one given back (its watcher hung up) reaches a watcher that is already
// connected: it was held until the watcher hung up, and then only a new
// watcher got it.
func TestUnacknowledgedFollowupsComeBack(t *testing.T) {
	defer actors.SetAckWait(600 * time.Millisecond)()
	agent := newAgent(t)
	k := startKernel(t, agent, settings(nil))
	a, fromA := watchFollowups(t, agent, true)
	_, fromB := watchFollowups(t, agent, false)
	k.spawn("s1", "w", "exit 0", nil)
	first := nextID(t, fromA, 15*time.Second)
	// Not acknowledged: after ackWait it comes again (the first watcher
	// is the one the session hands follow-ups to).
	if again := nextID(t, fromA, 5*time.Second); again != first {
		t.Fatalf("after ackWait the watcher got %s, want %s again", again, first)
	}
	// It hangs up unacknowledged: the other watcher, connected all along,
	// gets it at once.
	a.Close()
	if got := nextID(t, fromB, 5*time.Second); got != first {
		t.Fatalf("the other watcher got %s, want %s", got, first)
	}
	if fs := k.followups("s1"); len(fs) != 0 {
		t.Errorf("still queued after the second watcher took it: %v", fs)
	}
}
