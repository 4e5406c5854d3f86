package verbs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/pi-actors/pi-actors/runs"
	"github.com/pi-actors/pi-actors/verbs/wire"
)

// Followup is one item of a coordinator session's queue: a run's terminal
// transition, or an outbox record the run marked notify/followup. Each is
// delivered once.
type Followup struct {
	ID          string         `json:"id"`
	Kind        string         `json:"kind"` // transition or message
	Run         string         `json:"run"`
	Address     string         `json:"address"`
	Status      string         `json:"status,omitempty"`
	Reason      string         `json:"reason,omitempty"`
	Code        *int           `json:"code,omitempty"`
	Level       string         `json:"level"`
	Delivery    string         `json:"delivery"`
	Event       string         `json:"event,omitempty"`
	Summary     string         `json:"summary"`
	Text        string         `json:"text"`
	Body        any            `json:"body,omitempty"`
	Artifacts   map[string]any `json:"artifacts,omitempty"`
	RunFiles    []string       `json:"run_files,omitempty"`
	NextActions []string       `json:"next_actions,omitempty"`
	GraphHints  any            `json:"graphHints,omitempty"`
	StateDir    string         `json:"state_dir"`
	TS          time.Time      `json:"ts"`
	// Node is the node whose kernel supervises the run, when it is not the
	// session's own (a clustered spawn with node= or placement=spread).
	Node string `json:"node,omitempty"`
}

// Followups is a drained follow-up queue.
type Followups struct {
	Count     int        `json:"count"`
	Followups []Followup `json:"followups"`
	Session   string     `json:"session"`
	// Held: the session is suspended; its follow-ups wait for the resume.
	Held bool `json:"held,omitempty"`
	// More is how many stayed queued past the ones taken (lines=).
	More int `json:"more,omitempty"`
	// Corrupted counts the queue's malformed lines (a torn write): they
	// stay in File as they are and are never delivered.
	Corrupted int    `json:"corrupted,omitempty"`
	File      string `json:"file,omitempty"`
}

// Watch streams the session's follow-ups, or a room's timeline.
type Watch struct {
	Target string `json:"target,omitempty" jsonschema:"what to watch: your session's follow-ups (coordinator, the default) or a room's timeline (room:<run>)"`
	Since  string `json:"since,omitempty" jsonschema:"room: first replay the entries received after this RFC 3339 time (the received_at of the last entry you saw)"`
	Acks   string `json:"acks,omitempty" jsonschema:"follow-ups: stdin — the program reading the lines acknowledges each follow-up by writing its id as a line on the watcher's stdin (unacknowledged ones go back to the queue when the watcher ends); by default each is acknowledged once printed"`
}

// Validate checks the target.
func (w *Watch) Validate() error {
	if w.Acks != "" && w.Acks != "stdin" {
		return Usagef("watch acks= takes stdin (got %q): the reader acknowledges each follow-up by writing its id on the watcher's stdin", w.Acks)
	}
	if w.Target == "" || w.Target == "coordinator" {
		if w.Since != "" {
			return Usagef("watch since= is for room targets: watch target=room:<run> since=<received_at>")
		}
		return nil
	}
	if w.Acks != "" {
		return Usagef("watch acks= is for follow-ups; a room's timeline is not consumed (reconnect with since=)")
	}
	return w.validateRoom()
}

// Kernel manages the kernel explicitly.
type Kernel struct {
	Action string `json:"action" jsonschema:"start, stop or status"`
}

// Validate checks the action.
func (k *Kernel) Validate() error {
	switch k.Action {
	case "start", "stop", "status":
		return nil
	}
	return Usagef("kernel takes one action: start, stop or status")
}

// RunWatch says how a kernel follows its live runs' state directories.
// Inotify counts those it watches: an event for each file written and
// closed or renamed in (a message to the coordinator reaches the
// session's follow-ups at once), and for each write of stdout.log and
// stderr.log only while a runs stream (top) is open. Polled counts those
// whose changes it sees only by looking at each outbox every second
// (inotify unavailable, or its limit of watches reached:
// fs.inotify.max_user_watches).
type RunWatch struct {
	Inotify int   `json:"inotify"`
	Polled  int   `json:"polled"`
	Events  int64 `json:"events"` // inotify events since the kernel started
}

