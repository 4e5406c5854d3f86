// Command msgbench is the measuring helper of scripts/bench-messages.sh:
// each figure of the message layer is a subcommand that prints key=value
// lines (times in ms with three decimals, rates per second) for the
// script to read; progress and problems go to stderr. It talks to a
// running kernel through verbs/wire, as the front doors do, and reads
// inboxes and rooms with the mailbox and rooms packages.
//
//	msgbench latency AGENT RUN N [VIA NODE] send (wire) → claimed by a waiting claimer (inotify wake), run inbox and branch inbox;
//	                                        with VIA, sent through the kernel of agent root VIA to run:RUN@NODE (a cluster)
//	msgbench routed VIA NODE RUN N          N `inspect target=run:RUN view=status` through VIA's kernel answered by NODE's (op verb), and the same
//	                                        asked of NODE's own kernel (AGENT of NODE = VIA's sibling given as NODE's root in $NODE_AGENT)
//	msgbench writers BIN AGENT W N TO [FROM] W processes of `BIN message -` with N messages each to TO
//	msgbench appends N                      N rooms.Post appends to a fresh room in this process
//	msgbench fanout AGENT RUN SUBS N        N posts through the kernel; each until SUBS watch_room streams have it
//	msgbench upward AGENT RUN N             N messages from run:RUN to its coordinator (wire) → each until the session's watch stream has it
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/pi-actors/pi-actors/internal/dirwatch"
	"github.com/pi-actors/pi-actors/mailbox"
	"github.com/pi-actors/pi-actors/rooms"
	"github.com/pi-actors/pi-actors/runs"
	"github.com/pi-actors/pi-actors/verbs"
	"github.com/pi-actors/pi-actors/verbs/wire"
)

func main() {
	if len(os.Args) < 2 {
		fatalf("usage: msgbench latency|writers|appends|fanout …")
	}
	a := os.Args[2:]
	switch os.Args[1] {
	case "latency":
		need(a, 3)
		via, node := a[0], ""
		if len(a) >= 5 {
			via, node = a[3], a[4]
		}
		latency(a[0], a[1], atoi(a[2]), via, node)
	case "routed":
		need(a, 4)
		routed(a[0], a[1], a[2], atoi(a[3]))
	case "writers":
		need(a, 5)
		from := ""
		if len(a) > 5 {
			from = a[5]
		}
		writers(a[0], a[1], atoi(a[2]), atoi(a[3]), a[4], from)
	case "appends":
		need(a, 1)
		appends(atoi(a[0]))
	case "fanout":
		need(a, 4)
		fanout(a[0], a[1], atoi(a[2]), atoi(a[3]))
	case "upward":
		need(a, 3)
		upward(a[0], a[1], atoi(a[2]))
	default:
		fatalf("unknown subcommand %s", os.Args[1])
	}
}

// latency: a claimer waits (inotify on the inbox's directory, as
// `pi-actors mailbox claim` does); the message is sent through the
// kernel; the time is from the send to the claim. Run inbox, then a
// branch inbox of the same run.
func latency(agent, run string, n int, via, node string) {
	dir := runs.StateDirFor(agent, run)
	conn := dial(via)
	defer conn.Close()
	at := ""
	if node != "" {
		at = "@" + node
	}
	for _, route := range []struct{ name, to, watch string }{
		{"run", "run:" + run, string(dir)},
		{"branch", "branch:" + run + "/lat", rooms.BranchDir(string(dir), "lat")},
	} {
		claim := func() (mailbox.Record, error) { return verbs.ClaimRunMessage(dir, "bench") }
		if route.name == "branch" {
			claim = func() (mailbox.Record, error) { return rooms.ClaimBranch(string(dir), route.to, "bench", os.Getpid()) }
		}
		send(conn, map[string]any{"to": route.to + at, "type": "bench.warm"}) // creates the inbox and its directory
		for r, _ := claim(); r != nil; r, _ = claim() {
		}
		var samples, sent []float64
		for i := range n {
			ready, got := make(chan struct{}), make(chan time.Time, 1)
			go func() { got <- waitClaim(route.watch, claim, ready) }()
			<-ready
			start := time.Now()
			send(conn, map[string]any{"to": route.to + at, "type": "bench.ping", "body": i})
			sent = append(sent, ms(time.Since(start)))
			at := <-got
			samples = append(samples, ms(at.Sub(start)))
		}
		p, ps := pct(samples), pct(sent)
		fmt.Printf("%s_send_p50_ms=%.3f\n", route.name, ps(50))
		fmt.Printf("%s_p50_ms=%.3f\n%s_p99_ms=%.3f\n%s_max_ms=%.3f\n%s_n=%d\n", route.name, p(50), route.name, p(99), route.name, p(100), route.name, len(samples))
	}
}

