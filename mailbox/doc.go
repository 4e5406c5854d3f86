// Package mailbox owns the message layer's data: the actor address
// grammar, the typed message envelope, and the durable JSONL files that
// carry messages — inboxes with claim/handled/failed under a lock, wake
// doorbells and outbox records — built on one JSONL primitive.
//
// # Addresses and envelopes
//
// An address is coordinator, knowledge (the kernel's knowledge actor),
// run:<id>, session:<id>, tool:<name>, branch:<run>/<branch> or room:<run>
// (room:<run>/main is accepted and written as room:<run>). Every id is a token ^[A-Za-z0-9_.-]+$ other
// than "." and "..", because ids become path elements. An Envelope is
// {to, type, body, correlation_id, from, metadata, reply_to, summary} plus
// an optional caller id and optional expiry bounds (ttl_ms, deadline); Normalize validates one and writes addresses
// canonically. Invalid addresses and envelopes are *AddressError and
// *EnvelopeError; both match ErrInvalid.
//
// # On-disk formats
//
// Every file is JSONL: one JSON object per line, "\n"-terminated, UTF-8,
// compact, no HTML escaping. Each file <dir>/<name> has a lock file
// <dir>/.<name>.lock (flock, never removed). Files and lock files are
// created mode 0600, missing directories 0700. Times are RFC 3339 UTC with
// nanoseconds.
//
//   - inbox.jsonl (a run's, or branches/<b>/inbox.jsonl): the envelope
//     fields in envelope order (or a caller's raw object), then
//     id, queued_at, received_at, status. Status goes queued → sent →
//     claimed → handled | failed (sent is optional); a claim adds claimed_at
//     and claimed_by, a status change adds <status>_at plus the caller's
//     metadata (error, bytes, …). A record without status counts as queued.
//   - a Queue's inbox (branches/<b>/inbox.jsonl): the same records, plus
//     update lines {"status":"update","ref":<id>,"set":{…}} that a claim or
//     status change appends instead of rewriting the file; a fold later
//     writes each set into its record and drops the update line, leaving
//     exactly what an Inbox rewrite would have written.
//   - wake.jsonl: {actor, id, metadata?, reason, state_dir, ts}.
//   - outbox.jsonl: {body?, correlation_id?, data?, delivery, event, from?,
//     id, level, metadata?, reply_to?, summary, to?, ts, type?}; delivery is
//     log|notify|followup, level info|warning|error. Older records without
//     id are read as "<run>:<line index>".
//
// # Invariants
//
//   - Durable first: a message is in its inbox file, under the lock, before
//     anyone is told about it; a wake is only a doorbell.
//   - Idempotent: an inbox holds at most one record per caller-chosen id;
//     appending the same id again returns the stored record and writes
//     nothing. Every record has an id before it is claimed (legacy id-less
//     records get one at claim time).
//   - Nothing is dropped: a malformed line is reported by the readers
//     (Line.Err) and kept verbatim by every rewrite; Rewrite refuses a
//     result that would lose one. Only Inbox.KeepTerminal compaction removes
//     records, and only handled/failed ones; wake.jsonl, which holds no
//     message, keeps its newest records (WakeLimit).
//   - A record is handed out by Claim at most once per status: claims are
//     read-modify-write under the lock.
//
// This package does not interpret message bodies, route messages, deliver
// them to a process (FIFOs and pipes belong to runs), know run state-dir
// layout beyond the file it is given, or watch files (the supervisor and
// kernel watch wake.jsonl and inboxes with inotify).
//
// # Concurrency
//
// Every write — Append, the Inbox and Queue operations, Rewrite, an
// Update transaction — holds the file's
// lock (fsutil.LockTimeout, LockWait = 5 s, then an error wrapping
// fsutil.ErrLockTimeout), so goroutines and processes may share files
// freely. Appends write all lines of one call with a single write(2) on an
// O_APPEND descriptor. Rewrites (claim, sent, done) replace the file by
// rename, so a watcher must watch the directory, not the file's inode.
// Read, Tail and a Follower take no lock: they see a consistent file (old
// or new after a rewrite) whose last line may be Partial while a write is
// in progress.
//
// # Crash behaviour
//
// Append does not fsync: a completed append survives any process crash
// (it is in the page cache) but not a power loss; AppendSync and
// Inbox.Sync add fsync for callers that need it. A crash mid-append can
// leave a torn last line. The next Append under the lock sees the missing
// newline and writes one first, so the fragment becomes its own malformed
// line (kept) and the new record is intact; a Rewrite closes it off the
// same way. A failed write is truncated back before the lock is released.
// Rewrites are atomic (temp file, fsync, rename, fsync dir): a crash
// leaves the old or the new file, plus at worst a stray .<name>.tmp-*
// file. Locks are flocks, released by the kernel when the holder dies, so
// a crashed writer never blocks the others. A consumer that dies between
// Claim and Done leaves its record claimed; Claim(owner, StatusClaimed)
// takes it over (a Queue does so by itself once the claimant's pid is gone
// or its lease ran out).
package mailbox
