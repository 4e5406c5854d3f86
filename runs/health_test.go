package runs_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/pi-actors/pi-actors/runs"
)

func TestParseProbeForms(t *testing.T) {
	for _, c := range []struct {
		spec, kind, addr, host, path, target string
	}{
		{"http://127.0.0.1:8000/health", runs.ProbeHTTP, "127.0.0.1:8000", "127.0.0.1:8000", "/health", ""},
		{"http://localhost", runs.ProbeHTTP, "localhost:80", "localhost", "/", ""},
		{"http://[::1]:9000/a/b?x=1", runs.ProbeHTTP, "[::1]:9000", "[::1]:9000", "/a/b?x=1", ""},
		{"tcp:127.0.0.1:5432", runs.ProbeTCP, "127.0.0.1:5432", "", "", ""},
		{"tcp::6379", runs.ProbeTCP, "127.0.0.1:6379", "", "", ""},
		{"log:listening on port \\d+", runs.ProbeLog, "", "", "", "listening on port \\d+"},
		{"exec:pg_isready -h 127.0.0.1", runs.ProbeExec, "", "", "", "pg_isready -h 127.0.0.1"},
	} {
		p, err := runs.ParseProbe("ready", c.spec)
		if err != nil {
			t.Errorf("%s: %v", c.spec, err)
			continue
		}
		if p.Kind != c.kind || p.Addr != c.addr || p.Host != c.host || p.Path != c.path || p.Target != c.target {
			t.Errorf("%s: got %+v", c.spec, p)
		}
	}
	for _, bad := range []string{
		"", "http://", "http://host:0/", "http://host:99999/", "http://host:x/", "http://u@host/", "http://h/a b",
		"https://example.com/", "tcp:host", "tcp:host:", "tcp:host:abc", "log:", "log:(", "exec:", "exec:  ",
		"exec:echo 'unterminated", "udp:1.2.3.4:5", "curl http://x",
	} {
		_, err := runs.ParseProbe("liveness", bad)
		var fe *runs.FieldError
		if !errors.As(err, &fe) || fe.Field != "liveness" {
			t.Errorf("ParseProbe(%q) = %v, want a liveness field error", bad, err)
		}
	}
}

func TestParseHealth(t *testing.T) {
	h, err := runs.ParseHealth(runs.HealthParams{})
	if err != nil || h != nil {
		t.Fatalf("nothing given: %+v %v, want nil", h, err)
	}
	h, err = runs.ParseHealth(runs.HealthParams{Ready: "tcp:127.0.0.1:1", ReadyTimeout: "1.5", Liveness: "log:tick",
		LivenessEvery: "250ms", LivenessFailures: 2, MaxRSS: "1.5G", Watch: []string{" src/**/*.go", "", "go.mod"}})
	if err != nil {
		t.Fatal(err)
	}
	if h.ReadyTimeoutMS != 1500 || h.LivenessEveryMS != 250 || h.LivenessFailures != 2 || h.MaxRSS != 3<<29 ||
		strings.Join(h.Watch, ",") != "src/**/*.go,go.mod" || h.ReadyTimeout() != 1500*time.Millisecond || !h.WantsRestart() {
		t.Errorf("parsed %+v", h)
	}
	if h, _ := runs.ParseHealth(runs.HealthParams{Ready: "tcp::1"}); h.ReadyTimeout() != runs.DefaultReadyTimeout || h.WantsRestart() {
		t.Errorf("defaults: %+v", h)
	}
	for _, c := range []struct {
		p       runs.HealthParams
		field   string
		missing bool
	}{
		{runs.HealthParams{ReadyTimeout: "5s"}, "ready_timeout", true},
		{runs.HealthParams{LivenessEvery: "5s"}, "liveness_every", true},
		{runs.HealthParams{LivenessFailures: 2}, "liveness_failures", true},
		{runs.HealthParams{Watch: []string{}}, "watch", false},
		{runs.HealthParams{Ready: "tcp::1", ReadyTimeout: "soon"}, "ready_timeout", false},
		{runs.HealthParams{Ready: "tcp::1", ReadyTimeout: "10ms"}, "ready_timeout", false},
		{runs.HealthParams{Ready: "tcp::1", ReadyTimeout: "-5s"}, "ready_timeout", false},
		{runs.HealthParams{Liveness: "tcp::1", LivenessEvery: "0"}, "liveness_every", false},
		{runs.HealthParams{Liveness: "tcp::1", LivenessFailures: -1}, "liveness_failures", false},
		{runs.HealthParams{MaxRSS: "lots"}, "max_rss", false},
		{runs.HealthParams{MaxRSS: "10K"}, "max_rss", false},
		{runs.HealthParams{MaxRSS: "5XB"}, "max_rss", false},
		{runs.HealthParams{Watch: []string{"/etc/*"}}, "watch", false},
		{runs.HealthParams{Watch: []string{"../x/*"}}, "watch", false},
		{runs.HealthParams{Watch: []string{"src/[a"}}, "watch", false},
		{runs.HealthParams{Watch: []string{" ", ""}}, "watch", false},
		{runs.HealthParams{Ready: "ftp://x"}, "ready", false},
	} {
		_, err := runs.ParseHealth(c.p)
		var fe *runs.FieldError
		if !errors.As(err, &fe) || fe.Field != c.field || fe.Missing != c.missing {
			t.Errorf("ParseHealth(%+v) = %v, want a %s error (missing=%v)", c.p, err, c.field, c.missing)
		}
	}
	for s, want := range map[string]int64{"1048576": 1 << 20, "2M": 2 << 20, "2MB": 2 << 20, "2mib": 2 << 20, "1g": 1 << 30, "1.5 GiB": 3 << 29, "1T": 1 << 40} {
		if n, err := runs.ParseSize("max_rss", s); err != nil || n != want {
			t.Errorf("ParseSize(%q) = %d %v, want %d", s, n, err, want)
		}
	}
}

