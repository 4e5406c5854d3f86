// Package template is the command-template engine: it parses a template
// graph, resolves it against values into a Plan, and executes the plan.
//
// A template is a string (one command), an array (a sequence of nodes) or
// an object node with controls: label, parallel, when, args, defaults,
// timeout, delay, output, retry, failure, recover, repeat and template.
// A string is split into words the way a POSIX shell would — before any
// placeholder is substituted — and each word is substituted on its own, so
// a value with spaces stays one argument. The executable is started
// directly: this package never runs a shell. Words that are empty after
// substitution are dropped, except the command word.
//
// Placeholders: {name}, {name=default}, {name:type}, {name:type=default},
// {a??fallback}, {cond?yes:no}, {!cond?yes:no}, {items[N]}, {items[index]},
// arithmetic such as {index+1} and zero-padded {_(index+1)}. Values come
// from the reserved repeat values (index, prev, next, repeat and their
// padded forms), then the caller, then defaults from the nearest node out,
// then the inline default. Caller values are literal; defaults that refer
// to other values are resolved recursively, at most five levels deep.
//
// Planning (NewPlan) resolves everything and checks every control before
// a process starts, so bad input never starts anything. Execution (Runner)
// runs each leaf in its own process group. A timeout or an abort sends
// SIGTERM to the group, waits the kill grace, then sends SIGKILL; when a
// leaf's command exits, whatever it left in its group is stopped the same
// way, so nothing a composition started outlives it. Exit status is the
// command's own, 128+n for a signal death and 124 for a timeout.
//
// Failure scopes decide how far a failure reaches: continue records it and
// clears the step's output; branch stops the enclosing sequence (in a
// parallel join only that branch fails); root aborts the composition.
// Parallel joins are soft-quorum: failures degrade the join but do not fail
// it unless a scope escalates.
//
// This package does not know about recipes, runs or the kernel; recipes
// expand their imports into a plain graph before calling Parse.
//
// # Concurrency
//
// A Plan is immutable once built and may be run many times. A Runner may
// run several plans at once. OnEvent is called from many goroutines.
package template
