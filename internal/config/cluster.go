package config

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// Cluster is [cluster]: kernels with the same name and provider form one
// proto.actor cluster. A config without [cluster] (Name == "") is the
// single-machine kernel.
type Cluster struct {
	// Name is the cluster's name; kernels with the same name and provider
	// form one cluster.
	Name string `toml:"name"`
	// Node is this kernel's node name, unique in the cluster (default: the
	// host name).
	Node string `toml:"node"`
	// Provider finds the members: automanaged (no external service),
	// etcd, consul or k8s.
	Provider string `toml:"provider"`
	// Manage is this kernel's host:port for the automanaged provider's
	// health endpoint; Peers are every member's manage address.
	Manage string   `toml:"manage"`
	Peers  []string `toml:"peers"`
	// Endpoints are the etcd client URLs (provider etcd).
	Endpoints []string `toml:"endpoints"`
	// Consul is the consul agent's address (provider consul; default the
	// consul client's own default, 127.0.0.1:8500).
	Consul string `toml:"consul"`
	// Bind is host:port of the gRPC remote (port 0: any); Advertise is
	// what peers dial when it differs.
	Bind      string `toml:"bind"`
	Advertise string `toml:"advertise"`
	// TLSCA, TLSCert and TLSKey turn on mutual TLS on the remote; required
	// whenever Bind is not a loopback address.
	TLSCA   string `toml:"tls_ca"`
	TLSCert string `toml:"tls_cert"`
	TLSKey  string `toml:"tls_key"`
}

// Providers are the cluster providers a kernel can use.
var Providers = []string{"automanaged", "etcd", "consul", "k8s"}

// ErrClusterConfig marks a [cluster] section a kernel cannot form a
// cluster with (sysexits 78): the kernel still serves its own machine.
var ErrClusterConfig = errors.New("cluster config")

// Enabled reports whether [cluster] is set.
func (c Cluster) Enabled() bool { return c.Name != "" }

// NodeName is Node, else the host name.
func (c Cluster) NodeName() string {
	if c.Node != "" {
		return c.Node
	}
	h, err := os.Hostname()
	if err != nil || h == "" {
		return "localhost"
	}
	if i := strings.IndexByte(h, '.'); i > 0 {
		h = h[:i]
	}
	return h
}

// Check validates [cluster] for a kernel about to form a cluster; paths
// are made absolute against agentDir. Every error wraps ErrClusterConfig
// and names the key and the fix.
func (c *Cluster) Check(agentDir string) error {
	bad := func(format string, a ...any) error {
		return fmt.Errorf("%w: %s", ErrClusterConfig, fmt.Sprintf(format, a...))
	}
	if !ValidNode(c.Name) {
		return bad("cluster.name must be letters, digits, '.', '_' or '-' (got %q)", c.Name)
	}
	if !ValidNode(c.NodeName()) {
		return bad("cluster.node must be letters, digits, '.', '_' or '-' (got %q); set it in [cluster]", c.NodeName())
	}
	switch c.Provider {
	case "automanaged":
		if _, err := hostPort(c.Manage); err != nil || strings.HasSuffix(c.Manage, ":0") {
			return bad("cluster.manage must be this kernel's host:port with a fixed port for the automanaged provider, as listed in cluster.peers (got %q)", c.Manage)
		}
		if len(c.Peers) == 0 {
			return bad("cluster.peers must list every member's manage address (host:port), this kernel's included")
		}
		for _, p := range c.Peers {
			if _, err := hostPort(p); err != nil || strings.HasSuffix(p, ":0") {
				return bad("cluster.peers: %q is not a host:port with a fixed port", p)
			}
		}
	case "etcd":
		if len(c.Endpoints) == 0 {
			return bad("cluster.endpoints must list the etcd client URLs (e.g. [\"http://127.0.0.1:2379\"])")
		}
	case "consul", "k8s":
	case "":
		return bad("cluster.provider is required: one of %s", strings.Join(Providers, ", "))
	default:
		return bad("cluster.provider must be one of %s (got %q)", strings.Join(Providers, ", "), c.Provider)
	}
	if c.Bind == "" {
		c.Bind = "127.0.0.1:0"
	}
	host, err := hostPort(c.Bind)
	if err != nil {
		return bad("cluster.bind must be host:port (port 0 = any; got %q): %v", c.Bind, err)
	}
	if ip := net.ParseIP(host); (host == "" || ip != nil && ip.IsUnspecified()) && c.Advertise == "" {
		return bad("cluster.bind %s listens on every address: set cluster.advertise to the host:port peers dial (e.g. 10.0.0.7:7100)", c.Bind)
	}
	if c.Advertise != "" {
		if _, err := hostPort(c.Advertise); err != nil || strings.HasSuffix(c.Advertise, ":0") {
			return bad("cluster.advertise must be the host:port peers dial (got %q)", c.Advertise)
		}
		if strings.HasSuffix(c.Bind, ":0") {
			return bad("cluster.bind %s takes any port, so peers dialling cluster.advertise %s would miss it: give cluster.bind a fixed port", c.Bind, c.Advertise)
		}
	}
	if c.Provider == "automanaged" {
		// Its health endpoint listens on the manage port of every
		// address: the remote cannot have that port on any of them.
		_, bp, _ := net.SplitHostPort(c.Bind)
		_, mp, _ := net.SplitHostPort(c.Manage)
		if bp == mp {
			return bad("cluster.bind %s and cluster.manage %s use the same port %s: the remote and the automanaged provider (which listens on that port of every address) each need their own; give one of them another port", c.Bind, c.Manage, mp)
		}
	}
	tls := c.TLSCA != "" || c.TLSCert != "" || c.TLSKey != ""
	if tls && (c.TLSCA == "" || c.TLSCert == "" || c.TLSKey == "") {
		return bad("cluster.tls_ca, cluster.tls_cert and cluster.tls_key go together (pi-actors cluster ca / cluster cert write them)")
	}
	if !tls && !loopback(host) {
		return bad("cluster.bind %s is not a loopback address: set cluster.tls_ca, cluster.tls_cert and cluster.tls_key (mutual TLS; pi-actors cluster ca dir=D, then pi-actors cluster cert node=%s ca=D out=E)", c.Bind, c.NodeName())
	}
	for _, p := range []*string{&c.TLSCA, &c.TLSCert, &c.TLSKey} {
		if *p != "" && !filepath.IsAbs(*p) {
			*p = filepath.Join(agentDir, *p)
		}
	}
	return nil
}

// TLS reports whether mutual TLS is configured.
func (c Cluster) TLS() bool { return c.TLSCA != "" }

func hostPort(s string) (string, error) {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return "", err
	}
	if n, err := strconv.Atoi(port); err != nil || n < 0 || n > 65535 {
		return "", fmt.Errorf("bad port %q", port)
	}
	return host, nil
}

// loopback reports whether host only reaches this machine.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// ValidNode reports whether s can be a node or cluster name: 1 to 63
// letters, digits, '.', '_' or '-', not "." or "..". A node name is a
// file name (its certificate) and part of addresses (run:<id>@<node>).
func ValidNode(s string) bool {
	if s == "" || s == "." || s == ".." || len(s) > 63 {
		return false
	}
	for _, r := range s {
		if !(r == '-' || r == '_' || r == '.' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9') {
			return false
		}
	}
	return true
}
