// Package top is `pi-actors top`, the live terminal inspector: runs as a
// tree (parent → child runs) with status, elapsed time, restarts, CPU,
// RSS, the last output line and a stalled marker; a detail pane for the
// selected run (its status facts, the tail of stdout and stderr, its
// events and mailbox), a full-screen log view that follows, the session's
// follow-ups, a filter, a session scope, a cluster scope, and kill /
// restart with a confirmation line. It is built on Bubble Tea v2 and Lip
// Gloss v2.
//
// It is a skin on the verb layer and the kernel, like every front door:
// the run list comes from the kernel's runs stream (verbs.StreamEvents —
// the kernel pushes changes, top never scans run directories), the
// detail pane and the logs from the inspect verb's run views, kill and
// restart are the kill and restart verbs (message control.kill /
// control.restart), and the follow-ups are read from the session's queue
// without draining it (they stay for the agent).
//
// The cluster scope (key c or --cluster, clustered kernels only) adds
// every other node's runs with a NODE column: they are asked for every
// 2 s through this node's kernel (verbs.ClusterPs, the data of ps
// --cluster, this node skipped — its rows still come from the stream),
// and another node's run is named run:<id>@<node> for the detail pane,
// the logs, kill and restart, which the verbs route to that node. Nodes
// that are not up or do not answer are named, their runs not listed.
// Without the scope nothing is polled: a kernel without [cluster] draws
// exactly what it drew before.
//
// It lives in the full binary (`pi-actors-kernel top`, which the lean
// `pi-actors top` execs): the TUI libraries never load in a run's
// supervisor. It works at 80×24, honours NO_COLOR and --no-color, and
// with --once (or when stdout is not a terminal) prints one plain frame
// and exits.
//
// # Concurrency
//
// The model is only touched by Bubble Tea's event loop. The stream runs
// in one goroutine that hands frames to the program (Program.Send) and
// ends with the context Main cancels on quit; loading the detail pane,
// acting on a run and polling the other nodes are tea.Cmds (one poll
// chain at a time: a poll's answer schedules the next, answers of a
// chain the scope's toggle ended are dropped).
package top
