package cluster

import "testing"

// A pong that was on its way when its member said goodbye does not make
// the node up again (CI saw "c: unreachable" where "left" was due: the
// late pong revived c, then the topology dropped it). A new start of the
// node, under a new member id, is up as usual.
func TestLatePongAfterGoodbyeKeepsLeft(t *testing.T) {
	s := engineSide("a", "127.0.0.1:1")
	d := s.dir
	d.nodes["c"] = &nodeState{NodeView: NodeView{Node: "c", Status: statusUp, MemberID: "c-1", Address: "127.0.0.1:2"}}
	d.left("c")
	d.answered("a-1", "c", "127.0.0.1:2", &pong{Node: "c", MemberID: "c-1"}, nil)
	if got := d.nodes["c"].Status; got != statusLeft {
		t.Fatalf("after a late pong of the member that left: %s, want left", got)
	}
	d.nodes["c"].MemberID = "c-2" // the topology lists a new start
	d.answered("a-1", "c", "127.0.0.1:2", &pong{Node: "c", MemberID: "c-2"}, nil)
	if got := d.nodes["c"].Status; got != statusUp {
		t.Fatalf("a new start of the node answered: %s, want up", got)
	}
}
