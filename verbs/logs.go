package verbs

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pi-actors/pi-actors/internal/termtext"
	"github.com/pi-actors/pi-actors/recipes/template"
	"github.com/pi-actors/pi-actors/runs"
)

// Logs prints a run's output: the tail of stdout.log and stderr.log (the
// same as inspect view=tail), optionally only what was written since a
// time, and with follow, what the run prints next until it ends.
type Logs struct {
	Run    string   `json:"run" jsonschema:"the run: <id> or run:<id>"`
	Follow Bool     `json:"follow,omitempty" jsonschema:"keep printing what the run writes until it ends (-f; text output only)"`
	Since  string   `json:"since,omitempty" jsonschema:"only lines written since then: a duration back from now (10m, 1h30m) or an RFC 3339 time (to the second)"`
	Lines  LooseInt `json:"lines,omitzero" jsonschema:"how many lines of each log to print first (default 40; 0 with follow: only new lines)"`
	Stdout Bool     `json:"stdout,omitempty" jsonschema:"only stdout.log"`
	Stderr Bool     `json:"stderr,omitempty" jsonschema:"only stderr.log"`
}

// logsQuery is a checked Logs request.
type logsQuery struct {
	id      string
	lines   int
	since   time.Time
	streams []string // log file names, stdout first
}

// Validate checks the run id, the line count and the time.
func (l *Logs) Validate() error {
	_, err := l.query(time.Now())
	return err
}

func (l *Logs) query(now time.Time) (*logsQuery, error) {
	q := &logsQuery{lines: defaultInspectLines}
	word, _, err := SplitAddress(l.Run)
	if err != nil {
		return nil, err
	}
	q.id = strings.TrimPrefix(word, "run:")
	if q.id == "" {
		return nil, Usagef("logs needs a run: pi-actors logs <run> [-f] [--lines=N] [--since=10m] [--stdout|--stderr]")
	}
	if err := runs.ValidID(q.id); err != nil {
		return nil, err
	}
	if v := l.Lines.V; l.Lines.Set && v != nil && template.Stringify(v) != "" {
		n, err := strconv.Atoi(strings.TrimSpace(template.Stringify(v)))
		if err != nil || n < 0 || (n == 0 && !l.Follow) {
			return nil, Usagef("lines must be a positive integer (0 only with follow), got %s", template.CompactJSON(v))
		}
		q.lines = n
	}
	if s := strings.TrimSpace(l.Since); s != "" {
		t, err := parseSince(s, now)
		if err != nil {
			return nil, err
		}
		q.since = t
	}
	switch {
	case bool(l.Stdout && !l.Stderr):
		q.streams = []string{runs.StdoutLog}
	case bool(l.Stderr && !l.Stdout):
		q.streams = []string{runs.StderrLog}
	default:
		q.streams = []string{runs.StdoutLog, runs.StderrLog}
	}
	return q, nil
}

// parseSince reads a duration back from now or an RFC 3339 time.
func parseSince(s string, now time.Time) (time.Time, error) {
	if d, err := time.ParseDuration(s); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02 15:04:05", "2006-01-02"} {
		if t, err := time.ParseInLocation(layout, s, time.Local); err == nil {
			return t, nil
		}
	}
	return time.Time{}, Invalidf("since must be a duration back from now (10m, 1h30m) or a time (2006-01-02T15:04:05Z07:00), got %q", s)
}

func init() {
	Register(&Spec{
		Name:    "logs",
		Summary: "print a run's output; -f follows it until the run ends",
		Word:    "run",
		Flags: map[string]string{"-f": "follow", "--follow": "follow", "--stdout": "stdout", "--stderr": "stderr",
			"--since=": "since", "--lines=": "lines"},
		Usage: `pi-actors logs <run> [-f] [--lines=N] [--since=10m] [--stdout|--stderr] [--json]

Prints the last lines of the run's stdout.log and stderr.log — exactly what
inspect target=run:<id> view=tail prints — reading back through rotated
logs (stdout.log.1, …) as far as needed. --since keeps only the lines
written since then (a duration back from now or a time; to the second).
-f then keeps printing what the run writes (stdout to stdout, stderr to
stderr; with --stdout or --stderr that one log to stdout) across log
rotations, and ends when the run ends; Ctrl-C stops earlier. Logs rotate
at runs.log_max_bytes, keeping runs.log_keep files (pi-actors.toml).

Examples:
  pi-actors logs web
  pi-actors logs web -f
  pi-actors logs web --since=5m --stderr --lines=200`,
		New: func() Request { return new(Logs) },
		Run: runLogs,
	})
}

