// Command pi-actors-cluster is the kernel with its cluster side: the
// pi-actors-kernel binary's kernel plus package actors/cluster
// (protoactor-go's cluster, providers and gRPC remote). The lean CLI
// starts it instead of pi-actors-kernel when <agent>/pi-actors.toml has a
// [cluster] section, so a kernel without one never loads the cluster code.
// With `cluster ca|cert` it writes the cluster's certificates
// (`pi-actors cluster …` execs it).
package main

import (
	"os"

	"github.com/pi-actors/pi-actors/actors"
	"github.com/pi-actors/pi-actors/actors/cluster"
)

// Version is set at build time with -ldflags "-X main.Version=…".
var Version = "0.1.0-dev"

func main() {
	if len(os.Args) > 1 && os.Args[1] == "cluster" {
		os.Exit(cluster.CertMain(os.Args[2:], os.Stdout, os.Stderr))
	}
	os.Exit(actors.MainWith(Version, cluster.New()))
}
