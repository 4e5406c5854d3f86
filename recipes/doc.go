// Package recipes owns recipes: the recipe model, JSON and Markdown
// loading, the discovery layers (user recipes in <agent>/recipes, then the
// packaged library embedded in the binary), imports, the tool schema each
// recipe gets, register_tool's writes, usage metadata, and the doctor's
// findings (risk labels, shadowing, invalid recipes, remediations).
//
// A recipe is a command template plus metadata: args and defaults,
// async (it starts a detached run), artifacts, mailbox contract, restart
// policy, state_dir. A recipe in <agent>/recipes is an agent tool by
// location. Writes are atomic (internal/fsutil) and validated in full
// first: a bad registration writes nothing. Names are looked up spelt
// either way (names.go: the exact id, else the one id differing in case
// and - against _), and register_tool refuses a new name another recipe
// spells differently, so every recipe stays reachable by its name.
//
// The command-template engine itself is package recipes/template. This
// package does not know about runs or the kernel, and it never starts a
// process.
package recipes
