package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/pi-actors/pi-actors/actors"
	"github.com/pi-actors/pi-actors/mailbox"
	"github.com/pi-actors/pi-actors/verbs"
	"github.com/pi-actors/pi-actors/verbs/wire"
)

// forwardTimeout bounds one forwarded request: long enough for a spawn on
// a loaded machine, short enough that a member that stopped answering
// never hangs a caller for long (a known-unreachable node answers at
// once).
const forwardTimeout = 15 * time.Second

// Forward implements actors.Cluster.
func (s *Side) Forward(node string, req wire.Request) wire.Response {
	fail := func(err error) wire.Response { return wire.Response{ID: req.ID, Error: toWire(err)} }
	eng := s.current()
	if eng == nil {
		return fail(s.errDown())
	}
	m, ok := s.dir.member(node)
	if !ok {
		return fail(s.unknownNode(node))
	}
	if m.Status != statusUp {
		return fail(s.unreachable(node, m, req, nil))
	}
	// A node that dies now is noticed within seconds (its member leaves
	// the topology, its pings fail): the caller hears so then, not after
	// forwardTimeout (the remote retries its connection for longer).
	end, down := make(chan struct{}), make(chan struct{})
	go s.whileUp(node, m.MemberID, eng, end, func(error) { close(down) })
	e, err := eng.requestUntil(m.Address, &envelope{Kind: kindRequest, From: s.node, Req: &req}, forwardTimeout+waitOf(req), down)
	close(end)
	if errors.Is(err, errNodeDown) {
		asked := m.MemberID
		m, _ = s.dir.member(node) // since when, and the last known status
		if m.Status == statusUp && m.MemberID != asked {
			err = errNodeRestarted
		}
	}
	if err == nil && e.Resp == nil {
		err = errors.New("empty answer")
	}
	if err != nil {
		return fail(s.unreachable(node, m, req, err))
	}
	s.noteAnswer(node, req, e.Resp)
	if req.Op == "message" {
		run := runOf(req)
		if e.Resp.OK {
			e.Resp.Result = verbs.QualifyResult(e.Resp.Result, run, node)
		} else if we := e.Resp.Error; we != nil && run != "" {
			// Its message and hint name the run as the caller does.
			c := *we
			c.Message, c.Hint = verbs.QualifyErrorText(c.Message, run, node), verbs.QualifyErrorText(c.Hint, run, node)
			e.Resp.Error = &c
		}
	}
	return *e.Resp
}

// noteAnswer keeps what an answer says about a run: a run spawned there is
// known at once (a bare run:<id> finds it before the next digest).
func (s *Side) noteAnswer(node string, req wire.Request, resp *wire.Response) {
	if !resp.OK || req.Op != "spawn" {
		return
	}
	note := func(raw json.RawMessage) {
		var r struct {
			Run    string `json:"run"`
			Status string `json:"status"`
		}
		if json.Unmarshal(raw, &r) == nil && r.Run != "" {
			s.dir.noteRun(node, actors.RunDigest{Run: r.Run, Status: r.Status, Owner: req.Session, UpdatedAt: time.Now().UTC()})
		}
	}
	if len(req.Items) == 0 {
		note(resp.Result)
	}
	for _, r := range resp.Results {
		if r.OK {
			note(r.Result)
		}
	}
}

// qualify adds @node to the run:<id> addresses of next actions.
func qualify(actions []string, run, node string) []string {
	for i, a := range actions {
		actions[i] = verbs.QualifyRun(a, run, node)
	}
	return actions
}

// Stream implements actors.Cluster: a client actor here receives the
// frames of a server actor on node; each watches the other.
func (s *Side) Stream(node string, req wire.Request, write func(wire.Response) error, gone <-chan struct{}) {
	fail := func(err error) { write(wire.Response{ID: req.ID, Error: toWire(err)}) }
	eng := s.current()
	if eng == nil {
		fail(s.errDown())
		return
	}
	m, ok := s.dir.member(node)
	switch {
	case !ok:
		fail(s.unknownNode(node))
		return
	case m.Status != statusUp:
		fail(s.unreachable(node, m, req, nil))
		return
	}
	done := make(chan struct{})
	client := &streamClient{write: write, done: done, fail: func(err error) {
		m, _ := s.dir.member(node)
		fail(s.unreachable(node, m, req, err))
	}}
	pid := eng.system.Root.Spawn(actor.PropsFromProducer(func() actor.Actor { return client }))
	eng.system.Root.RequestWithCustomSender(pidOf(m.Address), pack(&envelope{Kind: kindStream, From: s.node, Req: &req}), pid)
	lost := make(chan struct{})
	go s.whileUp(node, m.MemberID, eng, lost, func(err error) { eng.system.Root.Send(pid, streamLost{err}) })
	select {
	case <-done:
	case <-gone:
	case <-s.stop:
	}
	close(lost)
	eng.system.Root.Stop(pid)
	select {
	case <-done:
	case <-time.After(time.Second):
	}
}

