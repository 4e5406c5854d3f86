package main

import (
	"context"
	"fmt"
	"os"
	"syscall"

	"github.com/pi-actors/pi-actors/verbs"
	"github.com/pi-actors/pi-actors/verbs/wire"
)

// `pi-actors cluster ca|cert` writes a cluster's certificates. The X.509
// code lives in the cluster binary (pi-actors-cluster), which this lean
// one execs: every CLI call and every run's supervisor stays small.

func init() {
	localVerbs = append(localVerbs, &verb{name: "cluster", summary: "write a cluster CA and node certificates (mutual TLS between kernels)",
		usage: `pi-actors cluster ca dir=<D> [name=<cluster>] [--json]
pi-actors cluster cert node=<N> ca=<D> out=<E> [hosts=<h1,h2>] [--json]

ca writes a cluster CA: D/ca.crt and D/ca.key (0600). cert writes the
certificate of node N signed by that CA: E/N.crt and E/N.key (0600); hosts
adds DNS names or IP addresses. Nothing is replaced: an existing file is an
error (exit 75). Copy ca.crt, N.crt and N.key to node N and point its
[cluster] tls_ca, tls_cert and tls_key at them. Kernels on the same
cluster CA trust each other; one with a certificate from another CA cannot
join. docs/cluster.md walks through a two-machine set-up.

Examples:
  pi-actors cluster ca dir=~/cluster-ca
  pi-actors cluster cert node=gpu-1 ca=~/cluster-ca out=./certs hosts=10.0.0.7`,
		run: runCluster})
}

func runCluster(_ context.Context, a *app, r *request) int {
	if len(r.batch) > 0 || len(r.words) != 1 {
		return a.fail(r, usagef("cluster takes one action, ca or cert (pi-actors cluster --help)"))
	}
	argv := []string{"", "cluster", r.words[0]}
	for _, k := range r.order {
		s, ok := r.params[k].(string)
		if !ok {
			return a.fail(r, usagef("cluster %s: %s must be a string (key=value)", r.words[0], k))
		}
		argv = append(argv, k+"="+s)
	}
	if r.json {
		argv = append(argv, "--json")
	}
	bin, err := verbs.ClusterBinary()
	if err != nil {
		return a.fail(r, err)
	}
	argv[0] = bin
	err = syscall.Exec(bin, argv, os.Environ())
	return a.fail(r, fmt.Errorf("%w: exec %s: %v", wire.ErrUnavailable, bin, err))
}
