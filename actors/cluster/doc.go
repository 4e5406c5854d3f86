// Package cluster is a kernel's cluster side: kernels on many machines
// form one protoactor-go cluster (its providers — automanaged, etcd,
// consul, k8s — for membership, its gossip, and its gRPC remote with
// mutual TLS for every byte between members), and this package carries
// the verb layer's typed requests between them. Only the
// pi-actors-cluster binary links it; a kernel without [cluster] is the
// single-machine kernel, unchanged.
//
// Each member runs a gateway actor (named "pi-actors") on its own cluster
// actor system, separate from the kernel's: a request from another node
// is handed to actors.Kernel.Handle, so it meets the same validation,
// ownership and session checks as a local client's, and is never
// forwarded again. A request is a wire.Request as JSON inside a
// protobuf BytesValue (the remote's serializer needs protobuf messages;
// the typed requests are what travels). Another node may ask only what
// the cluster forwards (actors.Kernel checks the operation and the node
// it comes from). Streams (watch_room, logs -f) are a pair of actors, one
// per side, that watch each other: when either side's process or link
// dies, the other side's watch fires; each side also ends the stream when
// the other node is no longer up in its directory (a stopped node never
// closes its links) or its own engine stopped.
//
// The directory is this package's view of the members: the provider's
// topology says who is a member; a ping over the remote to each member's
// gateway says it is reachable and trusted (it chains to the cluster CA),
// and carries its node name, version, load and the version of its runs
// digest, fetched when it changes. A node is up, unreachable (gone from
// the topology or not answering) or left (it said goodbye). The digest
// resolves bare run ids and answers for a node that cannot be reached
// with the last known status. The directory is kept in
// <tmp>/cluster/nodes.json, so a restarted kernel still knows its peers.
//
// Follow-ups of a run spawned for a session on another node are queued
// durably on the run's node first (its session queue, with the session's
// home node beside it) and delivered to the home node, idempotent by
// follow-up id, until it has them: a home node that restarts meanwhile
// gets each exactly once.
//
// # Engine work-arounds
//
// The pinned protoactor-go cluster blocks a member id for good once it
// left the topology (a kernel stopped with SIGSTOP and continued, or cut
// off by a partition, is never let back in), its StartMember panics on
// errors and sleeps a second, and its automanaged provider serves its
// health endpoint on every interface without TLS. So: the engine runs on
// a separate actor system under a member id <node>~<nonce>, started off
// the kernel's path with panics recovered; a member that stalled (its
// clock jumped) or lost every peer while peers are configured starts a
// fresh engine under a new member id; members are only trusted once a
// ping over the mutual-TLS remote succeeded. docs/cluster.md lists these
// with the tests that reproduce them.
//
// # Concurrency
//
// One goroutine (the side's loop) owns starting, restarting and stopping
// the engine and refreshing the directory; another (the pusher) delivers
// follow-ups, with whichever engine is current. Requests from the kernel
// and from the gateway run on their own goroutines (the gateway's at most
// 64 at once, queued off the actor so pings are always answered); pings
// and digest fetches run one at a time per member. Everything that waits
// on another node waits at most its timeout and no longer than the engine
// it went out on: a stopped engine (Stop, a renewal) ends its requests and
// streams at once, and its remote finishes shutting down in the
// background. A stream also ends when the other node is no longer up.
// The directory has its own lock; the side's state, error and engine
// share another.
//
// # Crash behaviour
//
// Nothing here holds run state: runs are supervised by their own node's
// per-run supervisors whatever happens to the cluster, and follow-ups
// stay in the run node's durable queue until delivered.
package cluster
