package runs

import (
	"fmt"
	"math"
	"net"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/bmatcuk/doublestar/v4"

	"github.com/pi-actors/pi-actors/internal/lazyre"
	"github.com/pi-actors/pi-actors/recipes/template"
)

// Health is what a run declared about its health (run.json "health"): a
// readiness probe, a liveness probe, a memory cap and watched files. A
// run that declared none has no Health, and its supervisor starts nothing
// for it: no goroutine, no timer, no watcher.
type Health struct {
	Ready            *Probe   `json:"ready,omitempty"`
	ReadyTimeoutMS   int      `json:"ready_timeout_ms,omitempty"`
	Liveness         *Probe   `json:"liveness,omitempty"`
	LivenessEveryMS  int      `json:"liveness_every_ms,omitempty"`
	LivenessFailures int      `json:"liveness_failures,omitempty"`
	MaxRSS           int64    `json:"max_rss_bytes,omitempty"`
	Watch            []string `json:"watch,omitempty"`
}

// Probe kinds.
const (
	ProbeHTTP = "http" // GET, a 2xx status passes
	ProbeTCP  = "tcp"  // a connection is accepted
	ProbeLog  = "log"  // a line of the run's output matches
	ProbeExec = "exec" // a command template exits 0
)

// Probe is one health check, as given (Spec) and parsed.
type Probe struct {
	Spec string `json:"spec"`
	Kind string `json:"kind"`
	// Addr is host:port (http, tcp); Path and Host the request line and
	// Host header (http); Target the regex (log) or template (exec).
	Addr   string `json:"addr,omitempty"`
	Host   string `json:"host,omitempty"`
	Path   string `json:"path,omitempty"`
	Target string `json:"target,omitempty"`
}

// Health defaults and bounds.
const (
	DefaultReadyTimeout     = 60 * time.Second
	DefaultLivenessEvery    = 10 * time.Second
	DefaultLivenessFailures = 3
	minProbeEvery           = 100 * time.Millisecond
	minMaxRSS               = 1 << 20
)

// HealthParams are the health parameters of a spawn, as given: strings
// for the probes, durations ("30s", "500ms", or a number of seconds) and
// sizes ("512M", "1GiB", or bytes).
type HealthParams struct {
	Ready            string
	ReadyTimeout     string
	Liveness         string
	LivenessEvery    string
	LivenessFailures int
	MaxRSS           string
	Watch            []string
}

