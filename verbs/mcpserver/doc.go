// Package mcpserver is the MCP front door: `pi-actors mcp` (exec'd into
// the full binary, pi-actors-kernel) serves the verb layer's tools over
// stdio with the official Go SDK. It owns the tool catalogue (the core
// verbs' input schemas generated from their request types with
// jsonschema-go, one tool per user and packaged recipe, explicit
// annotations), the refresh of recipe tools when recipe files change
// (the SDK then sends notifications/tools/list_changed), the follow-up
// pump (the connection's session's follow-ups pushed as
// notifications/message, each once), and a guarded stdio transport that
// answers malformed frames instead of ending the connection.
//
// Every call goes through package verbs exactly as the CLI's does: same
// decoding, validation, results and errors (a failure is an isError
// result with the CLI's code, message and hint). This package holds no
// verb logic of its own, and the lean pi-actors binary never links it
// (the SDK and the schema library would cost every run's supervisor at
// start-up).
package mcpserver
