// Package workflows owns workflows: seed 001's DAG (nodes with
// depends_on, metadata {timeout_ms, retry, priority}, context, an optional
// execution_order and a policy {max_concurrency, fail_fast,
// default_retry}) checked whole before anything starts (Parse), its
// layers, the workflow's durable state (workflow.json in the workflow
// run's state directory) and the scheduler (Engine) that turns each node
// into a child run <workflow>-<node> through a Host.
//
// # Invariants
//
// Parse rejects, naming the node and the field: an unknown dependency, a
// cycle (named node by node), a duplicate id, an execution_order that
// contradicts depends_on, bad retry/timeout numbers, a node that says
// twice (or never) what it runs, an unknown key. A node's keys that are
// spawn parameters (Options.SpawnKeys) go to its child run's spawn as
// given, so a spawn parameter added later is a node key at once.
//
// The state file is written whole and atomically (internal/fsutil) after
// every change and before every start: a node is recorded "starting" with
// its attempt number before its child run is asked for, and the child
// carries that attempt (runs.NodeRef), so a scheduler that restarts finds
// the child of an attempt it asked for instead of starting it again.
// Finished nodes are never run again; running ones are observed through
// their own run's files.
//
// A dependency condition is met by a fact about the dependency's node:
// done and started by its status, ready by the readiness the Host reports
// of its child run (Observation.Ready, kept in NodeState.Ready; a node
// that ended done meets it too). Parse accepts the conditions listed in
// conditions.
//
// This package does not start processes or talk to the kernel: the Host
// (the lean binary's kernel client, package verbs) does. It does not know
// the spawn parameters either; they are given to Parse.
//
// Time the workflow spent suspended with its session (Engine.Paused, read
// when a timeout or a retry delay falls due) counts for neither.
//
// # Concurrency
//
// An Engine is driven by one goroutine (Run); Retry and Kill may be called
// from others and are applied by that goroutine.
//
// # Crash behaviour
//
// Everything the scheduler knows is in workflow.json. One scheduler runs
// per workflow at a time: it holds workflow.lock for its life. A
// scheduler killed at any point resumes from the file: "starting" nodes
// are matched with their child runs (or asked for again — the kernel
// starts an attempt at most once), running ones are observed, pending
// ones start when ready.
package workflows
