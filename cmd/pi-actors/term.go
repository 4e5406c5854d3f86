package main

import (
	"io"
	"os"
	"strconv"
	"strings"

	"golang.org/x/term"

	"github.com/pi-actors/pi-actors/internal/lazyre"
)

// Terminal habits: status words are coloured when stdout is a terminal
// (NO_COLOR, --no-color and TERM=dumb turn that off; CLICOLOR_FORCE=1
// turns it on without a terminal), tables fit the terminal's width
// ($COLUMNS when set), and progress bars go to stderr only when it is a
// terminal. Plain ANSI: the lean binary links no TUI library.

// fdOf returns w's file descriptor when w is an *os.File.
func fdOf(w io.Writer) (int, bool) {
	f, ok := w.(*os.File)
	if !ok {
		return 0, false
	}
	return int(f.Fd()), true
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	fd, ok := fdOf(w)
	return ok && term.IsTerminal(fd)
}

// width is the width text tables fit: $COLUMNS when set, else the
// terminal's, else 0 (not a terminal).
func (a *app) width() int {
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	if fd, ok := fdOf(a.io.out); ok && term.IsTerminal(fd) {
		if w, _, err := term.GetSize(fd); err == nil && w > 0 {
			return w
		}
	}
	return 0
}

// colour reports whether status words are coloured.
func (a *app) colour() bool {
	if a.noColor || os.Getenv("NO_COLOR") != "" || os.Getenv("TERM") == "dumb" {
		return false
	}
	if os.Getenv("CLICOLOR_FORCE") == "1" {
		return true
	}
	return isTerminal(a.io.out)
}

// stripNoColor removes --no-color from the arguments (any verb takes it).
func stripNoColor(args []string) ([]string, bool) {
	out := args[:0:0]
	found := false
	for i, arg := range args {
		if arg == "--" {
			return append(out, args[i:]...), found
		}
		if arg == "--no-color" {
			found = true
			continue
		}
		out = append(out, arg)
	}
	return out, found
}

// statusColours are the SGR codes of status words.
var statusColours = map[string]string{
	"running": "32", "backoff": "33", "suspended": "35", "done": "36", "failed": "31", "exited": "31",
	"killed": "31", "cancelled": "33", "archived": "2", "starting": "32",
}

func paint(word string) string {
	if c, ok := statusColours[word]; ok {
		return "\x1b[" + c + "m" + word + "\x1b[0m"
	}
	return word
}

var statusWordRe = lazyre.New(`\bstatus=([a-z]+)\b`)

// colourText colours status=<word> facts, and the STATUS column of a
// table (a first line that names it).
func colourText(text string) string {
	lines := strings.Split(text, "\n")
	start, end := -1, -1
	if h := lines[0]; strings.HasPrefix(h, "ID ") {
		if i := strings.Index(h, "STATUS"); i >= 0 {
			start, end = i, len(h)
			if j := strings.IndexFunc(h[i+len("STATUS"):], func(r rune) bool { return r != ' ' }); j >= 0 {
				end = i + len("STATUS") + j
			}
		}
	}
	for n, l := range lines {
		if start >= 0 && n > 0 && len(l) >= end {
			cell := l[start:end]
			word := strings.TrimRight(cell, " ")
			if _, ok := statusColours[word]; ok {
				lines[n] = l[:start] + paint(word) + cell[len(word):] + l[end:]
				continue
			}
		}
		lines[n] = statusWordRe.ReplaceAllStringFunc(l, func(m string) string {
			return "status=" + paint(m[len("status="):])
		})
	}
	return strings.Join(lines, "\n")
}
