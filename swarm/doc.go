// Package swarm holds the packaged actors that need no LLM: the
// actor-worker, the locker and the room-swarm coordinator. They run as
// the hidden verb `pi-actors swarm <role>` of the lean binary, launched
// by the packaged recipes actor-worker, locker and room-swarm, inside an
// ordinary run (identity from $PI_ACTORS_RUN_ID, $PI_ACTORS_STATE_DIR,
// $PI_ACTORS_SESSION). They talk to the kernel as the CLI does (package
// verbs over verbs/wire) to send messages and spawn runs, and read and
// claim their inboxes directly (packages runs and rooms).
//
//   - worker: a member of a room (branch:<room>/<branch>). It joins the
//     room, claims messages from its branch inbox, runs each task's
//     command template (verbs' exec), writes the output as an artifact,
//     posts task.claim and task.result to the room and task.result to the
//     coordinator; with a locker it asks the locker for work (lock.claim,
//     reply_to its branch, wait_ms: the claim waits there for a task) and
//     reports lock.complete / lock.fail. It
//     stays until control.kill reaches its branch inbox (then it posts
//     actor.leave and exits 0) or its run is stopped.
//   - locker: a lease-based task queue and resource lock served from its
//     run's own inbox: lock.enqueue, lock.claim, lock.complete,
//     lock.fail, lock.acquire, lock.renew, lock.release, lock.status
//     (coord.* are aliases), control.stop / control.cancel. Replies go to
//     the message's reply_to (else from). A lease that ran out is taken
//     over: the task goes back to the front of the queue, the lock is
//     free. A claim with wait_ms that finds nothing waits (queue.json
//     waiting) for the next free task, else hears lock.empty when its
//     wait is over.
//   - coordinate: the room-swarm coordinator: it spawns a locker and N
//     workers in its own room, enqueues the tasks, waits until every
//     task has a result in the room timeline, reports, and stops them
//     all.
//
// # Files
//
// Worker (in its run's state dir): worker-status.json {artifact_dir,
// branch, room, run, state, handled, failed, stale_claims, last_*, ts},
// worker-events.jsonl (worker.started, task.handled, task.failed,
// worker.stopping, worker.done) and <artifact_dir>/<task id>.txt, the
// output of each task.
//
// Locker (in its run's state dir): queue.json {items:[{id, task,
// resources, enqueued_at, attempts}], leased:{id: {…, owner, claimed_at,
// expires_at}}, completed:{id: owner}, failed:{id: error}, waiting:[{owner,
// reply_to, from?, lease_ms?, message_id, since, until}]},
// locks.json {resource: {owner, task?, expires_at}} and journal.jsonl,
// one line per state change ({ts, event, …}). The JSON files are written
// atomically before the journal line and before any reply, so every
// state change is on disk before anyone hears of it; a caller-chosen
// task id is enqueued once.
//
// Coordinator: swarm-summary.json {tasks, done, duplicates, by_worker,
// runs} in its state dir.
//
// This package does not start processes other than through the kernel
// (spawn) and the template engine (a task's command), does not hold
// state only in memory, and does not call an LLM.
//
// # Concurrency
//
// Each actor is one process handling one message at a time; the locker
// is the only writer of its files. Any number of workers may share a
// locker and a room.
//
// # Crash behaviour
//
// A worker killed mid-task leaves its branch message claimed by its pid:
// the next claimer of that branch inbox takes it over; its locker lease
// runs out and the task is handed to another worker. A locker killed
// between writing its state and marking the inbox message handled
// handles that message again when restarted (enqueues are idempotent by
// id).
package swarm