func runLogs(ctx context.Context, env *Env, req Request) (*Outcome, error) {
	l := req.(*Logs)
	if out, routed, err := env.route(ctx, "logs", l, &l.Run); routed {
		return out, err
	}
	q, err := l.query(time.Now())
	if err != nil {
		return nil, err
	}
	in, err := loadInspectRun(env, q.id)
	if err != nil {
		return nil, err
	}
	if bool(l.Follow) && in.Live() {
		if env.Stream == nil {
			return nil, Usagef("logs -f prints text as the run writes it; drop --json (logs without -f, or inspect view=tail, gives JSON)")
		}
		return followLogs(ctx, env, in, q)
	}
	if l.Follow && env.Stream == nil {
		return nil, Usagef("logs -f prints text as the run writes it; drop --json (logs without -f, or inspect view=tail, gives JSON)")
	}
	// The plain form is inspect view=tail, byte for byte.
	got, cut := readLogs(in, q)
	text, details := logsText(in, q, got, cut)
	return &Outcome{Text: text, Result: details}, nil
}

// readLogs reads the logs q selects (logLines), and which of them hold
// earlier lines than those read that the read could not reach (cut).
func readLogs(in *runs.Info, q *logsQuery) (got map[string][]string, cut map[string]bool) {
	got, cut = map[string][]string{}, map[string]bool{}
	for _, name := range q.streams {
		got[name], cut[name] = logLines(in.FilesDir().Path(name), q)
	}
	return got, cut
}

// logLines is the last q.lines lines of a log (written since q.since when
// set); cut: fewer than q.lines although the log holds earlier ones (a
// tail reads at most 1 MiB back from the end of each file).
func logLines(path string, q *logsQuery) (lines []string, cut bool) {
	if q.since.IsZero() {
		return runs.Tail(path, q.lines)
	}
	fl, ok := runs.FollowSince(path, q.since)
	defer fl.Close()
	if !ok {
		return nil, false
	}
	// A ring of the last q.lines lines: lines= may be far more than the
	// log holds, so it grows with what is read.
	var ring []string
	next := 0 // where the oldest line is once the ring is full
	keep := func(b []byte) {
		if len(ring) < q.lines {
			ring = append(ring, string(b))
			return
		}
		ring[next] = string(b)
		next = (next + 1) % len(ring)
	}
	fl.Poll(keep)
	fl.Flush(keep)
	return append(ring[next:], ring[:next]...), false
}

// logsText renders the selected logs (view=tail and logs): a facts line,
// then one section per log; every line cut at tailLineChars, in the text
// and in the JSON alike (the whole lines are in the files it names); a
// log whose earlier lines the read could not reach (cut) says so.
func logsText(in *runs.Info, q *logsQuery, got map[string][]string, cut map[string]bool) (string, map[string]any) {
	d := in.FilesDir()
	var b strings.Builder
	fmt.Fprintf(&b, "run=%s status=%s", in.Meta.Run, in.Status)
	details := map[string]any{"run": in.Meta.Run, "status": in.Status, "lines": q.lines}
	if !q.since.IsZero() {
		since := q.since.UTC().Format(time.RFC3339)
		b.WriteString(" since=" + since)
		details["since"] = since
	}
	for _, name := range q.streams {
		stream := strings.TrimSuffix(name, ".log")
		fmt.Fprintf(&b, " %s_lines=%d", stream, len(got[name]))
		details[stream] = cutLines(jsonSafe(got[name]), tailLineChars)
		details[stream+"Log"] = d.Path(name)
		if cut[name] {
			details[stream+"Cut"] = true
		}
	}
	for _, name := range q.streams {
		fmt.Fprintf(&b, "\n--- %s (%s) ---", name, d.Path(name))
		if len(got[name]) == 0 {
			b.WriteString("\n(empty)")
		}
		for _, l := range got[name] {
			b.WriteString("\n" + cutLine(termtext.Visible(l), tailLineChars))
		}
		if cut[name] {
			fmt.Fprintf(&b, "\n(%d of %d lines: a tail reads at most 1 MiB back from the end of a log; the earlier lines are in %s)", len(got[name]), q.lines, d.Path(name))
		}
	}
	return b.String(), details
}

