package top

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/pi-actors/pi-actors/internal/termtext"
	"strings"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/pi-actors/pi-actors/verbs"
)

// detail is the detail pane of one run, read through the inspect verb.
type detail struct {
	facts   string   // view=status's first line
	stdout  []string // view=tail
	stderr  []string
	events  []string // view=events
	mailbox []string // view=mailbox
	room    []string // the run's room: status facts, then the last entries
	err     string
}

// logView is the full-screen log of one run.
type logView struct {
	dir, run string // the row's rowKey and address
	stream   string // stdout or stderr
	lines    []string
	path     string
	err      string
}

// Lines each part of the detail pane reads.
const (
	detailTail   = 4
	detailEvents = 3
	detailInbox  = 2
	detailRoom   = 3
	logLinesMax  = 500
)

// inspect runs `inspect target=run:<run> view=<view> lines=<n>`; run is
// a row's address (<id>@<node> for another node's run: the inspect verb
// routes it).
func inspect(env *verbs.Env, run, view string, n int) (*verbs.Outcome, error) {
	return inspectTarget(env, "run:"+run, view, n)
}

// inspectTarget runs `inspect target=<target> view=<view> lines=<n>`.
func inspectTarget(env *verbs.Env, target, view string, n int) (*verbs.Outcome, error) {
	req := &verbs.Inspect{Target: target, View: view}
	if n > 0 {
		req.Lines = verbs.LooseInt{Value: verbs.Value{V: n, Set: true}}
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	return verbs.Find("inspect").Run(context.Background(), env, req)
}

// textLines are an outcome's text lines after the first (the facts line).
func textLines(o *verbs.Outcome) []string {
	lines := strings.Split(o.Text, "\n")
	return lines[1:]
}

// resultMap is an outcome's result as a map: the verb's own on this
// node, decoded JSON when another node's kernel answered.
func resultMap(o *verbs.Outcome) map[string]any {
	switch r := o.Result.(type) {
	case map[string]any:
		return r
	case json.RawMessage:
		var m map[string]any
		if json.Unmarshal(r, &m) == nil {
			return m
		}
	}
	return nil
}

// strs is a JSON list of strings, each with its control characters
// visible (a run's output never reaches the terminal raw).
func strs(v any) []string {
	switch list := v.(type) {
	case []string:
		out := make([]string, len(list))
		for i, s := range list {
			out[i] = termtext.Visible(s)
		}
		return out
	case []any: // decoded JSON
		out := make([]string, 0, len(list))
		for _, s := range list {
			if s, ok := s.(string); ok {
				out = append(out, termtext.Visible(s))
			}
		}
		return out
	}
	return nil
}

// loadDetail reads the detail pane of a run: run is the row's address,
// dir its rowKey.
func loadDetail(env *verbs.Env, run, dir string) tea.Cmd {
	return func() tea.Msg {
		d := &detail{}
		st, err := inspect(env, run, "status", 0)
		if err != nil {
			d.err = verbs.Classify(err).Message
			return detailMsg{dir: dir, d: d}
		}
		d.facts, _, _ = strings.Cut(st.Text, "\n")
		if o, err := inspect(env, run, "tail", detailTail); err == nil {
			if m := resultMap(o); m != nil {
				d.stdout, d.stderr = strs(m["stdout"]), strs(m["stderr"])
			}
		}
		if o, err := inspect(env, run, "events", detailEvents); err == nil {
			d.events = textLines(o)
		}
		if o, err := inspect(env, run, "mailbox", detailInbox); err == nil {
			d.mailbox = textLines(o)
		}
		d.room = loadRoom(env, run)
		return detailMsg{dir: dir, d: d}
	}
}

// loadLogs reads the last lines of a run's log (view=tail).
func loadLogs(env *verbs.Env, lv logView, n int) tea.Cmd {
	return func() tea.Msg {
		out := &logView{dir: lv.dir, run: lv.run, stream: lv.stream}
		o, err := inspect(env, lv.run, "tail", max(1, min(n, logLinesMax)))
		if err != nil {
			out.err = verbs.Classify(err).Message
			return logsMsg{dir: lv.dir, l: out}
		}
		if m := resultMap(o); m != nil {
			out.lines = strs(m[lv.stream])
			out.path, _ = m[lv.stream+"Log"].(string)
		}
		return logsMsg{dir: lv.dir, l: out}
	}
}

// loadFollowups reads the session's follow-up queue without draining it.
func loadFollowups(env *verbs.Env) tea.Cmd {
	return func() tea.Msg {
		if env.Session == "" {
			return followupsMsg{err: fmt.Errorf("no session: set PI_ACTORS_SESSION or pass session=<id> to see its follow-ups")}
		}
		list, err := verbs.PeekFollowups(env, 50)
		if err != nil {
			return followupsMsg{err: fmt.Errorf("%s", verbs.Classify(err).Message)}
		}
		return followupsMsg{list: list}
	}
}

// refreshPane reloads what the open pane or the log view shows; timed is
// true on the clock's tick (the follow-ups reload only then).
func (m *Model) refreshPane(timed bool) tea.Cmd {
	switch {
	case m.mode == modeLogs && m.logs != nil:
		return loadLogs(m.env, *m.logs, m.high-2)
	case m.mode != modeList:
		return nil
	case m.pane == paneDetail:
		if r := m.selected(); r != nil {
			return loadDetail(m.env, address(r), rowKey(r))
		}
	case m.pane == paneFollowups && (timed || m.followups == nil):
		return loadFollowups(m.env)
	}
	return nil
}

// runAction kills or restarts a run (a row's address) with the kill /
// restart verbs (the message verb's control.kill / control.restart) and
// reports the outcome.
func runAction(env *verbs.Env, verb, run string) tea.Cmd {
	return func() tea.Msg {
		out, err := verbs.Find(verb).Run(context.Background(), env, &verbs.RunRef{Run: verbs.RunList{run}})
		if err != nil {
			ce := verbs.Classify(err)
			return actionMsg{note: fmt.Sprintf("%s run:%s failed: %s", verb, run, ce.Message)}
		}
		first, _, _ := strings.Cut(out.Text, "\n")
		if id, node, ok := strings.Cut(run, "@"); ok {
			first = verbs.QualifyRun(first, id, node) // the node answered with its bare run:<id>
		}
		return actionMsg{note: verb + ": " + first}
	}
}

// stream reads the kernel's runs stream into the program until ctx ends,
// reconnecting (and starting the kernel) when it goes away.
func stream(ctx context.Context, env *verbs.Env, send func(tea.Msg)) {
	req := &verbs.Events{}
	for ctx.Err() == nil {
		err := verbs.StreamEvents(ctx, env, req, func(f *verbs.EventsFrame) error {
			send(frameMsg{f: f})
			return nil
		})
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			err = fmt.Errorf("the kernel closed the stream")
		}
		send(streamMsg{err: fmt.Errorf("%s (reconnecting)", verbs.Classify(err).Message)})
		select {
		case <-ctx.Done():
		case <-time.After(2 * time.Second):
		}
	}
}

// loadRoom reads the run's room (run is the row's address: room:<id>@<node>
// for another node's run) for the detail pane: its status line
// (messages, roster, last sender), then its last entries; nothing when the
// room is empty or cannot be read.
func loadRoom(env *verbs.Env, run string) []string {
	st, err := inspectTarget(env, "room:"+run, "status", 0)
	if err != nil {
		return nil
	}
	first, _, _ := strings.Cut(st.Text, "\n")
	lines := []string{first}
	if o, err := inspectTarget(env, "room:"+run, "messages", detailRoom); err == nil {
		for _, l := range textLines(o) {
			if strings.TrimSpace(l) != "" && !strings.HasPrefix(l, "(no room") {
				lines = append(lines, l)
			}
		}
	}
	return lines
}