// streamLost tells a stream's client that the serving node is no longer
// up (err nil), or that this member's engine stopped.
type streamLost struct{ err error }

// whileUp calls lost once node is known and not up, or up under another
// member id than member (it restarted: the start that was asked is gone;
// "" checks no id) — with nil — or eng stops (with errEngineStopped),
// unless end closes first: a node that stopped answering (SIGSTOP, a
// partition) never ends its streams itself, and a stopped engine's actors
// hear nothing more from other nodes.
func (s *Side) whileUp(node, member string, eng *engine, end <-chan struct{}, lost func(error)) {
	tick := time.NewTicker(streamCheckEvery)
	defer tick.Stop()
	for {
		select {
		case <-end:
			return
		case <-eng.done:
			lost(errEngineStopped)
			return
		case <-tick.C:
			if m, ok := s.dir.member(node); ok && (m.Status != statusUp || member != "" && m.MemberID != member) {
				lost(nil)
				return
			}
		}
	}
}

// streamCheckEvery is how often a stream looks at its peer node's status.
const streamCheckEvery = 500 * time.Millisecond

// streamClient writes a remote stream's frames to the local client. Its
// deadlines are its own timers, not protoactor's receive timeout (whose
// handler races with the actor re-arming it).
type streamClient struct {
	write   func(wire.Response) error
	fail    func(error)
	done    chan struct{}
	server  *actor.PID
	stopped bool
	// serverGone: the server actor stopped; frames may still be queued.
	serverGone bool
	timer      *time.Timer
}

// streamDeadline fires a streamClient's current deadline.
type streamDeadline struct{ serverGone bool }

func (c *streamClient) after(ctx actor.Context, d time.Duration, msg streamDeadline) {
	if c.timer != nil {
		c.timer.Stop()
	}
	self, root := ctx.Self(), ctx.ActorSystem().Root
	c.timer = time.AfterFunc(d, func() { root.Send(self, msg) })
}

func (c *streamClient) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		c.after(ctx, 10*time.Second, streamDeadline{})
	case streamDeadline:
		switch {
		case !m.serverGone && c.server == nil:
			c.fail(errors.New("the node did not start the stream"))
			ctx.Stop(ctx.Self())
		case m.serverGone && c.serverGone:
			c.fail(errors.New("the stream's node went away"))
			ctx.Stop(ctx.Self())
		}
	case *actor.Terminated:
		if c.server != nil && m.Who.Equal(c.server) {
			// A system message overtakes the frames still queued (the
			// last ones and the end): give them a moment.
			c.serverGone = true
			c.after(ctx, 2*time.Second, streamDeadline{serverGone: true})
		}
	case streamLost:
		c.fail(m.err)
		ctx.Stop(ctx.Self())
	case *actor.Stopping:
		if c.timer != nil {
			c.timer.Stop()
		}
		if !c.stopped {
			c.stopped = true
			close(c.done)
		}
	default:
		e, err := unpack(m)
		if err != nil {
			return
		}
		switch e.Kind {
		case kindStarted:
			if c.timer != nil {
				c.timer.Stop()
			}
			c.server = e.Server
			ctx.Watch(c.server)
		case kindFrame:
			if e.Resp != nil && c.write(*e.Resp) != nil {
				ctx.Stop(ctx.Self()) // the local client went away
			}
		case kindEnd:
			ctx.Stop(ctx.Self())
		}
	}
}

// Locate implements actors.Cluster.
func (s *Side) Locate(run string) []string { return s.dir.locate(run) }

// Place implements actors.Cluster.
func (s *Side) Place() (string, error) {
	if s.current() == nil {
		return "", toWire(s.errDown())
	}
	live, load := s.k.Load()
	return s.dir.place(live, load), nil
}

// Pending implements actors.Cluster.
func (s *Side) Pending(session string) {
	select {
	case s.pending <- session:
	default: // the periodic pass delivers it
	}
}

// View implements actors.Cluster: view=status (this side) or view=nodes
// (every member).
func (s *Side) View(req wire.Request) (any, error) {
	var p struct {
		View string `json:"view"`
	}
	json.Unmarshal(req.Params, &p)
	switch p.View {
	case "status", "":
		return s.status(), nil
	case "nodes":
		if s.current() == nil {
			return nil, toWire(s.errDown())
		}
		return map[string]any{"cluster": s.cfg.Name, "node": s.node, "state": s.status()["state"], "nodes": s.dir.view(s.selfView())}, nil
	}
	return nil, &wire.Error{Code: "usage", Exit: 64, Message: fmt.Sprintf("cluster view must be status or nodes (got %q)", p.View)}
}

func (s *Side) status() map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := map[string]any{"state": s.state, "node": s.node, "cluster": s.cfg.Name, "provider": s.cfg.Provider, "since": s.since, "tls": s.cfg.TLS()}
	if s.err != nil {
		out["error"] = s.err.Error()
	}
	if s.why != "" {
		out["reason"] = s.why
	}
	if s.eng != nil {
		out["member_id"], out["address"] = s.eng.id, s.eng.address
	}
	if len(s.rejected) > 0 {
		out["tls_rejected"] = s.rejectedList()
	}
	return out
}

