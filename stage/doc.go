// Package stage owns the steps of the packaged pipeline recipes that need
// no LLM: the hidden verb `pi-actors stage <name> key=value… [-- argv…]`
// of the lean binary, which recipes run as `{pi_actors=pi-actors} stage
// <name> …` between their pi sub-agents.
//
//   - actor-message: stdin becomes the body of a typed envelope (JSON
//     when it parses, else text), validated, and sent through the kernel
//     (from $PI_ACTORS_ADDRESS inside a run); prints the envelope, or
//     passes stdin through (echo=body).
//   - await: passes stdin through, then appends the first control.reply
//     or control.revise (types=) claimed from the run's own inbox under
//     "## Coordinator reply" or "## Coordinator revision", or the reply
//     given= without waiting; a message of another type is marked failed
//     with the reason (never dropped); none within wait= exits 75.
//   - quorum: passes a parallel join (`--- branch: … status: … ---`)
//     through when at least min= branches are done, else exits 65 naming
//     the failed branches.
//   - artifact-write: writes stdin to path= (create refuses an existing
//     file, overwrite replaces it atomically, append adds one write).
//   - artifact-manifest: path, size, sha256 and modification time of a
//     file, with a title, status and summary, as JSON.
//   - changelog-section: the `## ` section of a changelog whose heading
//     names version=.
//   - validate: runs the argv after `--` in dir= in its own process
//     group with a timeout and prints a bounded report (status, exit,
//     duration, the last lines; the whole output is kept in a file); it
//     exits 0 unless strict=true, so a pipeline's reviewers see a failing
//     check instead of losing it.
//
// Every stage checks all of its parameters before it reads stdin, writes
// a file, sends a message or starts a process, and names the parameter
// and the fix when one is wrong (exit 64 or 65).
//
// # What it does not do
//
// No shell: validate runs exactly the argv it is given (the packaged
// utility-validation-wrapper chooses `bash -c` itself, and is labelled
// risk.shell and risk.eval for it). Stages never call a model; the pi
// sub-agents are leaves of the recipes themselves.
//
// # Concurrency
//
// A stage is one short-lived process per use; await claims from the
// run's inbox under its lock (package runs), so two awaits never take the
// same message.
//
// # Crash behaviour
//
// artifact-write replaces a file atomically (internal/fsutil): a crash
// leaves the old content or the new, never a mix. A message is durable
// once the kernel answered; await marks a claimed message handled only
// after it printed it. validate's command is in its own process group:
// a timeout or a stop (SIGTERM) sends SIGTERM to the group, waits the
// kill grace, then SIGKILL; anything the command left behind is killed
// when it exits.
package stage
