package cluster

import (
	"encoding/json"
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
		case key := <-s.pending:
			s.push(key)
		case <-tick.C:
			for _, keys := range s.k.RemoteSessions() {
				for _, key := range keys {
					s.push(key)
				}
			}
		}
	}
}

// pushBatch bounds one delivery.
const pushBatch = 256

// push delivers a follow-up queue (its key: see Kernel.SessionHome) to
// its session's node.
func (s *Side) push(key string) {
	home, session := s.k.SessionHome(key)
	if home == "" || home == s.node {
		return
	}
	for {
		eng := s.current()
		m, ok := s.dir.member(home)
		if eng == nil || !ok || m.Status != statusUp {
			return
		}
		list := s.k.TakeFollowups(key, pushBatch)
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
		// Delivered in parts of at most pushBytes (a message follow-up
		// carries its body, up to 1 MiB): the remote drops a message
		// past its size limit, and a batch that never fits would hold the
		// session's follow-ups back for good.
		sizes := make([]int, len(list))
		for i := range list {
			sizes[i] = followupSize(&list[i])
		}
		for start, end := 0, 0; start < len(list); start = end {
			size := sizes[start]
			for end = start + 1; end < len(list) && size+sizes[end] <= pushBytes; end++ {
				size += sizes[end]
			}
			if err := s.deliver(eng, m.Address, session, list[start:end]); err != nil {
				s.log.Info("follow-ups not delivered yet", "session", session, "home", home, "n", len(list)-start, "err", err)
				s.k.RequeueFollowups(key, ids[start:]...)
				return
			}
			s.k.DeliveredFollowups(key, ids[start:end]...)
		}
	}
}

// pushBytes bounds the follow-ups of one delivery by their JSON size.
const pushBytes = 1 << 20

// followupSize is a follow-up's size on the wire, about.
func followupSize(f *actors.Followup) int {
	b, err := json.Marshal(f)
	if err != nil {
		return pushBytes
	}
	return len(b)
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
	// The kernel's pointer to a cut body (its outbox path is on the run's
	// node).
	f.Text = strings.Replace(f.Text, "whole: inspect target=run:"+f.Run+" ", "whole: inspect target=run:"+f.Run+"@"+node+" ", 1)
}
