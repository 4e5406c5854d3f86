package actors

import (
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/pi-actors/pi-actors/mailbox"
	"github.com/pi-actors/pi-actors/runs"
	"github.com/pi-actors/pi-actors/sessions"
	"github.com/pi-actors/pi-actors/verbs"
	"github.com/pi-actors/pi-actors/verbs/wire"
)

// tracer collects the causal record's items (sessions.Item: every spawn
// and message the kernel accepted, with its cause) and appends them to
// each session's trace log. Items wait in memory only until the request
// that made them is answered: dispatch flushes before it writes the
// answer, and whoever flushes writes what every concurrent request added
// (one append per session), so a batch of 1000 messages costs one write.
type tracer struct {
	k       *Kernel
	mu      sync.Mutex
	pending map[string][]sessions.Item // session → items, in order
	flushMu sync.Mutex                 // one writer at a time, so order holds
}

// add queues an item for a session's log.
func (t *tracer) add(session string, it sessions.Item) {
	if it.TS.IsZero() {
		it.TS = time.Now().UTC()
	}
	t.mu.Lock()
	if t.pending == nil {
		t.pending = map[string][]sessions.Item{}
	}
	t.pending[session] = append(t.pending[session], it)
	t.mu.Unlock()
}

// flush appends every queued item to its session's log.
func (t *tracer) flush() {
	t.flushMu.Lock()
	defer t.flushMu.Unlock()
	t.mu.Lock()
	batch := t.pending
	t.pending = nil
	t.mu.Unlock()
	for session, items := range batch {
		path := sessions.TracePath(t.k.cfg.AgentDir, session)
		rotate(path)
		recs := make([]any, len(items))
		for i := range items {
			recs[i] = items[i]
		}
		if err := mailbox.Append(path, recs...); err != nil {
			t.k.log.Warn("trace", "session", session, "items", len(items), "err", err)
		}
	}
}

// rotate moves a trace log past sessions.TraceMaxBytes to <path>.1 (the
// one older file kept).
func rotate(path string) {
	if st, err := os.Stat(path); err == nil && st.Size() > sessions.TraceMaxBytes {
		os.Rename(path, path+".1")
	}
}

// causeOf is the cause of a request: what the client said (message, tool
// call, MCP request), the session and the run it came from.
func causeOf(req wire.Request) *wire.Cause {
	c := wire.Cause{}
	if req.Cause != nil {
		c = *req.Cause
	}
	c.Session = req.Session
	if c.Run == "" {
		c.Run = envString(req.Env, "PI_ACTORS_RUN_ID")
	}
	return &c
}

// traceSpawn records a run started.
func (k *Kernel) traceSpawn(req wire.Request, meta *runs.Meta) {
	detail := meta.Recipe
	switch {
	case meta.Workflow != nil:
		detail = "workflow"
	case meta.Tool != "":
		detail = "tool:" + meta.Tool
	case detail == "":
		detail = "template"
	}
	// At the run's creation, before its leaf ran: a run that ends at once
	// is not listed ending before it was spawned.
	k.trace.add(meta.OwnerID, sessions.Item{TS: meta.CreatedAt.UTC(), ID: fmt.Sprintf("spawn:%s@%d", meta.Run, meta.CreatedAt.UnixMilli()), Kind: sessions.KindSpawn,
		Run: meta.Run, StateDir: meta.StateDir, Cause: meta.Cause, Detail: detail})
}

// traceMessage records a message the kernel accepted (delivered, queued,
// held or dead-lettered), at the time it arrived (at; zero: now), so the
// trace lists it before what it caused (a kill's exit, a retry's resume).
func (k *Kernel) traceMessage(req wire.Request, m *verbs.Message, result any, owner string, at time.Time) {
	d, ok := result.(*verbs.Delivery)
	if !ok || d == nil {
		return
	}
	id := d.InboxID
	if id == "" {
		id = d.ID
	}
	if id == "" {
		id = m.ID
	}
	session := req.Session
	if session == "" {
		session = owner
	}
	if session == "" {
		session = k.ownerOf(result) // a caller without a session: the log of the run's owner
	}
	c := causeOf(req)
	k.trace.add(session, sessions.Item{TS: at, ID: id, Kind: sessions.KindMessage, To: d.To, Type: d.Type, From: m.From, Outcome: d.Reason, Cause: c})
}

// spawnCause is what made a spawn happen: the request's cause and the
// workflow node it carries out.
func spawnCause(req wire.Request, p *verbs.Spawn) *wire.Cause {
	c := causeOf(req)
	if n := p.WorkflowNode; n != nil {
		c.Node = fmt.Sprintf("%s/%s#%d", n.Workflow, n.Node, n.Attempt)
	}
	return c
}

// ownerOf is the session owning the run a delivery went to (the log of a
// message from a caller without a session).
func (k *Kernel) ownerOf(result any) string {
	d, ok := result.(*verbs.Delivery)
	if !ok || d == nil || d.Run == "" {
		return ""
	}
	if in := k.cachedRun(d.Run); in != nil {
		return in.Meta.OwnerID
	}
	return ""
}
