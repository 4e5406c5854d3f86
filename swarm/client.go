package swarm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/pi-actors/pi-actors/mailbox"
	"github.com/pi-actors/pi-actors/runs"
	"github.com/pi-actors/pi-actors/verbs"
)

// ErrUsage is a bad invocation of a role.
var ErrUsage = errors.New("swarm usage")

// usagef is an ErrUsage with a message.
func usagef(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrUsage, fmt.Sprintf(format, args...))
}

// actor is what every role shares: who it is and how it reaches the
// kernel.
type actor struct {
	env   *verbs.Env
	run   string   // this run's id
	dir   runs.Dir // this run's state dir
	self  string   // run:<id>
	clock func() time.Time
	// parent is the state dir of the run that started this one ("" when
	// none, or not known yet); lookedParent when it was last checked.
	parent       runs.Dir
	parentRead   bool
	lookedParent time.Time
	// eventMu: event files are appended and trimmed one call at a time
	// (a worker's renewals write from their own goroutine).
	eventMu sync.Mutex
}

// parentEnded reports whether the run that started this one (room-swarm
// starts its locker and workers) was killed: it could stop nothing of
// its own, and they served no one for ever. (A parent that ended
// otherwise stopped them, or meant them to outlive it.) Checked at most
// once a second; a run started by no run never ends this way.
func (a *actor) parentEnded() bool {
	now := a.clock()
	if now.Sub(a.lookedParent) < time.Second {
		return false
	}
	a.lookedParent = now
	if !a.parentRead {
		a.parentRead = true
		if m, err := runs.Load(a.dir); err == nil && m.Meta.Parent != "" {
			if in, err := runs.Access(a.env.AgentDir, m.Meta.Parent, a.env.Session); err == nil {
				a.parent = in.Dir
			}
		}
	}
	if a.parent == "" {
		return false
	}
	in, err := runs.Load(a.parent)
	return err == nil && in.Status == runs.StatusKilled
}

// newActor reads the run identity the supervisor gives every leaf.
func newActor(env *verbs.Env) (*actor, error) {
	a := &actor{env: env, clock: time.Now}
	get := func(k string) string {
		for i := len(env.Environ) - 1; i >= 0; i-- {
			if key, v, ok := strings.Cut(env.Environ[i], "="); ok && key == k {
				return v
			}
		}
		return ""
	}
	a.run, a.dir = get("PI_ACTORS_RUN_ID"), runs.Dir(get("PI_ACTORS_STATE_DIR"))
	if a.run == "" || a.dir == "" {
		return nil, usagef("pi-actors swarm runs inside a run ($PI_ACTORS_RUN_ID and $PI_ACTORS_STATE_DIR are set there); start it with its packaged recipe")
	}
	a.self = "run:" + a.run
	return a, nil
}

// send sends one message through the kernel.
func (a *actor) send(m *verbs.Message) (*verbs.Delivery, error) {
	var d verbs.Delivery
	if err := a.env.Call("message", m, &d); err != nil {
		return nil, fmt.Errorf("message to %s type %s: %w", m.To, m.Type, err)
	}
	return &d, nil
}

// body encodes a message body.
func body(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		b, _ = json.Marshal(fmt.Sprint(v))
	}
	return b
}

// eventLimit bounds an actor's event file (journal.jsonl,
// worker-events.jsonl): past it the oldest lines go, the newest quarter
// stays. An idle worker's claims wrote ~320 bytes each, for ever.
var eventLimit int64 = 4 << 20

// event appends one line to a JSONL file of this run (its one writer).
func (a *actor) event(file string, fields map[string]any) {
	fields["ts"] = a.clock().UTC().Format(time.RFC3339Nano)
	path := a.dir.Path(file)
	a.eventMu.Lock()
	defer a.eventMu.Unlock()
	if err := mailbox.Append(path, fields); err != nil {
		fmt.Fprintf(os.Stderr, "swarm: %s: %v\n", file, err)
		return
	}
	if err := mailbox.TrimLines(path, eventLimit); err != nil {
		fmt.Fprintf(os.Stderr, "swarm: %s: %v\n", file, err)
	}
}

// waitChange waits until one of dirs changes, d passes or ctx ends.
func waitChange(ctx context.Context, w *fsnotify.Watcher, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	var events chan fsnotify.Event
	if w != nil {
		events = w.Events
	}
	select {
	case <-events:
	case <-t.C:
	case <-ctx.Done():
	}
}

// watcher watches dirs (nil when inotify is unavailable: callers poll).
func watcher(dirs ...string) *fsnotify.Watcher {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil
	}
	for _, d := range dirs {
		os.MkdirAll(d, 0o700)
		w.Add(d)
	}
	return w
}

// Options are a role's key=value parameters.
type Options map[string]string

func (o Options) str(key, def string) string {
	if v, ok := o[key]; ok && v != "" {
		return v
	}
	return def
}

func (o Options) int(key string, def int) (int, error) {
	v, ok := o[key]
	if !ok || v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, usagef("%s must be an integer (got %q)", key, v)
	}
	return n, nil
}

func (o Options) bool(key string, def bool) (bool, error) {
	v, ok := o[key]
	if !ok || v == "" {
		return def, nil
	}
	switch strings.ToLower(v) {
	case "true", "1", "yes", "on":
		return true, nil
	case "false", "0", "no", "off":
		return false, nil
	}
	return false, usagef("%s must be true or false (got %q)", key, v)
}

// check refuses parameters a role does not take.
func (o Options) check(role string, known ...string) error {
	for k := range o {
		found := false
		for _, n := range known {
			found = found || n == k
		}
		if !found {
			return usagef("unknown %s parameter %s (parameters: %s)", role, k, strings.Join(known, ", "))
		}
	}
	return nil
}
