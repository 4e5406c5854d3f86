package actors

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/pi-actors/pi-actors/knowledge"
	"github.com/pi-actors/pi-actors/knowledge/api/op"
	"github.com/pi-actors/pi-actors/knowledge/store"
	"github.com/pi-actors/pi-actors/knowledge/vector"
	"github.com/pi-actors/pi-actors/mailbox"
	"github.com/pi-actors/pi-actors/runs"
	"github.com/pi-actors/pi-actors/verbs/wire"
)

// Capture: every run that ends becomes a history node of the knowledge
// graph (so an agent can ask "have I done this before?" with recall), and
// so does every task.result or decision message. The kernel appends each
// capture to the spool of its store (<agent>/tmp/pi-actors/capture/, one
// JSONL file per store) and applies the spool to the store when the store
// is next used, before the operation that uses it — so what an agent reads
// includes every capture — or in the background once a spool holds
// captureSpoolMax bytes. A kernel nobody asks about knowledge never opens
// a store (SQLite, the vector index: 4 MiB of its memory); a store that is
// busy or broken keeps its captures spooled until it works again; a spool
// outlives kernel restarts. [knowledge] capture = false in pi-actors.toml
// turns capture off. Captures are idempotent (a run by its id and start
// time, a message by its id), so applying one twice (a kernel killed
// between applying a spool and clearing it) changes nothing.

// captureTimeout bounds applying one spool to its store.
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
	k.spool("run:"+in.Meta.Run, in.Meta.Cwd, spooled{Run: &rec})
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
	k.spool("message "+id, cwd, spooled{Message: &rec})
}

// capturedType reports whether a message type is worth remembering.
func capturedType(t string) bool {
	return t == "task.result" || t == "decision" || strings.HasPrefix(t, "decision.")
}

// captureSpoolMax is the size at which a spool is applied to its store
// without waiting for the store's next use.
const captureSpoolMax = 256 << 10

// captureSpoolCap bounds a spool whose store cannot take it (damaged,
// refused): past it, captures are dropped (logged) — the runs' own state
// directories keep what they recorded.
const captureSpoolCap = 32 << 20

// spooled is one line of a capture spool (an internal file: the records
// keep their Go field names).
type spooled struct {
	ID      string                `json:"id"`
	Store   string                `json:"store"` // the store's absolute path
	Layer   string                `json:"layer"` // project or personal
	Run     *vector.RunRecord     `json:"run,omitempty"`
	Message *vector.MessageRecord `json:"message,omitempty"`
}

// spoolPath is the capture spool of the store at abs.
func (k *Kernel) spoolPath(abs string) string { return k.storeFile(abs, spoolKind, ".jsonl") }

// The directories of <agent>/tmp/pi-actors with a file per knowledge
// store (storeFile): capture spools and graph hints.
const (
	spoolKind = "capture"
	hintsKind = "hints"
)

// storeFile is the kernel's file of kind (a directory of its tmp dir) for
// the store at abs, named by a hash of the store's path.
func (k *Kernel) storeFile(abs, kind, ext string) string {
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(wire.TmpDir(k.cfg.AgentDir), kind, hex.EncodeToString(sum[:8])+ext)
}

// spoolWaiting reports whether the store at abs has captures spooled.
func (k *Kernel) spoolWaiting(abs string) bool {
	fi, err := os.Stat(k.spoolPath(abs))
	return err == nil && fi.Size() > 0
}

// spool appends a capture to the spool of its store — the project store
// of cwd, else the personal store — and applies the spool in the
// background when it has grown to captureSpoolMax.
func (k *Kernel) spool(what, cwd string, rec spooled) {
	rec.Store, rec.Layer = store.PersonalPath(k.cfg.AgentDir), op.StorePersonal
	if p := store.FindProject(cwd); p != "" {
		rec.Store, rec.Layer = p, op.StoreProject
	}
	abs, err := filepath.Abs(rec.Store)
	if err != nil {
		k.log.Warn("capture", "what", what, "err", err)
		return
	}
	rec.Store, rec.ID = abs, mailbox.NewID()
	path := k.spoolPath(abs)
	if fi, err := os.Stat(path); err == nil && fi.Size() >= captureSpoolCap {
		k.log.Warn("capture: spool full, capture dropped", "what", what, "spool", path, "store", abs)
		k.goDrain(abs, rec.Layer)
		return
	}
	if err := mailbox.Append(path, rec); err != nil {
		k.log.Warn("capture: spool", "what", what, "err", err)
		return
	}
	if fi, err := os.Stat(path); err == nil && fi.Size() >= captureSpoolMax {
		k.goDrain(abs, rec.Layer)
	}
}

// goDrain applies the spool of the store at abs in the background (one
// at a time per store). Once the kernel is stopping none starts: the
// spool waits for the next kernel.
func (k *Kernel) goDrain(abs, layer string) {
	if _, busy := k.draining.LoadOrStore(abs, true); busy {
		return
	}
	k.captureMu.Lock()
	if k.capturesClosed {
		k.captureMu.Unlock()
		k.draining.Delete(abs)
		return
	}
	k.captures.Add(1)
	k.captureMu.Unlock()
	go func() {
		defer k.captures.Done()
		defer k.draining.Delete(abs)
		o, err := k.acquireStore(abs, layer, false)
		if err != nil {
			k.log.Warn("capture: open the store", "store", abs, "err", err)
			return
		}
		defer k.releaseStore(o)
		k.drainSpool(o)
	}()
}

// drainSpool applies o's spool to it, in its actor, and clears what was
// applied; a capture the store refuses stays spooled (logged), as does a
// malformed line (a torn write).
func (k *Kernel) drainSpool(o *openStore) {
	path := k.spoolPath(o.path)
	if !k.spoolWaiting(o.path) {
		return
	}
	_, err := k.storeDo(o, func(st *knowledge.Store) (any, error) {
		lines, err := mailbox.Read(path)
		if err != nil {
			return nil, err
		}
		ctx, cancel := context.WithTimeout(context.Background(), captureTimeout)
		defer cancel()
		applied := map[string]bool{}
		for _, l := range lines {
			var r spooled
			if l.Err != nil || json.Unmarshal(l.Raw, &r) != nil || r.ID == "" {
				continue
			}
			var err error
			switch {
			case r.Run != nil:
				err = st.Vectors().CaptureRun(ctx, *r.Run)
			case r.Message != nil:
				err = st.Vectors().CaptureMessage(ctx, *r.Message)
			}
			if err != nil {
				k.log.Warn("capture", "id", r.ID, "store", o.layer, "err", err)
				continue
			}
			applied[r.ID] = true
		}
		if len(applied) == 0 {
			return nil, nil
		}
		return nil, mailbox.RewriteLazy(path, func(lines []mailbox.Line) ([]mailbox.Line, error) {
			return slices.DeleteFunc(lines, func(l mailbox.Line) bool {
				id, _ := l.Peek("id")
				return applied[id]
			}), nil
		})
	})
	if err != nil {
		k.log.Warn("capture: apply the spool", "store", o.path, "err", err)
	}
}

// waitCaptures waits (bounded) for spools being applied before the stores
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