// FieldError is a health parameter that does not parse: it names the
// parameter and says how to write it.
type FieldError struct {
	Field string
	Msg   string
	// Missing: the parameter needs another one that was not given (a usage
	// error, not a bad value).
	Missing bool
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

func fieldErr(field, format string, args ...any) error {
	return &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

// ParseHealth checks and reads a spawn's health parameters; nil when none
// was given. Every error is a *FieldError naming the parameter.
func ParseHealth(p HealthParams) (*Health, error) {
	h := &Health{}
	var err error
	if p.Ready != "" {
		if h.Ready, err = ParseProbe("ready", p.Ready); err != nil {
			return nil, err
		}
	}
	if p.Liveness != "" {
		if h.Liveness, err = ParseProbe("liveness", p.Liveness); err != nil {
			return nil, err
		}
	}
	if p.ReadyTimeout != "" {
		if h.Ready == nil {
			return nil, &FieldError{Field: "ready_timeout", Msg: "is set without ready=<probe>; give the probe too", Missing: true}
		}
		d, err := ParseDuration("ready_timeout", p.ReadyTimeout)
		if err != nil {
			return nil, err
		}
		h.ReadyTimeoutMS = int(d.Milliseconds())
	}
	if p.LivenessEvery != "" || p.LivenessFailures != 0 {
		if h.Liveness == nil {
			field := "liveness_every"
			if p.LivenessEvery == "" {
				field = "liveness_failures"
			}
			return nil, &FieldError{Field: field, Msg: "liveness_every and liveness_failures need liveness=<probe>; give the probe too", Missing: true}
		}
	}
	if p.LivenessEvery != "" {
		d, err := ParseDuration("liveness_every", p.LivenessEvery)
		if err != nil {
			return nil, err
		}
		h.LivenessEveryMS = int(d.Milliseconds())
	}
	if p.LivenessFailures < 0 {
		return nil, fieldErr("liveness_failures", "must be a positive count (got %d)", p.LivenessFailures)
	}
	h.LivenessFailures = p.LivenessFailures
	if p.MaxRSS != "" {
		if h.MaxRSS, err = ParseSize("max_rss", p.MaxRSS); err != nil {
			return nil, err
		}
	}
	for _, g := range p.Watch {
		g = strings.TrimSpace(g)
		if g == "" {
			continue
		}
		if err := checkWatchGlob(g); err != nil {
			return nil, err
		}
		h.Watch = append(h.Watch, g)
	}
	if p.Watch != nil && len(h.Watch) == 0 { // given (watch:=[] too) but naming nothing
		return nil, fieldErr("watch", "names no glob; write watch=<glob,…>, e.g. watch='src/**/*.go,go.mod'")
	}
	if h.Ready == nil && h.Liveness == nil && h.MaxRSS == 0 && len(h.Watch) == 0 {
		return nil, nil
	}
	return h, nil
}

// ParseProbe reads http://host:port/path, tcp:host:port, log:<regex> or
// exec:<template>.
func ParseProbe(field, spec string) (*Probe, error) {
	spec = strings.TrimSpace(spec)
	p := &Probe{Spec: spec}
	kind, rest, _ := strings.Cut(spec, ":")
	forms := "write http://host:port/path, tcp:host:port, log:<regex> or exec:<command template>"
	switch kind {
	case ProbeHTTP:
		addr, host, pth, err := parseHTTPURL(spec)
		if err != nil {
			return nil, fieldErr(field, "%v", err)
		}
		p.Kind, p.Addr, p.Host, p.Path = ProbeHTTP, addr, host, pth
	case "https":
		return nil, fieldErr(field, "https probes are not supported (the supervisor carries no TLS); probe the plain port, or use exec:curl -fsS %s", spec)
	case ProbeTCP:
		host, port, err := net.SplitHostPort(rest)
		if err != nil || port == "" {
			return nil, fieldErr(field, "tcp probe %q: want tcp:host:port (e.g. tcp:127.0.0.1:5432)", spec)
		}
		if err := checkPort(port); err != nil {
			return nil, fieldErr(field, "tcp probe %q: %v", spec, err)
		}
		if host == "" {
			host = "127.0.0.1"
		}
		p.Kind, p.Addr = ProbeTCP, net.JoinHostPort(host, port)
	case ProbeLog:
		if rest == "" {
			return nil, fieldErr(field, "log probe needs a regular expression: log:<regex> (e.g. log:listening on)")
		}
		if _, err := regexp.Compile(rest); err != nil {
			return nil, fieldErr(field, "log probe regex %q: %v", rest, err)
		}
		p.Kind, p.Target = ProbeLog, rest
	case ProbeExec:
		if strings.TrimSpace(rest) == "" {
			return nil, fieldErr(field, "exec probe needs a command template: exec:<template> (e.g. exec:pg_isready -h 127.0.0.1)")
		}
		if _, err := template.Parse(rest); err != nil {
			return nil, fieldErr(field, "exec probe template: %v", err)
		}
		p.Kind, p.Target = ProbeExec, rest
	default:
		return nil, fieldErr(field, "unknown probe %q; %s", spec, forms)
	}
	return p, nil
}

// parseHTTPURL splits http://host[:port][/path] (no TLS, no user info).
func parseHTTPURL(spec string) (addr, host, pth string, err error) {
	rest, ok := strings.CutPrefix(spec, "http://")
	if !ok {
		return "", "", "", fmt.Errorf("http probe %q: want http://host:port/path", spec)
	}
	hostport, p, found := strings.Cut(rest, "/")
	pth = "/" + p
	if !found {
		pth = "/"
	}
	if strings.ContainsAny(pth, " \t\r\n") {
		return "", "", "", fmt.Errorf("http probe %q: the path may not contain spaces (escape them as %%20)", spec)
	}
	if hostport == "" || strings.Contains(hostport, "@") {
		return "", "", "", fmt.Errorf("http probe %q: want http://host:port/path", spec)
	}
	h, port := hostport, "80"
	if i := strings.LastIndexByte(hostport, ':'); i >= 0 && !strings.HasSuffix(hostport, "]") {
		h, port = hostport[:i], hostport[i+1:]
	}
	if err := checkPort(port); err != nil {
		return "", "", "", fmt.Errorf("http probe %q: %v", spec, err)
	}
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	if h == "" {
		return "", "", "", fmt.Errorf("http probe %q: no host", spec)
	}
	return net.JoinHostPort(h, port), hostport, pth, nil
}

func checkPort(port string) error {
	n, err := strconv.Atoi(port)
	if err != nil || n < 1 || n > 65535 {
		return fmt.Errorf("port %q is not a number from 1 to 65535", port)
	}
	return nil
}

// checkWatchGlob accepts a relative doublestar glob that stays inside the
// run's directory.
func checkWatchGlob(g string) error {
	switch {
	case path.IsAbs(g) || strings.HasPrefix(g, "~"):
		return fieldErr("watch", "glob %q must be relative to the run's directory (e.g. src/**/*.go)", g)
	case g == ".." || strings.HasPrefix(g, "../") || strings.Contains(g, "/../"):
		return fieldErr("watch", "glob %q leaves the run's directory; spawn from a directory above it instead", g)
	case !doublestar.ValidatePattern(g):
		return fieldErr("watch", "glob %q is malformed (doublestar syntax: *, **, ?, [..], {a,b})", g)
	}
	return nil
}

// ParseDuration reads a positive duration: a Go duration ("30s", "1m30s",
// "500ms") or a number of seconds.
func ParseDuration(field, s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	d, err := time.ParseDuration(s)
	if err != nil {
		f, ferr := strconv.ParseFloat(s, 64)
		if ferr != nil {
			return 0, fieldErr(field, "%q is not a duration; write e.g. 30s, 500ms, 2m or a number of seconds", s)
		}
		switch ns := f * float64(time.Second); {
		case math.IsNaN(ns):
			return 0, fieldErr(field, "%q is not a duration; write e.g. 30s, 500ms, 2m or a number of seconds", s)
		case ns >= math.MaxInt64:
			// Checked before the conversion, which would overflow.
			return 0, fieldErr(field, "%s is too long; it must be at most %s (write e.g. 30s, 2m or 1h)", s, time.Duration(math.MaxInt64))
		default:
			d = time.Duration(ns)
		}
	}
	if d < minProbeEvery {
		return 0, fieldErr(field, "%s is too short; it must be at least %s", s, minProbeEvery)
	}
	return d, nil
}

var sizeRe = lazyre.New(`^(\d+(?:\.\d+)?)\s*([KMGT]?)(I?B?)$`)

// ParseSize reads a size in bytes: a number with an optional K, M, G or T
// (powers of 1024; KB, KiB, MB, MiB… read the same).
func ParseSize(field, s string) (int64, error) {
	m := sizeRe.FindStringSubmatch(strings.ToUpper(strings.TrimSpace(s)))
	if m == nil || (m[2] == "" && m[3] != "" && m[3] != "B") {
		return 0, fieldErr(field, "%q is not a size; write e.g. 512M, 1.5G or a number of bytes", s)
	}
	f, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return 0, fieldErr(field, "%q is not a size; write e.g. 512M, 1.5G or a number of bytes", s)
	}
	shift := strings.Index("KMGT", m[2]) + 1
	if m[2] == "" {
		shift = 0
	}
	bytes := f * float64(int64(1)<<(10*shift))
	if bytes >= math.MaxInt64 {
		// Checked before the conversion, which would overflow.
		return 0, fieldErr(field, "%s is too large; it must be below 8E (write e.g. 512M, 1.5G or 64G)", s)
	}
	n := int64(bytes)
	if n < minMaxRSS {
		return 0, fieldErr(field, "%s is below 1M; a whole process tree needs more", s)
	}
	return n, nil
}

// ReadyTimeout is the readiness deadline of an attempt.
func (h *Health) ReadyTimeout() time.Duration {
	if h.ReadyTimeoutMS > 0 {
		return time.Duration(h.ReadyTimeoutMS) * time.Millisecond
	}
	return DefaultReadyTimeout
}

// LivenessPeriod is the liveness period.
func (h *Health) LivenessPeriod() time.Duration {
	if h.LivenessEveryMS > 0 {
		return time.Duration(h.LivenessEveryMS) * time.Millisecond
	}
	return DefaultLivenessEvery
}

// LivenessLimit is how many failures in a row make a run unhealthy.
func (h *Health) LivenessLimit() int {
	if h.LivenessFailures > 0 {
		return h.LivenessFailures
	}
	return DefaultLivenessFailures
}

// WantsRestart reports whether the health declaration restarts a run
// (liveness, max_rss): without an explicit restart policy such a run
// gets on-failure.
func (h *Health) WantsRestart() bool {
	return h != nil && (h.Liveness != nil || h.MaxRSS > 0)
}

// Readiness states (progress.json health.ready_state).
const (
	ReadyWaiting  = "waiting"
	ReadyOK       = "ready"
	ReadyTimedOut = "timed_out"
)

// HealthState is progress.json "health": what the supervisor's probes
// found in the current attempt.
type HealthState struct {
	// Ready is true once the readiness probe passed in this attempt;
	// ReadyAt is when.
	Ready   bool      `json:"ready"`
	ReadyAt time.Time `json:"ready_at,omitzero"`
	// ReadyState is waiting, ready or timed_out ("" without a readiness
	// probe); ReadySince is when it last changed; ReadyError is the
	// probe's last error.
	ReadyState string    `json:"ready_state,omitempty"`
	ReadySince time.Time `json:"ready_since,omitzero"`
	ReadyError string    `json:"ready_error,omitempty"`
	// ReadyChecks counts the readiness probe's tries in this attempt.
	ReadyChecks int `json:"ready_checks,omitempty"`
	// LivenessFailures counts the liveness probe's failures in a row;
	// LivenessError is its last error.
	LivenessFailures int    `json:"liveness_failures,omitempty"`
	LivenessError    string `json:"liveness_error,omitempty"`
	// LastRestart is why the health checks last restarted the run
	// (liveness, max_rss, watch) and LastRestartAt when.
	LastRestart   string    `json:"last_restart,omitempty"`
	LastRestartAt time.Time `json:"last_restart_at,omitzero"`
}

// Ready reports whether the run is ready, and since when. With a
// readiness probe a run is ready once the probe passed in its current
// attempt (a restart makes it not ready until the probe passes again);
// without one a run is ready while it is running (since it was created).
// An ended run is never ready.
func (in *Info) Ready() (bool, time.Time) {
	if in == nil || in.Meta == nil || in.Status != StatusRunning {
		return false, time.Time{}
	}
	if in.Meta.Health == nil || in.Meta.Health.Ready == nil {
		return true, in.Meta.StartedAt()
	}
	if p := in.Progress; p != nil && p.Health != nil && p.Health.Ready {
		return true, p.Health.ReadyAt
	}
	return false, time.Time{}
}

// Readiness is the run's readiness state and since when: "" for a run
// without a readiness probe (or not yet probed), else waiting, ready or
// timed_out (an ended run reports its last state).
func (in *Info) Readiness() (state string, since time.Time) {
	if in == nil || in.Progress == nil || in.Progress.Health == nil {
		return "", time.Time{}
	}
	h := in.Progress.Health
	return h.ReadyState, h.ReadySince
}

// CheckValues checks that the exec probes' templates resolve with the
// run's values (placeholders, typed arguments) in dir, before anything
// starts.
func (h *Health) CheckValues(values map[string]any, dir string) error {
	if h == nil {
		return nil
	}
	for _, f := range []struct {
		field string
		p     *Probe
	}{{"ready", h.Ready}, {"liveness", h.Liveness}} {
		if f.p == nil || f.p.Kind != ProbeExec {
			continue
		}
		node, err := template.Parse(f.p.Target)
		if err == nil {
			_, err = template.NewPlan(node, template.Values(values), template.Options{Dir: dir})
		}
		if err != nil {
			return fieldErr(f.field, "exec probe: %v", err)
		}
	}
	return nil
}
