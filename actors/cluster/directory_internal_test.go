package cluster

import (
	"path/filepath"
	"testing"
	"time"
)

// A node of the cluster this node was in before its [cluster] changed
// (another name or provider) is forgotten at the next start: it stayed
// listed as unreachable, and every kill all exited 69 naming it, for
// forgetAfter (30 days). One of the same cluster is kept.
func TestDirectoryForgetsAnotherClustersNodes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "nodes.json")
	side := func(name, provider string) *Side {
		s := engineSide("d", "127.0.0.1:1")
		s.cfg.Name, s.cfg.Provider = name, provider
		s.cfg.Peers = []string{"127.0.0.1:2"}
		s.dir = &directory{s: s, path: path, nodes: map[string]*nodeState{}}
		return s
	}
	old := side("lab", "automanaged")
	n := &nodeState{Manage: "127.0.0.1:2"}
	n.Node, n.Status, n.Since = "na", statusUp, time.Now().UTC()
	old.dir.nodes["na"], old.dir.dirty = n, true
	old.dir.save()

	same := side("lab", "automanaged")
	same.dir.load()
	if _, ok := same.dir.nodes["na"]; !ok {
		t.Fatal("a node of the same cluster was forgotten")
	}
	for _, c := range [][2]string{{"labe", "automanaged"}, {"lab", "etcd"}} {
		other := side(c[0], c[1])
		other.dir.load()
		if _, ok := other.dir.nodes["na"]; ok {
			t.Errorf("cluster %s (%s) kept node na of cluster lab (automanaged)", c[0], c[1])
		}
	}
}