func (s *Side) selfView() NodeView {
	live, load := s.k.Load()
	v := NodeView{Node: s.node, Status: statusUp, LiveRuns: live, Load: load, Version: s.k.Version(), Self: true, StartedAt: s.k.Started().UTC()}
	s.mu.Lock()
	defer s.mu.Unlock()
	v.Since = s.since
	if s.eng == nil || s.state != stateUp {
		v.Status = s.state
	} else {
		v.Address, v.MemberID = s.eng.address, s.eng.id
	}
	return v
}

func (s *Side) selfPong(system *actor.ActorSystem) *pong {
	live, load := s.k.Load()
	p := &pong{Node: s.node, MemberID: system.ID, Address: system.Address(), Version: s.k.Version(), LiveRuns: live, Load1: load, Digest: s.k.DigestVersion(),
		StartedAt: s.k.Started().UTC()}
	if s.cfg.Provider == "automanaged" {
		p.Manage = s.cfg.Manage
	}
	return p
}

func (s *Side) unknownNode(node string) error {
	var known []string
	for _, v := range s.dir.view(s.selfView()) {
		known = append(known, v.Node)
	}
	sort.Strings(known)
	return &clusterError{code: "unknown_node", exit: 66, msg: fmt.Sprintf("node %q is not a member of cluster %s (known nodes: %s)", node, s.cfg.Name, strings.Join(known, ", ")),
		hint: "pi-actors inspect target=cluster view=nodes"}
}

// unreachable answers for a node that cannot be reached: at once, with
// the last known status of the run the request is about.
func (s *Side) unreachable(node string, m NodeView, req wire.Request, cause error) error {
	var msg string
	switch m.Status {
	case statusUp:
		msg = fmt.Sprintf("node %s did not answer", node)
	case statusLeft:
		msg = fmt.Sprintf("node %s left the cluster", node)
	default:
		msg = fmt.Sprintf("node %s is %s", node, m.Status)
	}
	if m.Status != statusUp && !m.Since.IsZero() {
		msg += " at " + m.Since.Format(time.RFC3339)
	}
	if cause != nil {
		msg += " (" + cause.Error() + ")"
	}
	details := map[string]any{"node": node, "node_status": m.Status, "last_seen": m.LastSeen}
	if run := runOf(req); run != "" {
		if d, ok := s.dir.lastKnown(node, run); ok {
			msg += fmt.Sprintf("; last known status of run:%s@%s: %s (unchanged since %s", run, node, d.Status, d.UpdatedAt.Format(time.RFC3339))
			if !m.LastSeen.IsZero() {
				msg += "; the node last heard from at " + m.LastSeen.Format(time.RFC3339)
			}
			msg += ")"
			details["last_known"] = d
		}
	}
	return &clusterError{code: "node_unreachable", exit: 69, msg: msg, details: details,
		hint: "its runs keep running on that machine; pi-actors inspect target=cluster view=nodes shows when it is back"}
}

// waitOf is how long a request may rightly wait on the other node before
// it answers: a claim's wait= (the forward timeout bounds the rest).
func waitOf(req wire.Request) time.Duration {
	p := params(req)
	var w string
	if json.Unmarshal(p["wait"], &w) != nil {
		return 0
	}
	d, err := time.ParseDuration(strings.TrimSpace(w))
	if err != nil || d < 0 {
		return 0
	}
	return d
}

// params are a request's parameters, those of the verb for op verb.
func params(req wire.Request) map[string]json.RawMessage {
	var p map[string]json.RawMessage
	if json.Unmarshal(req.Params, &p) != nil {
		return nil
	}
	if inner, ok := p["params"]; ok { // op verb
		var q map[string]json.RawMessage
		if json.Unmarshal(inner, &q) == nil {
			return q
		}
	}
	return p
}

// runOf finds the run a request is about, if any.
func runOf(req wire.Request) string {
	p := params(req)
	for _, key := range []string{"to", "target", "address", "room", "run"} {
		var v string
		if json.Unmarshal(p[key], &v) != nil || v == "" {
			continue
		}
		if !strings.Contains(v, ":") {
			v = "run:" + v
		}
		if a, _, err := mailbox.ParseNode(v); err == nil && a.ID != "" {
			return a.ID
		}
	}
	return ""
}

func toWire(err error) *wire.Error {
	var we *wire.Error
	if errors.As(err, &we) {
		return we
	}
	var ce *clusterError
	if errors.As(err, &ce) {
		return &wire.Error{Code: ce.code, Message: ce.msg, Hint: ce.hint, Exit: ce.exit, Details: ce.details}
	}
	return &wire.Error{Code: "cluster_error", Message: err.Error(), Exit: 69}
}
