package restart_test

import (
	"strings"
	"testing"

	"github.com/pi-actors/pi-actors/runs/restart"
)

func TestParse(t *testing.T) {
	r, err := restart.Parse(nil)
	if err != nil || r != nil {
		t.Fatalf("nil: %v %v, want no policy", r, err)
	}
	r, err = restart.Parse("on-failure")
	if err != nil || r.Policy != "on-failure" || r.BackoffMS != restart.Default().BackoffMS {
		t.Fatalf("on-failure: %+v %v", r, err)
	}
	r, err = restart.Parse(map[string]any{"policy": "always", "backoff_ms": float64(10), "burst": float64(2), "jitter": 0.0})
	if err != nil || r.Policy != "always" || r.BackoffMS != 10 || r.Burst != 2 || r.Jitter != 0 || r.WindowMS != restart.Default().WindowMS {
		t.Fatalf("object: %+v %v", r, err)
	}
	for _, bad := range []any{
		"sometimes", 3, []any{"always"},
		map[string]any{"policy": 1},
		map[string]any{"policy": "always", "burst": float64(0)},
		map[string]any{"policy": "always", "window_ms": float64(0)},
		map[string]any{"policy": "always", "backoff_ms": float64(-1)},
		map[string]any{"policy": "always", "backoff_ms": 1.5},
		map[string]any{"policy": "always", "jitter": 2.0},
		map[string]any{"policy": "always", "unknown": true},
		map[string]any{"backoff_ms": float64(10)}, // no policy: it meant never
	} {
		if r, err := restart.Parse(bad); err == nil {
			t.Errorf("Parse(%v) = %+v, want an error", bad, r)
		}
	}
}

// A number past what an int and a time.Duration hold is refused as too
// large, naming the value given (1e30 read as the smallest int, and the
// error said "at least 1 (got -9223372036854775808)").
func TestParseTooLarge(t *testing.T) {
	for field, v := range map[string]float64{"window_ms": 1e30, "backoff_ms": 1e20, "reset_after_ms": -1e30, "burst": 1e13} {
		_, err := restart.Parse(map[string]any{"policy": "always", field: v})
		if err == nil || !strings.Contains(err.Error(), "restart."+field+" must be at most 1e+12") {
			t.Errorf("%s=%g: %v, want at most 1e+12", field, v, err)
		}
	}
	if r, err := restart.Parse(map[string]any{"policy": "always", "window_ms": 1e12}); err != nil || r.WindowMS != 1e12 {
		t.Errorf("window_ms=1e12: %+v %v, want accepted", r, err)
	}
}