// KernelStatus describes the running kernel.
type KernelStatus struct {
	AgentDir string `json:"agent_dir,omitempty"`
	LiveRuns int    `json:"live_runs"`
	Pid      int    `json:"pid"`
	RSSBytes int64  `json:"rss_bytes"`
	// RoomActors counts the live room actors (one per room being
	// watched or posted to lately).
	RoomActors int `json:"room_actors"`
	// RunWatch is how the kernel learns of changes in live runs' state
	// directories.
	RunWatch  *RunWatch `json:"run_watch,omitempty"`
	Running   *bool     `json:"running,omitempty"`
	Socket    string    `json:"socket,omitempty"`
	StartedAt time.Time `json:"started_at,omitzero"`
	Stopped   bool      `json:"stopped,omitempty"`
	UptimeMS  int64     `json:"uptime_ms"`
	Version   string    `json:"version,omitempty"`
	// ConfigError is why pi-actors.toml, changed since the kernel read
	// it, does not load (the kernel keeps the settings it read before).
	ConfigError string `json:"config_error,omitempty"`
	// Cluster is the cluster side's state when pi-actors.toml has
	// [cluster]: state (starting, up, down), node, address, and why it is
	// down.
	Cluster map[string]any `json:"cluster,omitempty"`
}

func init() {
	Register(&Spec{
		Name:    "watch",
		Summary: "stream your session's follow-ups, or a room's timeline, as JSON lines",
		Usage: `pi-actors watch [session=<id>] [acks=stdin]

Streams the follow-ups queued for your session (terminal transitions of
the runs it owns, and their notify/followup messages) as JSON lines, each
delivered once: once printed, or with acks=stdin once the program reading
the lines writes its id as a line on the watcher's stdin (what it never
acknowledges goes back to the queue when the watcher ends). Ctrl-C stops.

pi-actors watch target=room:<run> [since=<received_at>]

Streams a room's timeline: each new entry as one JSON line as it is
appended. since= first replays the entries received after that time, so
a watcher that reconnects with the received_at of the last entry it saw
misses nothing and repeats nothing.`,
		New: func() Request { return new(Watch) },
		// The front doors stream it themselves (WatchFollowups).
		Run: func(ctx context.Context, env *Env, req Request) (*Outcome, error) {
			return nil, Usagef("watch streams; use a front door that can stream (the CLI, MCP notifications)")
		},
	})
	Register(&Spec{
		Name:    "kernel",
		Summary: "start, stop or inspect the kernel",
		Word:    "action",
		Usage: `pi-actors kernel start|stop|status [--json]

The kernel (one per agent root) hosts the actor system: run actors, session
follow-up queues. Any verb that needs it starts it; runs survive it being
stopped, crashing or restarting (each run has its own supervisor process).
  start   start it if needed and print its status
  stop    stop it (runs keep running; the next start re-attaches them)
  status  pid, socket, uptime, live runs (exit 69 when it is not running)`,
		New: func() Request { return new(Kernel) },
		Run: runKernel,
	})
}

func runKernel(ctx context.Context, env *Env, req Request) (*Outcome, error) {
	switch req.(*Kernel).Action {
	case "start":
		// status and stop work whatever pi-actors.toml holds (a kernel
		// started before it broke is stopped with them); start does not.
		if env.ConfigErr != nil {
			return nil, env.ConfigErr
		}
		// A status is idempotent: a kernel that ended as it was asked (the
		// socket of one killed a moment ago still took the connection)
		// is asked again, and the dial starts a new one.
		for attempt := 1; ; attempt++ {
			c, err := env.Dial(true)
			if err != nil {
				return nil, err
			}
			out, err := kernelStatusOf(env, c)
			c.Close()
			if err == nil || !errors.Is(err, wire.ErrNoAnswer) || attempt == 3 {
				return out, err
			}
			time.Sleep(lockRetry)
		}
	case "status":
		c, err := env.Dial(false)
		if errors.Is(err, wire.ErrDenied) {
			return nil, err // another user's kernel: 77, not "not running"
		}
		if err != nil {
			return nil, &Error{Exit: ExitUnavailable, Code: "kernel_unavailable", Message: "kernel not running for " + env.AgentDir, Hint: "pi-actors kernel start (any verb that needs it also starts it)"}
		}
		defer c.Close()
		return kernelStatusOf(env, c)
	}
	c, err := env.Dial(false)
	if errors.Is(err, wire.ErrDenied) {
		return nil, err
	}
	if err != nil {
		return &Outcome{Text: "kernel running=false", Result: &KernelStatus{Running: Ptr(false)}}, nil
	}
	defer c.Close()
	resp, err := env.exchange(c, wire.Request{Op: "stop"}, nil) // a signal ends the wait
	if err != nil {
		return nil, err
	}
	var st KernelStatus
	if err := resp.Decode(&st); err != nil {
		return nil, err
	}
	// Gone, or a zombie waiting for its reaper: stopped either way.
	for i := 0; i < 500 && runs.Alive(st.Pid, 0); i++ {
		time.Sleep(10 * time.Millisecond)
	}
	return &Outcome{Text: fmt.Sprintf("kernel stopped pid=%d", st.Pid), Result: map[string]any{"stopped": true, "pid": st.Pid}}, nil
}

