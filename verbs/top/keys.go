package top

import (
	"fmt"

	tea "charm.land/bubbletea/v2"
)

// keyHelp is the help screen: every key, one per line.
var keyHelp = [][2]string{
	{"↑ ↓  k j", "move (pgup pgdown: a page; g G: to the ends)"},
	{"enter", "detail pane: status, stdout/stderr tails, events, mailbox"},
	{"l", "the run's log, full screen, following (tab: stderr; esc: back)"},
	{"/", "filter by id, recipe, command or status (esc clears)"},
	{"s", "scope: your session's runs, or every session's"},
	{"c", "cluster scope: every node's runs, with a NODE column (clustered)"},
	{"f", "your session's follow-ups (read only: the agent still gets them)"},
	{"K  x", "kill the selected run, after y (k moves up)"},
	{"r", "restart the selected run's command, after y"},
	{"?", "this help (any key: back)"},
	{"q  ctrl+c", "quit (q in the log view: back)"},
}

// key handles a key press.
func (m *Model) key(k tea.KeyPressMsg) (tea.Model, tea.Cmd) {
	s := k.String()
	if s == "ctrl+c" {
		return m, tea.Quit
	}
	switch {
	case m.ask != nil:
		return m, m.answer(s)
	case m.filtering:
		m.editFilter(k)
		return m, nil
	case m.mode == modeHelp:
		m.mode = modeList
		return m, nil
	case m.mode == modeLogs:
		return m, m.logsKey(s)
	}
	switch s {
	case "q":
		return m, tea.Quit
	case "up", "k":
		return m, m.move(-1)
	case "down", "j":
		return m, m.move(1)
	case "pgup":
		return m, m.move(-m.listLines())
	case "pgdown", "space":
		return m, m.move(m.listLines())
	case "home", "g":
		return m, m.move(-len(m.items))
	case "end", "G":
		return m, m.move(len(m.items))
	case "enter":
		m.pane = map[bool]pane{true: paneNone, false: paneDetail}[m.pane == paneDetail]
		m.scroll()
		return m, m.refreshPane(false)
	case "f":
		m.pane = map[bool]pane{true: paneNone, false: paneFollowups}[m.pane == paneFollowups]
		m.scroll()
		return m, m.refreshPane(false)
	case "esc":
		m.pane, m.note = paneNone, ""
		m.scroll()
	case "l":
		if r := m.selected(); r != nil {
			m.mode = modeLogs
			m.logs = &logView{dir: rowKey(r), run: address(r), stream: "stdout"}
			return m, m.refreshPane(false)
		}
	case "/":
		m.filtering = true
	case "s":
		m.toggleScope()
	case "c":
		return m, m.toggleCluster()
	case "K", "x", "r":
		if r := m.selected(); r != nil {
			verb := map[bool]string{true: "restart", false: "kill"}[s == "r"]
			m.ask = &confirm{verb: verb, run: address(r)}
		}
	case "?":
		m.mode = modeHelp
	}
	return m, nil
}

// answer completes a pending kill or restart: y acts, anything else
// cancels.
func (m *Model) answer(s string) tea.Cmd {
	ask := m.ask
	m.ask = nil
	if s != "y" && s != "Y" {
		m.note = fmt.Sprintf("%s run:%s cancelled", ask.verb, ask.run)
		return nil
	}
	m.note = fmt.Sprintf("%s run:%s …", ask.verb, ask.run)
	return runAction(m.env, ask.verb, ask.run)
}

// editFilter edits the filter being typed.
func (m *Model) editFilter(k tea.KeyPressMsg) {
	switch k.String() {
	case "enter":
		m.filtering = false
	case "esc":
		m.filtering, m.filter = false, ""
	case "backspace":
		if r := []rune(m.filter); len(r) > 0 {
			m.filter = string(r[:len(r)-1])
		}
	default:
		if k.Text != "" {
			m.filter += k.Text
		}
	}
	m.rebuild()
}

// toggleScope switches between the session's runs and every run.
func (m *Model) toggleScope() {
	if m.env.Session == "" {
		m.mine = false
		m.note = "scope: every session's runs (you have no session: set PI_ACTORS_SESSION or pass session=<id>)"
		return
	}
	m.mine = !m.mine
	m.rebuild()
}

// logsKey handles a key in the log view.
func (m *Model) logsKey(s string) tea.Cmd {
	switch s {
	case "q", "esc", "l":
		m.mode, m.logs = modeList, nil
	case "tab":
		if m.logs != nil {
			m.logs.stream = map[bool]string{true: "stderr", false: "stdout"}[m.logs.stream == "stdout"]
			return m.refreshPane(false)
		}
	}
	return nil
}
