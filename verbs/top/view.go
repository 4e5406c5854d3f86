package top

import (
	"fmt"
	"github.com/pi-actors/pi-actors/internal/termtext"
	"strconv"
	"strings"

	tea "charm.land/bubbletea/v2"
	"charm.land/lipgloss/v2"
	"github.com/charmbracelet/x/ansi"

	"github.com/pi-actors/pi-actors/runs"
	"github.com/pi-actors/pi-actors/verbs"
)

// styles are the looks of top: coloured, monochrome (NO_COLOR: bold and
// reverse only) or plain (--once: no escape sequences at all).
type styles struct {
	plain  bool
	title  lipgloss.Style
	heads  lipgloss.Style
	sel    lipgloss.Style
	dim    lipgloss.Style
	warn   lipgloss.Style
	status map[string]lipgloss.Style
}

func newStyles(colour bool) styles {
	s := styles{
		title:  lipgloss.NewStyle().Bold(true),
		heads:  lipgloss.NewStyle().Bold(true),
		sel:    lipgloss.NewStyle().Reverse(true),
		dim:    lipgloss.NewStyle(),
		warn:   lipgloss.NewStyle().Bold(true),
		status: map[string]lipgloss.Style{},
	}
	if !colour {
		return s
	}
	s.dim = s.dim.Faint(true)
	s.warn = s.warn.Foreground(lipgloss.Color("3"))
	for word, c := range map[string]string{"running": "2", "backoff": "3", "suspended": "5", "stalled": "3", "done": "6",
		"failed": "1", "exited": "1", "killed": "1", "cancelled": "3", "archived": "8",
		"ready": "2", "starting": "3", "unready": "1"} {
		s.status[word] = lipgloss.NewStyle().Foreground(lipgloss.Color(c))
	}
	return s
}

func (s styles) render(st lipgloss.Style, text string) string {
	if s.plain || text == "" {
		return text
	}
	return st.Render(text)
}

// statusWord is a run's status as top shows it: stalled for a running
// run that has been silent too long; for a running run with a readiness
// probe ready, starting (not ready yet) or unready (its ready_timeout
// passed).
func statusWord(r *verbs.RunRow) string {
	if r.Stalled && r.Status == runs.StatusRunning {
		return "stalled"
	}
	if r.Status == runs.StatusRunning {
		switch r.ReadyState {
		case runs.ReadyOK:
			return "ready"
		case runs.ReadyWaiting:
			return "starting"
		case runs.ReadyTimedOut:
			return "unready"
		}
	}
	return r.Status
}

// fit cuts s to width cells (… when cut) and pads it to width.
func fit(s string, width int) string {
	if width <= 0 {
		return ""
	}
	if ansi.StringWidth(s) > width {
		s = ansi.Truncate(s, width, "…")
	}
	return s + strings.Repeat(" ", width-ansi.StringWidth(s))
}

// right pads s on the left to width cells.
func right(s string, width int) string {
	if w := ansi.StringWidth(s); w < width {
		return strings.Repeat(" ", width-w) + s
	}
	return ansi.Truncate(s, width, "")
}

// View renders the screen.
func (m *Model) View() tea.View {
	v := tea.NewView(m.Render())
	v.AltScreen = true
	return v
}

// Render is the screen as text (the --once frame, the golden tests).
func (m *Model) Render() string {
	var lines []string
	switch m.mode {
	case modeHelp:
		lines = m.helpLines()
	case modeLogs:
		lines = m.logLines()
	default:
		lines = append(lines, m.header(), m.columnHeads())
		lines = append(lines, m.listRows()...)
		lines = append(lines, m.paneRows()...)
	}
	if len(lines) > m.high-1 {
		lines = lines[:max(0, m.high-1)]
	}
	if m.style.plain {
		// One plain frame (--once): no filler, no trailing blanks.
		for len(lines) > 0 && strings.TrimSpace(lines[len(lines)-1]) == "" {
			lines = lines[:len(lines)-1]
		}
		lines = append(lines, m.footer())
		for i, l := range lines {
			lines[i] = strings.TrimRight(l, " ")
		}
		return strings.Join(lines, "\n")
	}
	for len(lines) < m.high-1 {
		lines = append(lines, "")
	}
	lines = append(lines, m.footer())
	return strings.Join(lines, "\n")
}

// paneHeight is how many lines the open pane takes.
func (m *Model) paneHeight() int {
	if m.pane == paneNone {
		return 0
	}
	return max(4, min(12, m.high/2))
}

// listLines is how many run lines fit.
func (m *Model) listLines() int {
	return max(1, m.high-3-m.paneHeight())
}

