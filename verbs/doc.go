// Package verbs is the verb layer: one typed request and one typed result
// per verb (spawn, message, inspect, watch, exec, call, register_tool,
// mailbox, kernel, and the knowledge operations query_graph, manage_graph,
// manage_changelog, … which embed knowledge/api's requests and decode with
// its errors), with json and jsonschema tags and doc comments, one
// Validate per request, and the compact text each front door prints. The
// CLI, the MCP server, the pi extension and `pi-actors top` are skins on
// it, so every front door has the same parameters, results and errors.
//
// A Spec describes a verb: how CLI words map to its parameters
// (DecodeCLI: key=value strings, key:=JSON values, a stdin object), how a
// JSON client's object maps to them (DecodeJSON: unknown parameters are an
// error naming them), and Run. Requests that need the kernel travel over
// the kernel socket (package verbs/wire) as their own JSON and are decoded
// into the same types by the kernel; the rest run in the caller's process
// (inspect reads state files directly, exec and call run in the
// foreground). Errors are *Error (an alias of wire.Error): a machine code,
// a message naming the parameter, a hint, and a sysexits exit code;
// Classify decides them for any error, in one place.
//
// session list reads the runs index and the session records (package
// sessions); suspend and resume ask the kernel. inspect view=trace joins a
// session's causal record with its runs' events (inspect_trace.go). Every
// call of a verb with a session, from outside a run, touches the session's
// activity stamp (Register).
//
// Besides the agent tool surface it holds what people watching runs use:
// logs (view=tail plus follow across log rotation), ps (a table of RunRow),
// the short verbs stop, kill, restart, rm and ls (each runs its long form,
// so for one run results and exit codes are the long form's; several runs
// or all go to the kernel as one message batch, each run reported), the
// kernel's runs stream
// (Events, StreamEvents: what top reads) and ProgressBar (a bar on a
// terminal's stderr for verbs that take seconds).
//
// It also holds a workflow's scheduler as the lean binary runs it
// (RunWorkflow: the leaf of a workflow run) with its Host: node runs are
// spawned and killed through the kernel in batches and observed through
// their own state files; and inspect view=dag.
//
// The lenient value types (Int, Bool, Text, the Loose* types) accept what
// the CLI's key=value form gives (strings) as well as what JSON clients
// send, so one struct serves both.
//
// This package does not import the actor system, SQLite or gopsutil: the
// pi-actors binary links it, and that binary is every run's supervisor.
// It does not generate JSON Schemas either (that library's start-up work
// would run in every supervisor); the full binary does, from these types.
// It never prints: front doors render Outcomes.
package verbs
