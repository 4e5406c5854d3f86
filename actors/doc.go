// Package actors is the kernel: the proto.actor system that hosts one run
// actor per run (under a runs actor with one-for-one restart supervision),
// one session actor per coordinator session (its durable follow-up queue
// and its watchers), one room actor per live room (it fans new timeline
// entries out to the room's watchers; started on first use, stopped when
// idle), one knowledge actor per open knowledge store (it owns the
// *knowledge.Store and applies its writes one at a time; opened on first
// use, closed when idle; runs that end and task.result messages are
// spooled for it off the run's path and written in before its next use),
// and the unix-socket server that
// answers the verb layer's requests (spawn, message, followups, watch,
// watch_room, status, stop, knowledge, knowledge_ingest, events). A
// streaming operation (watch, watch_room, events, knowledge_ingest) owns
// its connection: it ends when the client closes it — or shuts down its
// writing half — and anything the client sends meanwhile is ignored.
//
// message routes every address: run:<id> (control types applied here or
// by the run's supervisor, others queued for the run's consumer),
// room:<run> and branch:<run>/<b> (package rooms does the file work; the
// kernel checks the session first, rooms forwards a branch message to the
// parent run's inbox, and the kernel pokes the room actor), tool:<name> (the recipe tool runs
// as the verb layer's call), coordinator and session:<id> (the sender's
// outbox). Expired messages and messages to runs that do not exist are
// kept in dead-letter logs (the run's, or <agent>/tmp/pi-actors/
// dead_letters.jsonl); a caller-chosen id is stored once on every route.
// The messages of a batch to one destination are handled in order.
//
// Workflow runs (spawn workflow=…, package workflows) are runs whose leaf
// is the workflow's scheduler: the kernel checks the whole workflow and
// every node's spawn before it starts one, starts each attempt of a node
// at most once and only while its workflow is live, resumes a workflow
// whose supervisor was lost on the same state dir, kills its node runs
// with it (control.kill), wakes an ended workflow for control.retry, and
// reports a workflow once (its node runs raise no follow-up of their own).
//
// Sessions (suspend.go, hold.go): session suspend writes the session's
// record (package sessions), rings every live run's supervisor and waits
// for each to confirm, then writes a snapshot; while the record holds the
// session, messages to its runs (run:, room:, branch:; not control.kill or
// cancel) go to its durable held queue, its follow-ups stay queued and its
// spawns are refused; resume rings again, hands the held messages on in
// order, then lets the follow-ups go. The kernel restores held sessions at
// start, finishes an interrupted resume, and suspends idle sessions
// ([sessions] auto_suspend_after). Every spawn and message the kernel
// accepts is added, with its cause, to the session's causal record
// (trace.go): appended once per request, before it is answered.
//
// # Invariants
//
// No run state lives only in memory: a run actor is rebuilt from the runs
// index and the run's state files, and a supervisor is trusted only by pid
// and process start time. Follow-ups are appended to the session's queue
// (idempotent by id) before any watcher is told. Bad input is refused
// before a state directory is created or a process started.
//
// This is the only package that imports protoactor, and only the
// pi-actors-kernel binary links it. It does not own run execution (package
// runs: every run has its own supervisor process, so runs survive the
// kernel), recipe loading (package recipes) or message files (package
// mailbox); it is never in the data path of a run's output.
//
// # Concurrency
//
// Socket requests are handled on their own goroutines; a batch fans out
// with bounded parallelism (one destination's messages in order) and
// answers in order. A live run's access check is remembered while its run
// actor lives. State that actors share
// is reached by messages; the few maps outside actors are mutex-guarded.
//
// # Crash behaviour
//
// A kernel that crashes leaves every run running. The next kernel (started
// on demand by any verb) re-attaches live supervisors, settles runs that
// ended meanwhile, and queues each terminal follow-up once; a suspended
// session stays suspended (its record is read before the first request).
// A knowledge
// write is one SQLite transaction, committed before it is answered: a
// crash loses nothing acknowledged, and the next Open recovers the WAL.
package actors