// jsonSafe keeps lines as written for JSON, except one with bytes that
// are not UTF-8: JSON would replace them with U+FFFD, so that line is
// shown as the text is (visible: \xNN), losing nothing.
func jsonSafe(lines []string) []string {
	var out []string
	for i, l := range lines {
		if utf8.ValidString(l) {
			continue
		}
		if out == nil {
			out = slices.Clone(lines)
		}
		out[i] = termtext.Visible(l)
	}
	if out == nil {
		return lines
	}
	return out
}

// cutLines is lines, each cut by cutLine (never nil: a JSON list).
func cutLines(lines []string, max int) []string {
	out := make([]string, len(lines))
	for i, l := range lines {
		out[i] = cutLine(l, max)
	}
	return out
}

// followPoll is how often a quiet run's logs are looked at again.
const followPoll = 100 * time.Millisecond

// followLogs prints the first lines, then what the run writes, until the
// run ends or ctx does.
func followLogs(ctx context.Context, env *Env, in *runs.Info, q *logsQuery) (*Outcome, error) {
	d := in.FilesDir()
	got := map[string][]string{}
	followers := make([]*runs.Follower, len(q.streams))
	for i, name := range q.streams {
		if q.since.IsZero() {
			got[name], followers[i] = runs.FollowTail(d.Path(name), q.lines)
			continue
		}
		fl, _ := runs.FollowSince(d.Path(name), q.since)
		var all []string
		fl.Poll(func(b []byte) { all = append(all, string(b)) })
		got[name], followers[i] = all[max(0, len(all)-q.lines):], fl
	}
	defer func() {
		for _, fl := range followers {
			fl.Close()
		}
	}()
	// A write that fails (stdout full or closed) ends the follow with 74,
	// as any answer that could not be written.
	var werr error
	write := func(w io.Writer, s string) {
		if werr == nil {
			_, werr = io.WriteString(w, s)
		}
	}
	text, _ := logsText(in, q, got, nil)
	if q.lines > 0 || !q.since.IsZero() {
		write(env.Stream, text+"\n")
	}
	outs := make([]io.Writer, len(q.streams))
	for i, name := range q.streams {
		outs[i] = env.Stream
		if name == runs.StderrLog && len(q.streams) == 2 && env.Stderr != nil {
			outs[i] = env.Stderr
		}
	}
	// Each line as the first ones are shown: control characters visible,
	// cut at tailLineChars (the whole line is in the log file).
	line := func(w io.Writer) func([]byte) {
		return func(b []byte) { write(w, cutLine(termtext.Visible(string(b)), tailLineChars)+"\n") }
	}
	poll := func() bool {
		any := false
		for i, fl := range followers {
			got, _ := fl.Poll(line(outs[i]))
			any = any || got
			if fl.TakeGap() && env.Stderr != nil {
				// Never silently: the reader learns output is missing.
				fmt.Fprintf(env.Stderr, "pi-actors logs: %s rotated past its kept files faster than it was followed: lines before this point may be missing (raise [runs] log_keep or log_max_bytes to keep more)\n", q.streams[i])
			}
		}
		return any
	}
	live := in.Live()
	t := time.NewTicker(followPoll)
	defer t.Stop()
	for live && werr == nil {
		if poll() {
			continue
		}
		select {
		case <-ctx.Done():
			return &Outcome{Streamed: true}, nil
		case <-t.C:
		}
		if now, err := runs.Load(in.Dir); err != nil || !now.Live() {
			live = false
		}
	}
	// Ended: what it wrote last, the unfinished last line included.
	for werr == nil && poll() {
	}
	for i, fl := range followers {
		fl.Flush(line(outs[i]))
	}
	if werr != nil {
		return nil, &Error{Exit: ExitIOErr, Code: "output_failed", Message: fmt.Sprintf("writing the run's log lines: %v", werr),
			Hint: "the output did not take them (a full disk, a closed reader); nothing is lost: the lines are in " + d.Path(q.streams[0]) + ": run logs again once it can"}
	}
	return &Outcome{Streamed: true}, nil
}
