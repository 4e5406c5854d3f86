package cluster

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/pi-actors/pi-actors/actors"
	"github.com/pi-actors/pi-actors/internal/config"
	"github.com/pi-actors/pi-actors/verbs/wire"
)

// gatewayName is the gateway actor's name on every member.
const gatewayName = "pi-actors"

// envelope is every message between members, as JSON in a BytesValue.
type envelope struct {
	Kind string `json:"k"`
	// From is the sending node.
	From string         `json:"from,omitempty"`
	Req  *wire.Request  `json:"req,omitempty"`
	Resp *wire.Response `json:"resp,omitempty"`
	// Ping answers.
	Info *pong `json:"info,omitempty"`
	// Digest answers.
	Runs []actors.RunDigest `json:"runs,omitempty"`
	// Follow-up deliveries.
	Session   string            `json:"session,omitempty"`
	Followups []actors.Followup `json:"followups,omitempty"`
	// Stream frames: the serving side's stream actor.
	Server *actor.PID `json:"server,omitempty"`
	Err    string     `json:"err,omitempty"`
}

// Message kinds.
const (
	kindPing      = "ping"
	kindPong      = "pong"
	kindDigest    = "digest"
	kindRequest   = "req"
	kindResponse  = "resp"
	kindStream    = "stream"
	kindStarted   = "started"
	kindFrame     = "frame"
	kindEnd       = "end"
	kindFollowups = "followups"
	kindAck       = "ack"
	kindBye       = "bye"
)

// pong is what a member says about itself.
type pong struct {
	Node      string    `json:"node"`
	MemberID  string    `json:"member_id"`
	Address   string    `json:"address"`
	Version   string    `json:"version"`
	StartedAt time.Time `json:"started_at"`
	LiveRuns  int       `json:"live_runs"`
	Load1     float64   `json:"load"`
	Digest    string    `json:"digest"`
	// Manage is the automanaged provider's address ("" with another).
	Manage string `json:"manage,omitempty"`
}

func pack(e *envelope) *wrapperspb.BytesValue {
	b, err := json.Marshal(e)
	if err != nil {
		b, _ = json.Marshal(&envelope{Kind: e.Kind, Err: "encode: " + err.Error()})
	}
	return wrapperspb.Bytes(b)
}

func unpack(msg any) (*envelope, error) {
	bv, ok := msg.(*wrapperspb.BytesValue)
	if !ok {
		return nil, fmt.Errorf("unexpected message %T", msg)
	}
	var e envelope
	if err := json.Unmarshal(bv.Value, &e); err != nil {
		return nil, fmt.Errorf("decode cluster message: %w", err)
	}
	return &e, nil
}

// gateway answers other members: pings, digests, requests, streams,
// follow-up deliveries and goodbyes. Requests run on their own goroutines
// (at most 64 at once; the rest wait their turn off the actor), so a slow
// spawn or a waiting claim never holds up a ping.
type gateway struct {
	s   *Side
	eng *engine // the engine it answers for
	sem chan struct{}
}

// knows reports whether node is in this member's view of the cluster
// (the engine's member list).
func (g *gateway) knows(node string) bool {
	for _, m := range g.eng.cluster.MemberList.Members().Members() {
		if nodeOf(m.Id) == node {
			return true
		}
	}
	return false
}

