package top

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/x/ansi"
)

// rule is a title inside a line of ─ across the width.
func (m *Model) rule(title string) string {
	t := "── " + title + " "
	if w := ansi.StringWidth(t); w < m.width {
		t += strings.Repeat("─", m.width-w)
	}
	return m.style.render(m.style.title, fit(t, m.width))
}

// labelled renders lines under a label column ("stdout │ …").
func (m *Model) labelled(label string, lines []string, max int) []string {
	var out []string
	if len(lines) > max {
		lines = lines[len(lines)-max:]
	}
	for i, l := range lines {
		head := "       │ "
		if i == 0 {
			head = fmt.Sprintf("%-6s │ ", label)
		}
		out = append(out, fit(head+l, m.width))
	}
	return out
}

// paneRows renders the detail or follow-ups pane.
func (m *Model) paneRows() []string {
	h := m.paneHeight()
	if h == 0 {
		return nil
	}
	var out []string
	switch m.pane {
	case paneDetail:
		out = m.detailRows(h)
	case paneFollowups:
		out = m.followupRows(h)
	}
	for len(out) < h {
		out = append(out, "")
	}
	return out[:h]
}

func (m *Model) detailRows(h int) []string {
	r := m.selected()
	if r == nil {
		return []string{m.rule("detail"), "(no run selected)"}
	}
	title := fmt.Sprintf("run:%s · %s", address(r), statusWord(r))
	if c := r.ReadyCell(m.now()); c != "" && r.Live() {
		title += " · " + c
	}
	if r.Pid > 0 {
		title += fmt.Sprintf(" · pid %d", r.Pid)
	}
	if r.Owner != "" {
		title += " · session " + r.Owner
	}
	if r.Parent != "" {
		title += " · parent run:" + r.Parent
	}
	out := []string{m.rule(title)}
	d := m.detail
	switch {
	case d == nil:
		return append(out, m.style.render(m.style.dim, "(loading…)"))
	case d.err != "":
		return append(out, m.style.render(m.style.warn, fit(d.err, m.width)))
	}
	out = append(out, fit(d.facts, m.width))
	room := h - 2
	// Share the room: stdout first, then stderr, events, mailbox.
	parts := []struct {
		label string
		lines []string
		want  int
	}{{"stdout", d.stdout, detailTail}, {"stderr", d.stderr, 2}, {"events", d.events, 2}, {"inbox", d.mailbox, 2}, {"room", d.room, 1 + detailRoom}}
	for _, p := range parts {
		if room <= 0 {
			break
		}
		lines := p.lines
		if len(lines) == 0 && p.label == "room" {
			continue // a run whose room could not be read shows none
		}
		if len(lines) == 0 {
			lines = []string{"(empty)"}
		}
		rows := m.labelled(p.label, lines, min(p.want, room))
		out = append(out, rows...)
		room -= len(rows)
	}
	return out
}

func (m *Model) followupRows(h int) []string {
	out := []string{m.rule("follow-ups of session " + orNone(m.env.Session) + " (read, not drained)")}
	switch {
	case m.followErr != "":
		return append(out, m.style.render(m.style.warn, fit(m.followErr, m.width)))
	case m.followups == nil:
		return append(out, m.style.render(m.style.dim, "(loading…)"))
	case len(m.followups) == 0:
		return append(out, m.style.render(m.style.dim, "(no follow-ups)"))
	}
	list := m.followups
	if len(list) > h-1 {
		list = list[len(list)-(h-1):]
	}
	for _, q := range list {
		f := q.Followup
		text := f.Summary
		if text == "" {
			text, _, _ = strings.Cut(f.Text, "\n")
		}
		line := fmt.Sprintf("%-8s %s run:%s %s", q.Status, f.TS.Local().Format("15:04:05"), f.Run, text)
		out = append(out, fit(line, m.width))
	}
	return out
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// logLines renders the full-screen log view.
func (m *Model) logLines() []string {
	lv := m.logs
	if lv == nil {
		return []string{m.rule("logs")}
	}
	other := map[bool]string{true: "stderr", false: "stdout"}[lv.stream == "stdout"]
	out := []string{m.rule(fmt.Sprintf("run:%s %s · following · tab: %s · esc: back", lv.run, lv.stream, other))}
	room := m.high - 2
	switch {
	case lv.err != "":
		out = append(out, m.style.render(m.style.warn, fit(lv.err, m.width)))
	case len(lv.lines) == 0:
		out = append(out, m.style.render(m.style.dim, "("+lv.stream+" is empty)"))
	default:
		lines := lv.lines
		if len(lines) > room {
			lines = lines[len(lines)-room:]
		}
		for _, l := range lines {
			out = append(out, fit(l, m.width))
		}
	}
	return out
}

// helpLines renders the keys.
func (m *Model) helpLines() []string {
	out := []string{m.rule("pi-actors top · keys")}
	for _, k := range keyHelp {
		out = append(out, fit(fmt.Sprintf("  %-10s %s", k[0], k[1]), m.width))
	}
	out = append(out, "",
		fit("  Runs come from the kernel as it sees them change; CPU is the share of one core", m.width),
		fit("  over the last sample (2 s), RSS the run's whole process tree. Agents read the", m.width),
		fit("  same data with --json: pi-actors ps, logs, inspect.", m.width))
	return out
}

// footer is the last line: a question, the filter being typed, the last
// outcome, or the keys.
func (m *Model) footer() string {
	switch {
	case m.ask != nil:
		return m.style.render(m.style.warn, fit(fmt.Sprintf("%s run:%s? y: yes, any other key: no", m.ask.verb, m.ask.run), m.width))
	case m.filtering:
		return fit("/"+m.filter+"▏  enter: keep · esc: clear", m.width)
	case m.note != "":
		return fit(m.note, m.width)
	case m.mode == modeHelp:
		return m.style.render(m.style.dim, fit("any key: back", m.width))
	case m.mode == modeLogs:
		return m.style.render(m.style.dim, fit("tab stdout/stderr · esc back · ctrl+c quit", m.width))
	case m.cl.on && len(m.cl.unreachable) > 0:
		return m.style.render(m.style.warn, fit(m.unreachableLine(), m.width))
	case m.cl.on:
		return m.style.render(m.style.dim, fit("⏎ detail  l log  / filter  s scope  c cluster  K kill  r restart  ? help  q quit", m.width))
	}
	return m.style.render(m.style.dim, fit("↑↓ move  ⏎ detail  l log  / filter  s scope  K kill  r restart  ? help  q quit", m.width))
}
