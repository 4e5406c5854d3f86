// Package mcpserver is the MCP front door: `pi-actors mcp` (exec'd into
// the full binary, pi-actors-kernel) serves the verb layer's tools over
// stdio with the official Go SDK. It owns the tool catalogue (the core
// verbs' input schemas generated from their request types with
// jsonschema-go, one tool per user and packaged recipe, explicit
// annotations), the refresh of recipe tools when recipe files change
// (the SDK then sends notifications/tools/list_changed), the follow-up
// pump (the connection's session's follow-ups pushed as
// notifications/message, each once), the runs as resources
// (pi-actors://run/<id>/status and …/tail, listed from the kernel's runs
// stream once a client asks, with resources/updated for subscribers), and
// a guarded stdio transport that answers malformed frames instead of
// ending the connection. A tools/call spelt differently from the listed
// name (my-tool for my_tool) reaches the listed tool.
//
// Every call goes through package verbs exactly as the CLI's does: same
// decoding, validation, results and errors (a failure is an isError
// result with the CLI's code, message and hint). This package holds no
// verb logic of its own, and the lean pi-actors binary never links it
// (the SDK and the schema library would cost every run's supervisor at
// start-up).
//
// Concurrency: one Server per connection. The follow-up pump and the
// runs stream each run in one goroutine for the connection's life; the
// SDK runs tool and resource handlers concurrently, and they share the
// tool table and the run table under their mutexes.
//
// Crash behaviour: the server keeps no state of its own. A kernel that
// goes away ends the pump and the runs stream, which reconnect (starting
// it) every 2 s; follow-ups stay in the kernel's durable queue meanwhile,
// and the stream's next first frame brings the run list up to date.
package mcpserver
