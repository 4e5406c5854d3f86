// Package sessions owns what a coordinator session keeps on disk besides
// its runs: the session record (active, suspended or resuming, since when,
// by whom), its activity stamp, the snapshot written when it is
// suspended, and the shape and place of its causal record (the trace
// log: one item per spawn and message with its cause, seed 002's
// "triggers" relation). Files live under <agent>/tmp/pi-actors/sessions/
// and <agent>/tmp/pi-actors/trace/, named after the session (Name).
//
// # Invariants
//
// A session record is written whole and atomically (internal/fsutil); it
// is the one durable fact that a session is suspended: the kernel holds
// the session's messages and follow-ups while it says so, and every run
// supervisor of the session keeps its run stopped (package runs reads it).
// A session without a record is active. "completed" is never stored: a
// session whose runs have all ended reads as completed.
//
// This package does not suspend anything, route messages or write the
// trace log (the kernel does, package actors), and it does not read runs
// (the verb layer joins records with the runs index). It is lean: every
// supervisor links it.
//
// # Concurrency
//
// Records are replaced atomically; a reader sees the old record or the
// new one. Touch only changes a file's modification time.
//
// # Crash behaviour
//
// A crash leaves the last record written: a session suspended stays
// suspended across a kernel restart, and a session caught resuming is
// resumed again by the next kernel.
package sessions
