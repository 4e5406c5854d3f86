// Package rooms owns the coordination data of a run: its room (timeline,
// roster, compaction record), its branches' inboxes, the communication
// snapshots actors read, and dead letters — and the room and branch
// routes as functions over those files. The kernel checks sessions and
// ownership (package runs), calls these functions with the run's state
// directory, forwards what they hand back to the run's own inbox, and fans
// new entries out to live watchers; rooms imports neither runs nor the
// kernel, and takes state directories as plain paths.
//
// # Files (in a run's state directory <dir>)
//
//   - rooms/main/messages.jsonl — the timeline, append-only: one entry per
//     line, the room-visible envelope (mailbox.Envelope order, its id —
//     the caller's or a new uuid) then received_at (RFC 3339 UTC with a
//     fixed nine-digit fraction). received_at is strictly increasing in
//     file order, so Since(dir, t) and a Cursor miss nothing and repeat
//     nothing.
//   - rooms/main/roster.json — {"room":"main","members":{<address>:
//     Member}}, members in join order; a member that leaves stays (status
//     left).
//   - rooms/main/compaction.json — {compacted_at, dropped_count,
//     first_kept_at?, last_kept_at?, max_messages} of the last compaction.
//   - communication.json and branches/<b>/communication.json — Snapshot:
//     {contacts?, parent?, root, self, rooms:[{address, members?, name}],
//     updated_at}.
//   - branches/<b>/inbox.jsonl — a branch inbox, a mailbox.Queue: inbox
//     records (queued → claimed → handled | failed, an id on every record
//     before it is claimed) plus update lines until they are folded.
//   - dead_letters.jsonl — DeadLetterRecord {id, reason, ts, state_dir?,
//     message}: messages that expired (ttl_ms, deadline) or could not be
//     delivered. The kernel keeps a coordinator-level file too
//     (DeadLetterAt).
//   - wake.jsonl — doorbells (mailbox.Wake): room.message for each new
//     entry (but the run's own join at spawn, SeedDefaultRoom or
//     EnsureDefaultRoom, which nobody waits for), branch.message,
//     branch.inbox.claim, branch.inbox.status.
//
// # Invariants
//
//   - Validate fully, then write: a room post's from (run:<run> or
//     branch:<run>/<b>, required) and metadata.recipients (same-run branch
//     addresses), a branch message's from, are checked before any byte is
//     written; a multicast with one bad recipient writes nothing.
//   - Durable first: every entry and inbox record is appended under its
//     file's lock before a wake or a forward; nothing accepted is dropped —
//     compaction removes only the oldest well-formed timeline entries and
//     handled/failed branch records beyond their bounds, never a malformed
//     line; an expired message is moved to the dead letters, with why.
//   - Idempotent: a caller-chosen id appended again (to the timeline, a
//     branch inbox, the dead letters) reports duplicate and writes
//     nothing; a multicast copy's id is <entry id>.<branch>, so retrying a
//     room post completes its deliveries without repeating any.
//
// # Deliberate differences from the reference
//
// The reference rewrites the roster only when a member changes or its
// last_seen is stale (PI_ACTORS_ROOM_ROSTER_MIN_MS); this package applies
// the same rule to communication snapshots (PI_ACTORS_COMMUNICATION_
// SNAPSHOT_MIN_MS): a snapshot whose content did not change but for
// last_seen and updated_at is not rewritten while it is fresh (the branch
// route rewrites its snapshots on the same rule). Timeline compaction
// keeps exactly PI_ACTORS_ROOM_MAX_MESSAGES lines (malformed lines, never
// dropped, count toward them) but runs once the timeline is max/16 lines
// past it (not after every append); branch inbox trimming to
// PI_ACTORS_BRANCH_INBOX_TERMINAL_RETAINED happens as the queue folds, once
// the handled/failed records are half the bound past it (see
// mailbox.Queue). Both bound the cost of a full room or inbox to O(1) per
// message. Claims record claimed_pid when the claimer names the process
// that will finish the message, and a claim is taken over once that
// process is gone or PI_ACTORS_BRANCH_CLAIM_LEASE_MS passed; ttl_ms and
// deadline (seed 001) are checked at send and at claim. Result counts
// (message_count, roster_count) are those right after the room entry,
// before a multicast's recipients join.
//
// This package does not route to runs, tools, sessions or the
// coordinator, check sessions, watch files, start processes or talk to
// the kernel; the live fan-out of new entries belongs to the kernel's
// room actors (a Cursor gives them the entries).
//
// # Concurrency
//
// Every room operation holds the room lock (the flock of rooms/main,
// mailbox.Update) from reading the roster to writing the snapshots, so any
// number of goroutines and processes may post to one room; branch inboxes
// are mailbox.Queues, shared the same way. A process remembers each room's
// and inbox's state (bounded: 256 rooms, 64 inboxes) so an operation reads
// only what other processes appended since its last one.
//
// # Crash behaviour
//
// A writer killed mid-append leaves a torn last line; the next append
// closes it off as its own malformed line (kept, reported as a diagnostic
// by Status) and the new entry is intact. JSON files are replaced
// atomically. A claimer that dies leaves its record claimed until another
// claimer takes it over (at once when the claim named the dead process,
// else after PI_ACTORS_BRANCH_CLAIM_LEASE_MS, default 5 min). A crash
// between a timeline append and its multicast deliveries is repaired by
// retrying the post with the same id.
package rooms
