package verbs

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/pi-actors/pi-actors/runs"
)

// watch takes "a,b" (commas inside {…} belong to the glob) or an array;
// the health parameters decode from the CLI's strings and JSON's numbers.
func TestSpawnHealthParams(t *testing.T) {
	spec := Find("spawn")
	req, err := spec.DecodeCLI(nil, map[string]any{"template": "x", "watch": "src/**/*.{go,mod}, docs/*.md",
		"ready": "tcp::80", "ready_timeout": "2s", "liveness": "log:tick", "liveness_failures": "5", "max_rss": "64M"})
	if err != nil {
		t.Fatal(err)
	}
	h, err := req.(*Spawn).HealthSpec()
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(h.Watch) != "[src/**/*.{go,mod} docs/*.md]" || h.ReadyTimeoutMS != 2000 || h.LivenessFailures != 5 || h.MaxRSS != 64<<20 {
		t.Errorf("health %+v", h)
	}
	req, err = spec.DecodeJSON([]byte(`{"template":"x","watch":["a/*","b/**"],"liveness":"tcp::1","liveness_failures":2,"ready_timeout":30,"ready":"tcp::1"}`))
	if err != nil {
		t.Fatal(err)
	}
	if h, err = req.(*Spawn).HealthSpec(); err != nil || fmt.Sprint(h.Watch) != "[a/* b/**]" || h.LivenessFailures != 2 || h.ReadyTimeout() != 30*time.Second {
		t.Errorf("JSON form: %+v %v", h, err)
	}
	if _, err := spec.DecodeJSON([]byte(`{"template":"x","watch":{"a":1}}`)); err == nil || !strings.Contains(err.Error(), "globs") {
		t.Errorf("watch object: %v", err)
	}
	for params, exit := range map[string]int{
		`{"template":"x","liveness":"tcp::1","liveness_failures":"many"}`: ExitDataErr,
		`{"template":"x","liveness":"tcp::1","liveness_failures":[1]}`:    ExitDataErr,
		`{"template":"x","ready_timeout":"5s"}`:                           ExitUsage,
		`{"template":"x","wait":"ready"}`:                                 ExitUsage,
		`{"template":"x","ready":"tcp::1","wait":"done"}`:                 ExitUsage,
		`{"template":"x","max_rss":"1K"}`:                                 ExitDataErr,
	} {
		req, err := spec.DecodeJSON([]byte(params))
		if err == nil {
			err = req.Validate()
		}
		if e := Classify(err); err == nil || e.Exit != exit {
			t.Errorf("%s: %v, want exit %d", params, err, exit)
		}
	}
}

// ps and top write readiness as "ready 2m03s", "not ready 12s",
// "timed out 1m05s"; ps adds READY only when a listed run has a probe.
func TestReadyCellAndColumn(t *testing.T) {
	now := time.Now()
	for state, want := range map[string]string{runs.ReadyOK: "ready 2m03s", runs.ReadyWaiting: "not ready 2m03s", runs.ReadyTimedOut: "timed out 2m03s", "": ""} {
		r := RunRow{ReadyState: state, ReadySince: now.Add(-123 * time.Second)}
		if got := r.ReadyCell(now); got != want {
			t.Errorf("%q: %q, want %q", state, got, want)
		}
	}
	plain := []RunRow{{Run: "a", Status: "running"}}
	if cols := withReadyColumn(psColumns(now), plain, now); len(cols) != len(psColumns(now)) {
		t.Errorf("READY added without a probed run")
	}
	probed := append(plain, RunRow{Run: "b", Status: "running", ReadyState: runs.ReadyOK, ReadySince: now})
	cols := withReadyColumn(psColumns(now), probed, now)
	// NODE (ps --cluster only), ID, STATUS, READY, …
	if cols[3].head != "READY" || cols[3].cell(&probed[0]) != "-" || cols[3].cell(&probed[1]) != "ready 0s" {
		t.Errorf("columns %v", cols)
	}
	b, _ := json.Marshal(plain[0])
	if strings.Contains(string(b), "ready") {
		t.Errorf("a row without a probe says %s", b)
	}
}
