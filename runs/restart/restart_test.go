package restart_test

import (
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
	} {
		if r, err := restart.Parse(bad); err == nil {
			t.Errorf("Parse(%v) = %+v, want an error", bad, r)
		}
	}
}
