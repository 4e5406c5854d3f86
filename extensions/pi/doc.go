// Package piext owns the pi extension of pi-actors: the TypeScript source
// (*.ts, embedded in the binary) and its installation into pi's
// agent directory, where pi discovers it as <agent>/extensions/pi-actors/index.ts.
//
// The extension is a thin skin on the pi-actors CLI. It registers spawn,
// message, inspect, the knowledge tools (query_graph, manage_graph,
// manage_changelog, search_all, recall) and every user/packaged recipe
// tool as pi tools with the schemas `pi-actors schema --json` prints ([pi]
// tools in pi-actors.toml chooses which); keeps one `pi-actors bridge`
// per session through which it runs each call (a recipe: `call
// <recipe>`) in pi's cwd with pi's session id — or, without a bridge,
// `pi-actors <verb> - --json --text` per call with the parameters on stdin
// — and looks up the knowledge of every path pi reads, edits or writes (appended
// to that tool result once per path per session, within a token budget,
// never delaying pi more than 200 ms), the opt-in recall before a prompt
// and the opt-in session summary; and keeps one `pi-actors watch --json`
// per session whose lines it delivers into the session as follow-up
// messages, once each. docs/pi.md describes it for users.
//
// # On disk
//
// Install writes <agent>/extensions/pi-actors/ holding the *.ts sources
// (pi loads index.ts, which imports the others) and a marker file,
// .pi-actors-install, that says pi-actors wrote the directory.
// Install and Uninstall only ever replace or remove a directory that
// carries the marker: anything else there (a hand-written extension, a
// checkout of the TypeScript pi-actors) is ErrForeign and left alone.
//
// # Crash behaviour
//
// The new directory is staged, fsynced and renamed into place, so pi sees
// the old extension, the new one, or (for an instant during the swap) none
// — never a half-written file. Staging happens in
// <agent>/extensions/.pi-actors-install-* (and .pi-actors-uninstall-* for
// removal); pi does not load anything from there because it looks only one
// level deep. A stage left by a crash is removed by a later Install once it
// is an hour old.
//
// # Concurrency
//
// Install and Uninstall take no lock. Two concurrent Installs leave one
// complete extension directory; the loser returns an error.
//
// # What it does not do
//
// It does not install node, npm packages or pi, and never edits pi's
// settings.json: pi loads the extension with its own TypeScript loader, and
// the sources need nothing beyond node's built-ins at run time. The npm files
// beside the sources (package.json, package-lock.json, tsconfig.json, test/)
// exist only for the tests, which type-check the sources against the
// pinned @mariozechner/pi-coding-agent, drive them with a stub of pi's API,
// and run the real pi CLI against a scripted model (package pitest).
package piext
