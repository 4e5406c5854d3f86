package top

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	tea "charm.land/bubbletea/v2"
	"golang.org/x/term"

	"github.com/pi-actors/pi-actors/internal/config"
	"github.com/pi-actors/pi-actors/verbs"
	"github.com/pi-actors/pi-actors/verbs/wire"
)

// Usage is top's help.
const Usage = `pi-actors top [--once] [--cluster] [--no-color] [session=<id>]

A live view of the runs: a tree (parent → child runs) with status,
elapsed time, restarts, CPU (share of one core over the last 2 s sample),
RSS and the last output line; stalled marks a running run silent for
runs.stalled_after_s. The kernel pushes changes (top never scans run
directories). Keys: ↑↓/jk move, enter detail pane (status, stdout/stderr
tails, events, mailbox), l full-screen log that follows, / filter, s scope
(your session / every session), c cluster scope (clustered kernels: every
node's runs with a NODE column; the other nodes asked every 2 s, the nodes
not listed named; detail, logs, kill and restart of another node's run go
to run:<id>@<node>), f your session's follow-ups (not drained), K or x
kill and r restart (each asks y/n), ? help, q quit. --cluster starts in
the cluster scope (exit 78 without [cluster]).
--once prints one plain frame and exits (also when stdout is not a
terminal); NO_COLOR or --no-color: no colours. The frame is $COLUMNS×$LINES,
else the terminal's size, else 80×24. Agents read the same data with
pi-actors ps --json, logs and inspect.`

// options are top's command line.
type options struct {
	once, noColor, help bool
	cluster             bool
	session             string
	hasSession          bool
}

func parseOptions(args []string) (options, error) {
	var o options
	for _, a := range args {
		switch {
		case a == "--once":
			o.once = true
		case a == "--no-color":
			o.noColor = true
		case a == "--cluster":
			o.cluster = true
		case a == "--help" || a == "-h":
			o.help = true
		case strings.HasPrefix(a, "session="):
			o.session, o.hasSession = strings.TrimPrefix(a, "session="), true
		default:
			return o, verbs.Usagef("top takes --once, --cluster, --no-color and session=<id> (got %q)", a)
		}
	}
	return o, nil
}

// Main is `pi-actors-kernel top …` (the lean `pi-actors top` execs it);
// it returns the exit code.
func Main(args []string, stdout, stderr *os.File) int {
	o, err := parseOptions(args)
	if err != nil {
		return fail(stderr, err)
	}
	if o.help {
		fmt.Fprintln(stdout, Usage)
		return 0
	}
	env, err := verbs.NewEnv()
	if err != nil {
		return fail(stderr, err)
	}
	if env.LoadConfig() != nil {
		env.Config = config.Defaults() // a broken config does not stop a viewer
	}
	if o.hasSession {
		env.Session = o.session
		if strings.TrimSpace(o.session) == verbs.AllSessions {
			env.Session = "" // every session's runs, as ps session=all
		}
	}
	tty := term.IsTerminal(int(stdout.Fd()))
	width, height := frameSize(stdout, tty)
	if o.cluster && !env.Config.Cluster.Enabled() {
		return fail(stderr, errNoCluster)
	}
	if o.once || !tty {
		return once(env, stdout, stderr, width, height, o.cluster)
	}
	colour := !o.noColor && os.Getenv("NO_COLOR") == "" && os.Getenv("TERM") != "dumb"
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGHUP)
	defer cancel()
	m := New(env, width, height, colour)
	if o.cluster {
		_ = m.StartInCluster() // clustered: checked above
	}
	p := tea.NewProgram(m, tea.WithContext(ctx), tea.WithOutput(stdout))
	go stream(ctx, env, p.Send)
	_, err = p.Run()
	cancel()
	if err != nil && !errors.Is(err, tea.ErrProgramKilled) && !errors.Is(err, context.Canceled) {
		return fail(stderr, err)
	}
	return 0
}

// frameSize is $COLUMNS×$LINES, else the terminal's size, else 80×24.
func frameSize(f *os.File, tty bool) (int, int) {
	w, h := 80, 24
	if tty {
		if tw, th, err := term.GetSize(int(f.Fd())); err == nil && tw > 0 && th > 0 {
			w, h = tw, th
		}
	}
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		w = n
	}
	if n, err := strconv.Atoi(os.Getenv("LINES")); err == nil && n > 0 {
		h = n
	}
	return max(w, 20), max(h, 5)
}

// errFirstFrame ends the stream once the first frame is in.
var errFirstFrame = errors.New("first frame")

// onceTimeout bounds how long --once waits for the kernel.
const onceTimeout = 15 * time.Second

// once prints one plain frame: the runs as the kernel's first frame has
// them; in the cluster scope with the other nodes' runs as they answer.
func once(env *verbs.Env, stdout, stderr io.Writer, width, height int, cluster bool) int {
	ctx, cancel := context.WithTimeout(context.Background(), onceTimeout)
	defer cancel()
	m := New(env, width, height, false)
	m.style.plain = true
	err := verbs.StreamEvents(ctx, env, &verbs.Events{}, func(f *verbs.EventsFrame) error {
		m.apply(f)
		return errFirstFrame
	})
	if err != nil && !errors.Is(err, errFirstFrame) {
		return fail(stderr, err)
	}
	if !m.connected {
		return fail(stderr, fmt.Errorf("%w: no answer from the kernel within %s", wire.ErrUnavailable, onceTimeout))
	}
	if cluster {
		if err := m.StartInCluster(); err != nil {
			return fail(stderr, err)
		}
		if err := m.pollOnce(); err != nil {
			return fail(stderr, err)
		}
	}
	if _, err := fmt.Fprintln(stdout, m.Render()); err != nil {
		return fail(stderr, &verbs.Error{Exit: verbs.ExitIOErr, Code: "output_failed", Message: fmt.Sprintf("writing the frame to stdout: %v", err),
			Hint: "stdout did not take the frame (a full disk, a closed reader): run it again once it can"})
	}
	return 0
}

func fail(w io.Writer, err error) int {
	ce := verbs.Classify(err)
	fmt.Fprintf(w, "pi-actors top: %s\n", ce.Message)
	if ce.Hint != "" {
		fmt.Fprintf(w, "hint: %s\n", ce.Hint)
	}
	return ce.Exit
}