// routed times a routed inspect: through via's kernel to node's (the
// cluster path), then the same verb asked of node's own kernel
// ($NODE_AGENT, the baseline without the cluster), over the socket, so
// no CLI start is counted.
func routed(via, node, run string, n int) {
	params, _ := json.Marshal(map[string]any{"verb": "inspect", "params": map[string]any{"target": "run:" + run, "view": "status"}})
	for _, side := range []struct{ name, agent, node string }{{"routed", via, node}, {"direct", os.Getenv("NODE_AGENT"), ""}} {
		if side.agent == "" {
			continue
		}
		c := dial(side.agent)
		var samples []float64
		for range n + 5 {
			start := time.Now()
			r, err := c.Call(wire.Request{Op: "verb", Session: os.Getenv("PI_ACTORS_SESSION"), Params: params, Node: side.node})
			if err != nil || r.Error != nil {
				fatalf("%s inspect: %v %v", side.name, err, r.Error)
			}
			samples = append(samples, ms(time.Since(start)))
		}
		c.Close()
		p := pct(samples[5:])
		fmt.Printf("%s_p50_ms=%.3f\n%s_p99_ms=%.3f\n", side.name, p(50), side.name, p(99))
	}
}

// waitClaim claims one message, woken by inotify on dir as `mailbox
// claim` is (a file written and closed; a 250 ms poll backs it up), and
// returns when it was claimed.
func waitClaim(dir string, claim func() (mailbox.Record, error), ready chan struct{}) time.Time {
	w, err := dirwatch.New()
	if err != nil {
		fatalf("inotify: %v", err)
	}
	defer w.Close()
	if err := w.Add(dir, dirwatch.Written); err != nil {
		fatalf("watch %s: %v", dir, err)
	}
	close(ready)
	for {
		rec, err := claim()
		if err != nil {
			fatalf("claim: %v", err)
		}
		if rec != nil {
			return time.Now()
		}
		select {
		case <-w.Events():
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// writers starts w CLI processes, each sending n messages to `to` as one
// `message -` batch, and reports the sustained rate.
func writers(bin, agent string, w, n int, to, from string) {
	inputs := make([][]byte, w)
	for i := range inputs {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		for j := range n {
			m := map[string]any{"to": to, "type": "bench.load", "body": j}
			if from != "" {
				m["from"] = from
			}
			enc.Encode(m)
		}
		inputs[i] = b.Bytes()
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	failed := 0
	var mu sync.Mutex
	start := time.Now()
	for i := range w {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cmd := exec.CommandContext(ctx, bin, "message", "-")
			cmd.Env = append(os.Environ(), "PI_CODING_AGENT_DIR="+agent)
			cmd.Stdin = bytes.NewReader(inputs[i])
			out, err := cmd.Output()
			if err != nil || bytes.Count(out, []byte("message=sent")) != n {
				mu.Lock()
				failed++
				mu.Unlock()
				fmt.Fprintf(os.Stderr, "writer %d: %v: %.200s\n", i, err, out)
			}
		}()
	}
	wg.Wait()
	secs := time.Since(start).Seconds()
	fmt.Printf("messages=%d\nseconds=%.3f\nrate=%.0f\nfailed_writers=%d\n", w*n, secs, float64(w*n)/secs, failed)
}

// appends times n room posts to a fresh room in this process.
func appends(n int) {
	dir, err := os.MkdirTemp("", "msgbench-room")
	if err != nil {
		fatalf("%v", err)
	}
	defer os.RemoveAll(dir)
	os.Setenv(rooms.EnvRoomMaxMessages, strconv.Itoa(2*n))
	start := time.Now()
	for i := range n {
		if _, err := rooms.Post(dir, mailbox.Envelope{To: "room:r", Type: "bench.post", From: "branch:r/w", Body: i}, nil); err != nil {
			fatalf("post: %v", err)
		}
	}
	secs := time.Since(start).Seconds()
	fmt.Printf("appends=%d\nseconds=%.3f\nrate=%.0f\n", n, secs, float64(n)/secs)
}

// fanout subscribes subs watch_room streams, then posts n messages one at
// a time through the kernel; each post's time is until every stream has
// delivered it.
func fanout(agent, run string, subs, n int) {
	got := make(chan int, subs*n)
	for range subs {
		c := dial(agent)
		params, _ := json.Marshal(map[string]any{"target": "room:" + run})
		if err := c.Send(wire.Request{Op: "watch_room", Params: params}); err != nil {
			fatalf("watch: %v", err)
		}
		if r, err := c.Read(); err != nil || r.Error != nil {
			fatalf("watch: %v %v", err, r.Error)
		}
		go func() {
			for {
				r, err := c.Read()
				if err != nil {
					return
				}
				var e struct {
					Type string `json:"type"`
					Body any    `json:"body"`
				}
				if json.Unmarshal(r.Result, &e) == nil && e.Type == "bench.fanout" {
					f, _ := e.Body.(float64)
					got <- int(f)
				}
			}
		}()
	}
	conn := dial(agent)
	defer conn.Close()
	var samples []float64
	for i := range n {
		start := time.Now()
		send(conn, map[string]any{"to": "room:" + run, "type": "bench.fanout", "from": "run:" + run, "body": i})
		for k := 0; k < subs; {
			select {
			case j := <-got:
				if j == i {
					k++
				}
			case <-time.After(10 * time.Second):
				fatalf("post %d: only %d of %d watchers had it after 10 s", i, k, subs)
			}
		}
		samples = append(samples, ms(time.Since(start)))
	}
	p := pct(samples)
	fmt.Printf("p50_ms=%.3f\np99_ms=%.3f\nmax_ms=%.3f\nn=%d\nsubscribers=%d\n", p(50), p(99), p(100), n, subs)
}

// upward: a live run's message to its coordinator goes to the run's
// outbox; the kernel queues it as a follow-up of the run's session once
// it sees the outbox change. Timed from the send until `watch` (the
// session's follow-up stream, $PI_ACTORS_SESSION) has it.
func upward(agent, run string, n int) {
	got := make(chan int, n)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	env := &verbs.Env{AgentDir: agent, Session: os.Getenv("PI_ACTORS_SESSION"), Cwd: agent, Environ: os.Environ()}
	go func() {
		err := verbs.WatchFollowups(ctx, env, func(f verbs.Followup, _ json.RawMessage) error {
			var e struct {
				Body any `json:"body"`
			}
			b, _ := json.Marshal(f)
			if json.Unmarshal(b, &e) == nil {
				if i, ok := e.Body.(float64); ok {
					got <- int(i)
				}
			}
			return nil
		}, nil)
		if err != nil && ctx.Err() == nil {
			fatalf("watch: %v", err)
		}
	}()
	conn := dial(agent)
	defer conn.Close()
	var samples []float64
	for i := range n {
		start := time.Now()
		send(conn, map[string]any{"to": "coordinator", "from": "run:" + run, "type": "bench.up", "body": i})
		for waiting := true; waiting; {
			select {
			case j := <-got:
				waiting = j != i
			case <-time.After(10 * time.Second):
				fatalf("message %d: not in the session's follow-ups after 10 s", i)
			}
		}
		samples = append(samples, ms(time.Since(start)))
	}
	p := pct(samples)
	fmt.Printf("p50_ms=%.3f\np99_ms=%.3f\nmax_ms=%.3f\nn=%d\n", p(50), p(99), p(100), n)
}

func dial(agent string) *wire.Conn {
	c, err := wire.Dial(agent, 2*time.Second)
	if err != nil {
		fatalf("dial the kernel of %s: %v", agent, err)
	}
	return c
}

func send(c *wire.Conn, params map[string]any) {
	b, _ := json.Marshal(params)
	r, err := c.Call(wire.Request{Op: "message", Session: os.Getenv("PI_ACTORS_SESSION"), Params: b})
	if err != nil || r.Error != nil {
		fatalf("message %v: %v %v", params["to"], err, r)
	}
}

func pct(s []float64) func(p float64) float64 {
	sort.Float64s(s)
	return func(p float64) float64 {
		if len(s) == 0 {
			return 0
		}
		i := int(p/100*float64(len(s)) + 0.5)
		return s[min(max(i-1, 0), len(s)-1)]
	}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func need(a []string, n int) {
	if len(a) < n {
		fatalf("%s needs %d arguments", os.Args[1], n)
	}
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		fatalf("not a number: %q", s)
	}
	return n
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "msgbench: "+format+"\n", args...)
	os.Exit(1)
}
