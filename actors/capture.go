package actors

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/pi-actors/pi-actors/knowledge"
	"github.com/pi-actors/pi-actors/knowledge/api/op"
	"github.com/pi-actors/pi-actors/knowledge/store"
	"github.com/pi-actors/pi-actors/knowledge/vector"
	"github.com/pi-actors/pi-actors/mailbox"
	"github.com/pi-actors/pi-actors/runs"
)

// Capture: every run that ends becomes a history node of the knowledge
// graph (so an agent can ask "have I done this before?" with recall), and
// so does every task.result or decision message. It happens in the kernel,
// after the run's state files are written, on its own goroutine: it never
// slows or blocks a run, and a store that is busy or broken only loses the
// capture (logged). [knowledge] capture = false in pi-actors.toml turns it
// off. Captures are idempotent (a run by its id and start time, a message
// by its id), so a repeat after a kernel restart changes nothing.

// captureTimeout bounds one capture.
const captureTimeout = 10 * time.Second

// captureLines is how many of a run's last output lines its node keeps.
const captureLines = 40

// captureRun records a terminal run in the store of its working directory
// (the project store when the run's cwd lies under one, else the personal
// store), once per run instance.
func (k *Kernel) captureRun(in *runs.Info) {
	if !k.conf().Knowledge.Capture || in.Result == nil {
		return
	}
	key := fmt.Sprintf("%s@%s#r%d", in.Dir, in.Meta.CreatedAt.Format(time.RFC3339Nano), in.Meta.Resumes)
	if !k.captured.add(key) {
		return
	}
	rec := runRecord(in, terminalFollowup(k.cfg.AgentDir, in).Summary)
	k.goCapture("run:"+in.Meta.Run, in.Meta.Cwd, func(ctx context.Context, st *knowledge.Store) error {
		return st.Vectors().CaptureRun(ctx, rec)
	})
}

// recentSet remembers the keys added lately: at most 2×recentMax, the
// older half dropped as a whole when the newer one fills. A key it forgot
// can be added again; it serves to skip repeats, not to guarantee
// uniqueness (captures are idempotent in the store).
type recentSet struct {
	mu       sync.Mutex
	cur, old map[string]struct{}
}

// recentMax is how many keys a recentSet generation holds.
const recentMax = 4096

// add records key and reports whether it was new.
func (s *recentSet) add(key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.cur[key]; ok {
		return false
	}
	if _, ok := s.old[key]; ok {
		return false
	}
	if s.cur == nil || len(s.cur) >= recentMax {
		s.old, s.cur = s.cur, make(map[string]struct{}, 64)
	}
	s.cur[key] = struct{}{}
	return true
}

// runRecord describes a terminal run for the knowledge graph.
func runRecord(in *runs.Info, summary string) vector.RunRecord {
	m, res := in.Meta, in.Result
	code := res.Code
	rec := vector.RunRecord{RunID: m.Run, Recipe: m.Recipe, Template: templateSummary(m.Template), Status: in.Status,
		ExitCode: &code, StartedAt: m.CreatedAt, EndedAt: res.CompletedAt, FollowUp: summary, Session: m.OwnerID, Cwd: m.Cwd, Resumes: m.Resumes}
	for _, a := range m.Artifacts {
		switch x := a.(type) {
		case string:
			rec.Artifacts = append(rec.Artifacts, x)
		case map[string]any:
			if p, _ := x["path"].(string); p != "" {
				rec.Artifacts = append(rec.Artifacts, p)
			}
		}
	}
	rec.LastOutput = runs.TailLines(in.Dir.Path(runs.StdoutLog), captureLines)
	if len(rec.LastOutput) == 0 || in.Status != runs.StatusDone {
		rec.LastOutput = append(rec.LastOutput, runs.TailLines(in.Dir.Path(runs.StderrLog), captureLines)...)
	}
	return rec
}

// templateSummary is a one-line summary of a run's template (bounded).
func templateSummary(t any) string {
	s, ok := t.(string)
	if !ok {
		b, _ := json.Marshal(t)
		s = string(b)
	}
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 400 {
		s = s[:399] + "…"
	}
	return s
}

// captureMessage records a task.result or decision message a run sent.
func (k *Kernel) captureMessage(env mailbox.Envelope, run, cwd, session string) {
	if !k.conf().Knowledge.Capture || !capturedType(env.Type) {
		return
	}
	text := env.Summary
	if env.Body != nil {
		b, _ := json.Marshal(env.Body)
		if body := string(b); body != "null" {
			if text != "" {
				text += "\n"
			}
			text += body
		}
	}
	id := env.ID
	if id == "" {
		id = fmt.Sprintf("%s:%s:%d", run, env.Type, time.Now().UnixNano())
	}
	rec := vector.MessageRecord{ID: id, RunID: run, Type: env.Type, From: env.From, To: env.To, Text: text, At: time.Now().UTC(), Session: session}
	k.goCapture("message "+id, cwd, func(ctx context.Context, st *knowledge.Store) error {
		return st.Vectors().CaptureMessage(ctx, rec)
	})
}

// capturedType reports whether a message type is worth remembering.
func capturedType(t string) bool {
	return t == "task.result" || t == "decision" || strings.HasPrefix(t, "decision.")
}

// goCapture runs one capture in the right store's actor, off the caller's
// path.
// Once the kernel is stopping none starts (an Add racing the final Wait):
// a run that ends as the kernel stops is not captured, as before, when the
// capture met a closing store.
func (k *Kernel) goCapture(what, cwd string, fn func(context.Context, *knowledge.Store) error) {
	k.captureMu.Lock()
	if k.capturesClosed {
		k.captureMu.Unlock()
		return
	}
	k.captures.Add(1)
	k.captureMu.Unlock()
	go func() {
		defer k.captures.Done()
		defer func() {
			if p := recover(); p != nil {
				k.log.Error("capture panicked", "what", what, "panic", p)
			}
		}()
		choice := op.StorePersonal
		if store.FindProject(cwd) != "" {
			choice = op.StoreProject
		}
		l, err := k.leaseFor(cwd, choice, true)
		if err != nil || l.empty() {
			k.log.Warn("capture: no store", "what", what, "err", err)
			return
		}
		defer l.release(k)
		o := l.targets()[0]
		ctx, cancel := context.WithTimeout(context.Background(), captureTimeout)
		defer cancel()
		if _, err := k.storeDo(o, func(st *knowledge.Store) (any, error) { return nil, fn(ctx, st) }); err != nil {
			k.log.Warn("capture", "what", what, "store", o.layer, "err", err)
		}
	}()
}

// waitCaptures waits (bounded) for captures in flight before the stores
// close.
func (k *Kernel) waitCaptures() {
	k.captureMu.Lock()
	k.capturesClosed = true
	k.captureMu.Unlock()
	done := make(chan struct{})
	go func() { k.captures.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(captureTimeout):
	}
}