func (g *gateway) Receive(ctx actor.Context) {
	e, err := unpack(ctx.Message())
	if err != nil {
		return // system messages (Started, …) and strangers
	}
	s := g.s
	sender := ctx.Sender()
	system := ctx.ActorSystem()
	reply := func(r *envelope) {
		if sender != nil {
			system.Root.Send(sender, pack(r))
		}
	}
	switch e.Kind {
	case kindPing:
		reply(&envelope{Kind: kindPong, From: s.node, Info: s.selfPong(system)})
	case kindDigest:
		go reply(&envelope{Kind: kindDigest, From: s.node, Runs: s.k.RunsDigest(digestMax)})
	case kindRequest:
		if e.Req == nil {
			return
		}
		if !g.knows(e.From) {
			// A node this member does not list could not be answered
			// later (a run's follow-ups go back to the spawning node).
			reply(&envelope{Kind: kindResponse, From: s.node, Resp: &wire.Response{ID: e.Req.ID, Error: &wire.Error{Code: "not_a_member", Exit: 69,
				Message: fmt.Sprintf("node %s is not a member of the cluster as node %s sees it: nothing was done there", e.From, s.node),
				Hint:    "every member must list every member's manage address in cluster.peers (automanaged), or use the same provider; then pi-actors kernel stop on the changed nodes"}}})
			return
		}
		go func() {
			// The slot is taken here, not in Receive: requests that wait
			// (a claim's wait=, a spawn's wait=ready) must never hold up
			// the pings behind them (a member that does not answer its
			// pings is taken for unreachable, and its peers renew).
			g.sem <- struct{}{}
			defer func() { <-g.sem }()
			resp := s.k.Handle(e.From, *e.Req)
			reply(&envelope{Kind: kindResponse, From: s.node, Resp: &resp})
		}()
	case kindStream:
		if e.Req == nil || sender == nil {
			return
		}
		props := actor.PropsFromProducer(func() actor.Actor {
			return &streamServer{s: s, eng: g.eng, from: e.From, req: *e.Req, client: sender}
		})
		ctx.Spawn(props)
	case kindFollowups:
		if e.Session == "" || !config.ValidNode(e.From) || e.From == s.node {
			reply(&envelope{Kind: kindAck, Err: fmt.Sprintf("follow-ups need a session and the node they come from (got session=%q from=%q)", e.Session, e.From)})
			return
		}
		go func() {
			if err := s.k.EnqueueFollowups(e.Session, e.Followups); err != nil {
				reply(&envelope{Kind: kindAck, Err: err.Error()})
				return
			}
			reply(&envelope{Kind: kindAck})
		}()
	case kindBye:
		s.dir.left(e.From)
		reply(&envelope{Kind: kindAck})
	}
}

// digestMax bounds the runs one digest lists.
const digestMax = 20000

// streamServer serves one stream for a client on another node: it runs
// the streaming operation and sends each response. The stream ends when
// the client goes away (it is watched), when the client's node is no
// longer up here (a node that stopped answering never says its client
// went), or when this member's engine stops.
type streamServer struct {
	s      *Side
	eng    *engine
	from   string
	req    wire.Request
	client *actor.PID
	gone   chan struct{}
	closed bool
}

func (a *streamServer) Receive(ctx actor.Context) {
	switch m := ctx.Message().(type) {
	case *actor.Started:
		a.gone = make(chan struct{})
		ctx.Watch(a.client)
		ctx.Send(a.client, pack(&envelope{Kind: kindStarted, Server: ctx.Self()}))
		self, system, client := ctx.Self(), ctx.ActorSystem(), a.client
		// No member id: this node's directory may not have seen the
		// client's node restart yet, and the stream is the new member's.
		go a.s.whileUp(a.from, "", a.eng, a.gone, func(error) { system.Root.Stop(self) })
		go func() {
			write := func(r wire.Response) error {
				select {
				case <-a.gone:
					return fmt.Errorf("stream client went away")
				default:
				}
				system.Root.Send(client, pack(&envelope{Kind: kindFrame, Resp: &r}))
				return nil
			}
			if !a.s.k.HandleStream(a.from, a.req, write, a.gone) {
				resp := wire.Response{ID: a.req.ID, Error: &wire.Error{Code: "usage", Exit: 64, Message: fmt.Sprintf("%s is not a streaming operation", a.req.Op)}}
				write(resp)
			}
			select {
			case <-a.gone:
				// The client, its node or this engine went away: an end
				// delivered late (a node that was stopped, continued)
				// would read as a stream that ended well.
			default:
				system.Root.Send(client, pack(&envelope{Kind: kindEnd}))
			}
			system.Root.Stop(self)
		}()
	case *actor.Terminated:
		if m.Who.Equal(a.client) {
			a.closeGone()
		}
	case *actor.Stopping:
		a.closeGone()
	}
}

func (a *streamServer) closeGone() {
	if !a.closed {
		a.closed = true
		close(a.gone)
	}
}
