package runs

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/pi-actors/pi-actors/recipes/template"
)

// A probe's checks are small and bounded: an HTTP/1.1 GET written by hand
// over one TCP connection (the supervisor links no net/http), a TCP
// connect, a flag set by the run's output, or a command template run in
// its own process group and killed when its try's time is up.

// probeKillGrace is the grace an exec probe gets between SIGTERM and
// SIGKILL when its try times out or its attempt ends.
const probeKillGrace = 500 * time.Millisecond

// probeStatusMax bounds the status line an HTTP probe reads.
const probeStatusMax = 1024

// prober runs one probe of a supervisor.
type prober struct {
	p *Probe
	s *supervisor
	// log probes: the compiled regex, whether a line matched since the
	// last check, and a doorbell rung when one does.
	re   *regexp.Regexp
	seen atomic.Bool
	wake chan struct{}
	// exec probes: the parsed template.
	node *template.Node
}

func newProber(s *supervisor, p *Probe) (*prober, error) {
	pr := &prober{p: p, s: s}
	switch p.Kind {
	case ProbeLog:
		re, err := regexp.Compile(p.Target)
		if err != nil {
			return nil, fmt.Errorf("log probe: %w", err)
		}
		pr.re, pr.wake = re, make(chan struct{}, 1)
	case ProbeExec:
		node, err := template.Parse(p.Target)
		if err != nil {
			return nil, fmt.Errorf("exec probe: %w", err)
		}
		pr.node = node
	}
	return pr, nil
}

// check runs the probe once; nil means it passed.
func (pr *prober) check(ctx context.Context) error {
	switch pr.p.Kind {
	case ProbeHTTP:
		return httpProbe(ctx, pr.p)
	case ProbeTCP:
		var d net.Dialer
		c, err := d.DialContext(ctx, "tcp", pr.p.Addr)
		if err != nil {
			return err
		}
		return c.Close()
	case ProbeLog:
		if pr.seen.Swap(false) {
			return nil
		}
		return fmt.Errorf("no output line matched %q yet", pr.p.Target)
	case ProbeExec:
		return pr.exec(ctx)
	}
	return fmt.Errorf("unknown probe kind %q", pr.p.Kind)
}

// line offers a line of the run's output to a log probe.
func (pr *prober) line(b []byte) {
	if pr.re == nil || !pr.re.Match(b) {
		return
	}
	pr.seen.Store(true)
	select {
	case pr.wake <- struct{}{}:
	default:
	}
}

// httpProbe sends GET <path> and passes on a 2xx status line.
func httpProbe(ctx context.Context, p *Probe) error {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", p.Addr)
	if err != nil {
		return err
	}
	defer conn.Close()
	if dl, ok := ctx.Deadline(); ok {
		conn.SetDeadline(dl)
	}
	// An attempt that ends mid-try unblocks the read at once.
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	req := "GET " + p.Path + " HTTP/1.1\r\nHost: " + p.Host + "\r\nUser-Agent: pi-actors-probe\r\nAccept: */*\r\nConnection: close\r\n\r\n"
	if _, err := io.WriteString(conn, req); err != nil {
		return fmt.Errorf("GET %s: %w", p.Spec, err)
	}
	line, err := bufio.NewReaderSize(conn, probeStatusMax).ReadSlice('\n')
	if err != nil {
		return fmt.Errorf("GET %s: no status line: %w", p.Spec, err)
	}
	proto, rest, _ := strings.Cut(strings.TrimSpace(string(line)), " ")
	codeText, reason, _ := strings.Cut(rest, " ")
	code, err := strconv.Atoi(codeText)
	if !strings.HasPrefix(proto, "HTTP/") || err != nil {
		return fmt.Errorf("GET %s: not an HTTP status line: %q", p.Spec, cut(string(line), 80))
	}
	if code < 200 || code > 299 {
		return fmt.Errorf("GET %s: status %d %s", p.Spec, code, reason)
	}
	return nil
}

// exec runs the probe's template once (the run's values and directory;
// its own process groups, stopped when ctx ends).
func (pr *prober) exec(ctx context.Context) error {
	m := pr.s.meta
	values := template.Values{}
	for k, v := range m.Values {
		values[k] = v
	}
	plan, err := template.NewPlan(pr.node, values, template.Options{Dir: m.Cwd, MaxParallel: m.Limits.MaxParallel, MaxLeaves: m.Limits.MaxLeaves})
	if err != nil {
		return fmt.Errorf("exec probe: %w", err)
	}
	r := &template.Runner{Dir: m.Cwd, KillGrace: probeKillGrace, TempDir: pr.s.dir.Path("tmp"), MaxCapture: 4096}
	res := r.Run(ctx, plan, nil)
	res.Stdout.Close()
	if res.Code == 0 {
		return nil
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("exec probe %s: no answer in time (killed)", cut(pr.p.Target, 80))
	}
	msg := fmt.Sprintf("exec probe: exit %d", res.Code)
	if f := res.Failure; f != nil {
		msg = fmt.Sprintf("exec probe: exit %d from %s", f.Code, cut(f.Command, 120))
		if s := strings.TrimSpace(f.Stderr); s != "" {
			msg += ": " + cut(s, 300)
		}
	}
	return errors.New(msg)
}

// cut bounds a string for an error text.
func cut(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

// maxTapLine bounds the part of one output line a log probe looks at.
const maxTapLine = 64 << 10

// lineTap passes a stream of output through to w and offers each whole
// line (its first 64 KiB) to the log probes.
type lineTap struct {
	w     io.Writer
	mu    sync.Mutex
	buf   []byte
	lines func([]byte)
}

func (t *lineTap) Write(p []byte) (int, error) {
	n, err := t.w.Write(p)
	t.mu.Lock()
	defer t.mu.Unlock()
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			t.keep(p)
			break
		}
		line := p[:i]
		if len(t.buf) > 0 {
			t.keep(line)
			line = t.buf
		}
		t.lines(bytes.TrimSuffix(line, []byte("\r")))
		t.buf = t.buf[:0]
		p = p[i+1:]
	}
	return n, err
}

func (t *lineTap) keep(p []byte) {
	if room := maxTapLine - len(t.buf); room > 0 {
		t.buf = append(t.buf, p[:min(len(p), room)]...)
	}
}