func (m *Model) header() string {
	live := 0
	for _, it := range m.items {
		if it.row.Live() {
			live++
		}
	}
	scope := "every session"
	if m.mine && m.env.Session != "" {
		scope = "session " + m.env.Session
	}
	h := fmt.Sprintf("pi-actors top · %s, %d live · %s", plural(len(m.items), "run"), live, scope)
	if m.cl.on {
		h = fmt.Sprintf("pi-actors top · %s · %s, %d live · %s", m.clusterHeader(), plural(len(m.items), "run"), live, scope)
	}
	if m.filter != "" {
		h += " · filter " + strconv.Quote(m.filter)
	}
	switch {
	case m.streamErr != "":
		h += " · kernel: " + m.streamErr
	case !m.connected:
		h += " · connecting…"
	case m.kernel != nil:
		h += fmt.Sprintf(" · kernel cpu %.1f%% rss %s", m.kernel.CPUPercent, bytesShort(m.kernel.RSSBytes))
	}
	return m.style.render(m.style.title, fit(h, m.width))
}

// columns are the widths of the fixed columns at the current width; the
// last output line takes what is left (0: not shown).
// node is 0 outside the cluster scope.
type columns struct{ id, node, status, elapsed, restarts, cpu, rss, output int }

func (m *Model) columns() columns {
	c := columns{id: 8, status: 9, elapsed: 7, restarts: 3, cpu: 6, rss: 8}
	for _, it := range m.items {
		c.id = max(c.id, ansi.StringWidth(it.prefix)+len(it.row.Run))
	}
	c.id = min(c.id, max(12, m.width/4))
	used := c.id + c.status + c.elapsed + c.restarts + c.cpu + c.rss + 6
	if m.cl.on {
		c.node = len("NODE")
		for _, it := range m.items {
			c.node = max(c.node, ansi.StringWidth(m.nodeOf(it.row)))
		}
		c.node = min(c.node, 12)
		used += c.node + 1
	}
	c.output = m.width - used - 1
	for _, drop := range []*int{&c.restarts, &c.rss, &c.cpu, &c.elapsed} {
		if c.output >= 0 {
			break
		}
		c.output += *drop + 1
		*drop = 0
	}
	c.output = max(0, c.output)
	return c
}

// cells joins the cells of one line, each fitted to its column; paint,
// when set, styles the status cell.
func (c columns) cells(paint func(string) string, id, node, status, elapsed, restarts, cpu, rss, output string) string {
	st := fit(status, c.status)
	if paint != nil {
		st = paint(st)
	}
	parts := []string{fit(id, c.id), st}
	if c.node > 0 {
		parts = []string{fit(id, c.id), fit(node, c.node), st}
	}
	for _, x := range []struct {
		s string
		w int
	}{{elapsed, c.elapsed}, {restarts, c.restarts}, {cpu, c.cpu}, {rss, c.rss}} {
		if x.w > 0 {
			parts = append(parts, right(x.s, x.w))
		}
	}
	if c.output > 0 {
		parts = append(parts, fit(output, c.output))
	}
	return strings.Join(parts, " ")
}

func (m *Model) columnHeads() string {
	c := m.columns()
	return m.style.render(m.style.heads, fit(c.cells(nil, "RUN", "NODE", "STATUS", "ELAPSED", "RST", "CPU", "RSS", "LAST OUTPUT"), m.width))
}

// listRows renders the shown part of the run tree.
func (m *Model) listRows() []string {
	c := m.columns()
	now := m.now()
	n := m.listLines()
	var out []string
	for i := m.offset; i < len(m.items) && i < m.offset+n; i++ {
		r := m.items[i].row
		cpu, rss := "-", "-"
		if r.Live() {
			cpu, rss = fmt.Sprintf("%.1f%%", r.CPUPercent), bytesShort(r.RSSBytes)
		}
		last := r.LastLine
		if last == "" {
			last = r.What()
		}
		last = termtext.Visible(last) // a run's output never reaches the terminal raw
		word := statusWord(r)
		var paint func(string) string
		if st, ok := m.style.status[word]; ok && !m.style.plain && i != m.sel {
			paint = func(s string) string { return st.Render(s) }
		}
		node := ""
		if c.node > 0 {
			node = m.nodeOf(r)
		}
		line := fit(c.cells(paint, m.items[i].prefix+r.Run, node, word, verbs.ShortDuration(r.Elapsed(now)), strconv.Itoa(r.Restarts), cpu, rss, last), m.width)
		if i == m.sel && !m.style.plain {
			line = m.style.sel.Render(line)
		}
		out = append(out, line)
	}
	if len(m.items) == 0 {
		msg := "(no runs"
		if m.filter != "" || m.mine {
			msg += " match the filter or scope"
		}
		out = append(out, m.style.render(m.style.dim, msg+")"))
	}
	for len(out) < n {
		out = append(out, "")
	}
	return out
}

// plural writes "1 run", "2 runs".
func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

// bytesShort writes a size in at most 6 cells: 512B, 12K, 3.4M, 1.2G.
func bytesShort(n uint64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%dB", n)
	case n < 1<<20:
		return fmt.Sprintf("%.0fK", float64(n)/(1<<10))
	case n < 100<<20:
		return fmt.Sprintf("%.1fM", float64(n)/(1<<20))
	case n < 1<<30:
		return fmt.Sprintf("%.0fM", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%.1fG", float64(n)/(1<<30))
}
