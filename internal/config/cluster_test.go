package config

import (
	"errors"
	"strings"
	"testing"
)

func TestClusterCheck(t *testing.T) {
	ok := Cluster{Name: "lab", Node: "a", Provider: "automanaged", Manage: "127.0.0.1:7101", Peers: []string{"127.0.0.1:7101"}}
	if err := ok.Check("/agent"); err != nil || ok.Bind != "127.0.0.1:0" {
		t.Fatalf("a loopback cluster without TLS: %v (bind %q)", err, ok.Bind)
	}
	for _, c := range []struct {
		edit func(c *Cluster)
		want string
	}{
		{func(c *Cluster) { c.Provider = "zk" }, "cluster.provider must be one of"},
		{func(c *Cluster) { c.Provider = "" }, "cluster.provider is required"},
		{func(c *Cluster) { c.Node = "a b" }, "cluster.node"},
		{func(c *Cluster) { c.Manage = "nope" }, "cluster.manage"},
		{func(c *Cluster) { c.Peers = nil }, "cluster.peers"},
		{func(c *Cluster) { c.Peers = []string{"127.0.0.1:0"} }, "fixed port"},
		{func(c *Cluster) { c.Provider, c.Endpoints = "etcd", nil }, "cluster.endpoints"},
		{func(c *Cluster) { c.Bind = "10.0.0.7:7100" }, "tls_ca"},
		{func(c *Cluster) { c.Bind, c.TLSCA, c.TLSCert, c.TLSKey = "0.0.0.0:7100", "ca", "c", "k" }, "cluster.advertise"},
		{func(c *Cluster) { c.TLSCA = "ca" }, "go together"},
		{func(c *Cluster) { c.Advertise = "10.0.0.7:0" }, "cluster.advertise"},
		{func(c *Cluster) { c.Advertise = "10.0.0.7:7100" }, "give cluster.bind a fixed port"},
		{func(c *Cluster) { c.Manage = "127.0.0.1:0" }, "cluster.manage"},
		{func(c *Cluster) { c.Bind = "127.0.0.2:7101" }, "cluster.bind 127.0.0.2:7101 and cluster.manage 127.0.0.1:7101 use the same port 7101"},
	} {
		cl := Cluster{Name: "lab", Node: "a", Provider: "automanaged", Manage: "127.0.0.1:7101", Peers: []string{"127.0.0.1:7101"}}
		c.edit(&cl)
		err := cl.Check("/agent")
		if !errors.Is(err, ErrClusterConfig) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: err = %v, want %q", cl, err, c.want)
		}
	}
	tls := Cluster{Name: "lab", Node: "a", Provider: "etcd", Endpoints: []string{"http://e:2379"}, Bind: "10.0.0.7:7100", TLSCA: "c/ca.crt", TLSCert: "/abs/a.crt", TLSKey: "c/a.key"}
	if err := tls.Check("/agent"); err != nil || tls.TLSCA != "/agent/c/ca.crt" || tls.TLSCert != "/abs/a.crt" {
		t.Fatalf("relative TLS paths: %+v %v", tls, err)
	}
}