func kernelStatusOf(env *Env, c *wire.Conn) (*Outcome, error) {
	// Through exchange: a stuck kernel (SIGSTOPped, busy) is waited on
	// only until a signal, as every verb.
	resp, err := env.exchange(c, wire.Request{Op: "status"}, nil)
	if err != nil {
		return nil, err
	}
	var st KernelStatus
	if err := resp.Decode(&st); err != nil {
		return nil, err
	}
	text := fmt.Sprintf("kernel running=true pid=%d live_runs=%d uptime_ms=%d rss_bytes=%d socket=%s", st.Pid, st.LiveRuns, st.UptimeMS, st.RSSBytes, st.Socket)
	if st.ConfigError != "" {
		text += "\nconfig_error: " + st.ConfigError
	}
	if cl := st.Cluster; cl != nil {
		text += fmt.Sprintf("\ncluster=%v node=%v state=%v", cl["cluster"], cl["node"], cl["state"])
		if a, ok := cl["address"]; ok {
			text += fmt.Sprintf(" address=%v", a)
		}
		if e, ok := cl["error"]; ok {
			text += fmt.Sprintf("\ncluster_error: %v", e)
		}
		if r, ok := cl["reason"]; ok {
			text += fmt.Sprintf("\ncluster_starting: %v", r)
		}
		text += rejectedText(cl["tls_rejected"])
	}
	return &Outcome{Text: text, Result: &st}, nil
}

// rejectedShown bounds the refused peers kernel status prints.
const rejectedShown = 3

// rejectedText is a line per peer the cluster side refused at the TLS
// handshake (the most recent first, at most rejectedShown).
func rejectedText(v any) string {
	list, _ := v.([]any)
	var b strings.Builder
	for i, e := range list {
		if i == rejectedShown {
			fmt.Fprintf(&b, "\n(+%d more refused peers; kernel status --json lists them)", len(list)-i)
			break
		}
		r, _ := e.(map[string]any)
		peer, _ := r["peer"].(string)
		if peer = strings.Join(strings.Fields(peer), "_"); peer == "" {
			peer = "(no_certificate)"
		}
		fmt.Fprintf(&b, "\ncluster_tls_rejected: peer=%s role=%v count=%v last=%v reason=%v", peer, r["role"], r["count"], r["last"], r["reason"])
	}
	return b.String()
}

// WatchFollowups streams the session's follow-ups until ctx ends or the
// kernel goes away, calling emit for each: decoded, and as JSON with its
// large values cut (<key>_cut says where the whole is) — what a front
// door passes on. Each is delivered once acknowledged: when emit
// returned nil or, with acks, when its id comes on acks (the reader
// behind the front door took it); one never acknowledged stays queued.
func WatchFollowups(ctx context.Context, env *Env, emit func(f Followup, bounded json.RawMessage) error, acks <-chan string) error {
	if err := CheckOwner("session", env.Session); err != nil {
		return err // every session has no queue of its own to watch
	}
	return env.streamAcked(ctx, "watch", "", nil, func(resp *wire.Response) (bool, error) {
		var f Followup
		if err := resp.Decode(&f); err != nil {
			return true, err
		}
		return false, emit(f, resp.Result)
	}, acks)
}