func TestHealthCheckValues(t *testing.T) {
	h, err := runs.ParseHealth(runs.HealthParams{Ready: "exec:test -f {flag}"})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.CheckValues(map[string]any{"flag": "/tmp/x"}, t.TempDir()); err != nil {
		t.Errorf("resolvable: %v", err)
	}
	var fe *runs.FieldError
	if err := h.CheckValues(map[string]any{}, t.TempDir()); !errors.As(err, &fe) || fe.Field != "ready" || !strings.Contains(err.Error(), "flag") {
		t.Errorf("missing placeholder: %v, want a ready error naming flag", err)
	}
	var none *runs.Health
	if err := none.CheckValues(nil, ""); err != nil {
		t.Errorf("nil health: %v", err)
	}
}

// Info.Ready: a probed run is ready once its probe passed; a run without
// a probe while it runs; an ended run never.
func TestInfoReady(t *testing.T) {
	created := time.Now().Add(-time.Minute).UTC()
	at := time.Now().UTC()
	probe, _ := runs.ParseProbe("ready", "tcp::1")
	for _, c := range []struct {
		name string
		in   runs.Info
		ok   bool
		at   time.Time
	}{
		{"no probe, running", runs.Info{Status: runs.StatusRunning, Meta: &runs.Meta{CreatedAt: created}}, true, created},
		{"no probe, done", runs.Info{Status: runs.StatusDone, Meta: &runs.Meta{CreatedAt: created}}, false, time.Time{}},
		{"probe, waiting", runs.Info{Status: runs.StatusRunning, Meta: &runs.Meta{Health: &runs.Health{Ready: probe}},
			Progress: &runs.Progress{Health: &runs.HealthState{ReadyState: runs.ReadyWaiting}}}, false, time.Time{}},
		{"probe, no progress yet", runs.Info{Status: runs.StatusRunning, Meta: &runs.Meta{Health: &runs.Health{Ready: probe}}}, false, time.Time{}},
		{"probe, ready", runs.Info{Status: runs.StatusRunning, Meta: &runs.Meta{Health: &runs.Health{Ready: probe}},
			Progress: &runs.Progress{Health: &runs.HealthState{Ready: true, ReadyAt: at, ReadyState: runs.ReadyOK}}}, true, at},
		{"probe, backoff", runs.Info{Status: runs.StatusBackoff, Meta: &runs.Meta{Health: &runs.Health{Ready: probe}},
			Progress: &runs.Progress{Health: &runs.HealthState{Ready: true, ReadyAt: at}}}, false, time.Time{}},
	} {
		ok, got := c.in.Ready()
		if ok != c.ok || !got.Equal(c.at) {
			t.Errorf("%s: Ready() = %v %v, want %v %v", c.name, ok, got, c.ok, c.at)
		}
	}
}

// A duration or size past int64 is refused as too long or too large (it
// was converted first and overflowed: "too short", "below 1M").
func TestParseHealthOverflow(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"99999999999999999", "1e300", "9223372037"} {
		if _, err := runs.ParseDuration("liveness_every", s); err == nil || !strings.Contains(err.Error(), "too long") {
			t.Errorf("ParseDuration(%q) = %v, want too long", s, err)
		}
	}
	if _, err := runs.ParseDuration("liveness_every", "NaN"); err == nil || !strings.Contains(err.Error(), "not a duration") {
		t.Errorf("ParseDuration(NaN) = %v, want not a duration", err)
	}
	if d, err := runs.ParseDuration("liveness_every", "86400"); err != nil || d != 24*time.Hour {
		t.Errorf("ParseDuration(86400) = %v %v, want 24h", d, err)
	}
	for _, s := range []string{"99999999999999999999G", "9000000T", "9223372036854775808"} {
		if _, err := runs.ParseSize("max_rss", s); err == nil || !strings.Contains(err.Error(), "too large") {
			t.Errorf("ParseSize(%q) = %v, want too large", s, err)
		}
	}
	if n, err := runs.ParseSize("max_rss", "64G"); err != nil || n != 64<<30 {
		t.Errorf("ParseSize(64G) = %d %v", n, err)
	}
}
