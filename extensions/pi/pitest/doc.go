// Package pitest owns what tests need to drive the real pi coding agent
// (npm @mariozechner/pi-coding-agent, pinned by extensions/pi/package.json)
// without a real model: a scripted OpenAI-compatible chat endpoint, the
// pinned npm packages installed once per lock file, and the agent
// directory and command line that point pi at the endpoint.
//
// # The scripted model
//
// StartModel serves /v1/chat/completions (streaming SSE, as pi sends it,
// and plain JSON) and /v1/models on 127.0.0.1. Each request is answered by
// the first Step of the script that is not used up and fits it (Model,
// Prompt and Match are regular expressions over the request's model id,
// its first user message and its last message): a text answer, one or more
// tool calls, or an HTTP error. A request no step fits gets HTTP 400 naming
// the request, so a test whose conversation went elsewhere fails loudly
// (pi does not retry a 400). Every request is recorded — the body pi sent,
// its messages as plain text, the tools it offered — and Requests returns
// them in arrival order; GET /requests serves the same list as JSON, and
// Record appends each as one JSON line to a file, for a test in another
// process. Steps can be added while the model serves (Add).
//
// A script is JSON too (LoadScript), so a shell script or another program
// can hand one over:
//
//	[{"prompt": "review", "tools": [{"name": "read", "args": {"path": "src/pay/webhook.ts"}}]},
//	 {"match": "webhook", "text": "LGTM: {{last}}"},
//	 {"text": "fallback", "times": -1}]
//
// # What it does not do
//
// It never calls a real model and never reaches the network: the npm
// install is the only network access, and NodeModules skips the test
// (with a note) when the registry cannot be reached. It does not start pi
// for you beyond building the command (PiCommand): the test owns the
// process, its process group and its deadline.
//
// # Concurrency
//
// A Model serves requests concurrently (several pi processes may share
// one); choosing a step and recording a request happen under one lock, so
// every step is used at most Times times and the record is in the order
// steps were chosen.
package pitest
