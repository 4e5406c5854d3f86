// Package runs owns detached runs: run identity and the state directory
// (<agent>/tmp/pi-actors/runs/<id>/: run.json, progress.json,
// events.jsonl, inbox.jsonl, outbox.jsonl, wake.jsonl, stdout.log,
// stderr.log, result.json), the per-run supervisor loop (`pi-actors
// supervise`: child subreaper, restart policy, control messages, log
// rotation, health checks), start guards, status derivation, the runs index, retention
// (archive, prune), ownership (a run belongs to the session that started
// it) and the /proc helpers (a pid is trusted only with its start time).
//
// # Invariants
//
// The kernel writes run.json (Start: the state directory appears whole,
// run.json inside it, before the supervisor is handed its run); the
// supervisor writes every other state file of its run itself, atomically
// (JSON snapshots) or by appending (JSONL); status is derived from those
// files, never cached in memory. Durable are run.json (fsynced; a new
// state directory's parent fsynced at once or once per batch),
// result.json and the JSONL files' appends as mailbox makes them;
// progress.json is a snapshot replaced without fsync. Every leaf runs in its own process group;
// stopping is SIGTERM to the group, a grace period, then SIGKILL, and
// nothing the run started outlives it.
//
// # Logs
//
// stdout.log and stderr.log are capped (runs.log_max_bytes): a log is
// rotated to <log>.1 … <log>.<log_keep> before the first line that does
// not fit (a line begun while it fit is finished where it began), so every
// line lies whole in one file and the files read oldest first are the
// output in order. <log>.times holds a time mark
// ("<unix_ms> <offset>") at most once a second, rotated with its log;
// `logs --since` starts from them. A Follower reads a log across
// rotations (it holds its file open through the rename).
//
// # Health checks
//
// A run may declare (run.json "health") a readiness probe, a liveness
// probe, a memory cap (max_rss) and watched globs. Its supervisor runs
// them per attempt (health_monitor.go, probe.go) and for the run's life
// (watch.go), records verdicts in progress.json "health", events.jsonl
// and outbox.jsonl (follow-ups), and stops an unhealthy attempt as failed
// for the restart policy to decide; a watch restart is immediate. A run
// that declared none starts no goroutine, timer or watcher for them.
// Probes use no HTTP library: an HTTP probe is one GET over a TCP
// connection.
//
// # Waiting supervisors
//
// Pool keeps supervisors started ahead of their runs (`<supervisor> -`):
// each waits on stdin for a handover — the run's environment and
// run.json — then takes on the run's environment, working directory and
// stderr.log and supervises it like one started for it; with nothing on
// stdin (the pool closed) it exits. Start takes one when the spec has a
// Pool, else starts a supervisor itself.
//
// # Suspension
//
// A run whose session is suspended (its session record, package
// sessions, says so) is stopped in place by its supervisor (suspend.go):
// SIGSTOP to every process of the run, and its Clock — restart delays,
// template timeouts and delays, ready_timeout, liveness, max_rss — stops;
// restarts asked for meanwhile wait, kill and cancel apply. On resume
// progress.json records paused_ms before any process gets SIGCONT. Status
// is then suspended (live, not terminal).
//
// This package does not route messages (package actors does), interpret
// message bodies, or import the actor system: it is linked into the lean
// pi-actors-supervise binary that every run's supervisor is (and into
// the pi-actors CLI).
//
// # Crash behaviour
//
// A run survives the kernel: its supervisor is its own process. A kernel
// killed while it starts runs leaves no state directory without its
// run.json: one not yet published stays under its hidden staging name
// (removed by the next kernel, CleanStaging), and its supervisor, never
// handed its run, exits without starting anything. A
// supervisor that dies is detected by pid and start time and its run is
// recorded as exited with a reason; its process groups are killed — or,
// for a run that keeps its own durable state (a workflow), Resume starts
// a new supervisor on the same state directory. A kernel that a run's
// process started on demand is never part of the run's tree.
package runs
