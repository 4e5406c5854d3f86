// Package runs owns detached runs: run identity and the state directory
// (<agent>/tmp/pi-actors/runs/<id>/: run.json, progress.json,
// events.jsonl, inbox.jsonl, outbox.jsonl, wake.jsonl, stdout.log,
// stderr.log, result.json), the per-run supervisor loop (`pi-actors
// supervise`: child subreaper, restart policy, control messages, log
// rotation), start guards, status derivation, the runs index, retention
// (archive, prune), ownership (a run belongs to the session that started
// it) and the /proc helpers (a pid is trusted only with its start time).
//
// # Invariants
//
// The supervisor writes every state file of its run itself, atomically
// (JSON snapshots) or by appending (JSONL); status is derived from those
// files, never cached in memory. Every leaf runs in its own process group;
// stopping is SIGTERM to the group, a grace period, then SIGKILL, and
// nothing the run started outlives it.
//
// This package does not route messages (package actors does), interpret
// message bodies, or import the actor system: it is linked into the lean
// pi-actors binary that every run's supervisor is.
//
// # Crash behaviour
//
// A run survives the kernel: its supervisor is its own process. A
// supervisor that dies is detected by pid and start time and its run is
// recorded as exited with a reason; its process groups are killed.
package runs
