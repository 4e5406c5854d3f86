package cluster

import (
	"strings"
	"time"

	"github.com/pi-actors/pi-actors/actors"
	"github.com/pi-actors/pi-actors/verbs"
)

// pusher delivers follow-ups queued here for sessions whose coordinator
// is on another node: when a run's follow-up is queued (Pending), and
// every few seconds for every such session (a home node that was away
// gets what waited). Each batch is claimed here, appended on the home
// node (idempotent by follow-up id) and only then marked delivered here;
// a batch the home node did not take goes back to queued.
func (s *Side) pusher() {
	defer close(s.pushed)
	tick := time.NewTicker(pushEvery)
	defer tick.Stop()
	for {
		select {
		case <-s.stop:
			return
		case session := <-s.pending:
			s.push(session)
		case <-tick.C:
			for _, sessions := range s.k.RemoteSessions() {
				for _, session := range sessions {
					s.push(session)
				}
			}
		}
	}
}

// pushBatch bounds one delivery.
const pushBatch = 256

func (s *Side) push(session string) {
	home := s.k.SessionHome(session)
	if home == "" || home == s.node {
		return
	}
	for {
		eng := s.current()
		m, ok := s.dir.member(home)
		if eng == nil || !ok || m.Status != statusUp {
			return
		}
		list := s.k.TakeFollowups(session, pushBatch)
		if len(list) == 0 {
			return
		}
		ids := make([]string, len(list))
		for i := range list {
			ids[i] = list[i].ID
			// On the home node the run is run:<id>@<this node>.
			list[i].Node = s.node
			if !strings.Contains(list[i].Address, "@") {
				list[i].Address += "@" + s.node
			}
			list[i].NextActions = qualify(list[i].NextActions, list[i].Run, s.node)
			qualifyFollowupText(&list[i], s.node)
		}
		if err := s.deliver(eng, m.Address, session, list); err != nil {
			s.log.Info("follow-ups not delivered yet", "session", session, "home", home, "n", len(list), "err", err)
			s.k.RequeueFollowups(session, ids...)
			return
		}
		s.k.DeliveredFollowups(session, ids...)
	}
}

func (s *Side) deliver(eng *engine, addr, session string, list []actors.Followup) error {
	e, err := eng.request(addr, &envelope{Kind: kindFollowups, From: s.node, Session: session, Followups: list}, 5*time.Second)
	if err != nil {
		return err
	}
	if e.Err != "" {
		return &clusterError{code: "followup_delivery", exit: 74, msg: e.Err}
	}
	return nil
}

// qualifyFollowupText names the node in the kernel's own words of a
// follow-up: a transition's summary and text (written by the kernel) in
// full; a message's only in the "run:<id>:" its text begins with — the
// summary and body are the run's content and travel as it wrote them.
func qualifyFollowupText(f *actors.Followup, node string) {
	if f.Kind != "message" {
		f.Text = verbs.QualifyRun(f.Text, f.Run, node)
		f.Summary = verbs.QualifyRun(f.Summary, f.Run, node)
		return
	}
	if head := "run:" + f.Run + ":"; strings.HasPrefix(f.Text, head) {
		f.Text = "run:" + f.Run + "@" + node + ":" + f.Text[len(head):]
	}
}
