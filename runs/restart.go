package runs

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// Restart is a run's restart policy.
type Restart struct {
	Policy       string  `json:"policy"` // never, on-failure, on-abnormal, always
	BackoffMS    int     `json:"backoff_ms"`
	MaxBackoffMS int     `json:"max_backoff_ms"`
	Jitter       float64 `json:"jitter"`
	ResetAfterMS int     `json:"reset_after_ms"`
	Burst        int     `json:"burst"`
	WindowMS     int     `json:"window_ms"`
}

// DefaultRestart is the policy with every field at its default.
func DefaultRestart() Restart {
	return Restart{Policy: "never", BackoffMS: 1000, MaxBackoffMS: 60000, Jitter: 0.1, ResetAfterMS: 30000, Burst: 5, WindowMS: 600000}
}

// ParseRestart reads a restart policy: a policy name, or an object whose
// missing fields take the defaults. nil means no policy.
func ParseRestart(raw any) (*Restart, error) {
	r := DefaultRestart()
	switch v := raw.(type) {
	case nil:
		return nil, nil
	case string:
		r.Policy = v
	case map[string]any:
		for k, val := range v {
			var err error
			switch k {
			case "policy":
				s, ok := val.(string)
				if !ok {
					return nil, fmt.Errorf("restart.policy must be never, on-failure, on-abnormal or always")
				}
				r.Policy = s
			case "backoff_ms":
				r.BackoffMS, err = intField(k, val)
			case "max_backoff_ms":
				r.MaxBackoffMS, err = intField(k, val)
			case "reset_after_ms":
				r.ResetAfterMS, err = intField(k, val)
			case "burst":
				r.Burst, err = intField(k, val)
			case "window_ms":
				r.WindowMS, err = intField(k, val)
			case "jitter":
				var f float64
				f, err = floatField(k, val)
				r.Jitter = f
			default:
				return nil, fmt.Errorf("restart: unknown field %s (fields: policy, backoff_ms, max_backoff_ms, jitter, reset_after_ms, burst, window_ms)", k)
			}
			if err != nil {
				return nil, err
			}
		}
	default:
		return nil, fmt.Errorf("restart must be a policy name or an object {policy, backoff_ms, …}")
	}
	return &r, r.check()
}

func (r Restart) check() error {
	switch r.Policy {
	case "never", "on-failure", "on-abnormal", "always":
	default:
		return fmt.Errorf("restart.policy must be never, on-failure, on-abnormal or always (got %q)", r.Policy)
	}
	switch {
	case r.BackoffMS < 0 || r.MaxBackoffMS < 0 || r.ResetAfterMS < 0:
		return fmt.Errorf("restart: backoff_ms, max_backoff_ms and reset_after_ms must not be negative")
	case r.Jitter < 0 || r.Jitter > 1:
		return fmt.Errorf("restart.jitter must be between 0 and 1 (got %v)", r.Jitter)
	case r.Burst < 1:
		return fmt.Errorf("restart.burst must be at least 1 (got %d)", r.Burst)
	case r.WindowMS < 1:
		return fmt.Errorf("restart.window_ms must be at least 1 (got %d)", r.WindowMS)
	}
	return nil
}

func intField(k string, v any) (int, error) {
	f, err := floatField(k, v)
	if err != nil || f != math.Trunc(f) {
		return 0, fmt.Errorf("restart.%s must be an integer", k)
	}
	return int(f), nil
}

func floatField(k string, v any) (float64, error) {
	var f float64
	if _, err := fmt.Sscan(fmt.Sprint(v), &f); err != nil {
		return 0, fmt.Errorf("restart.%s must be a number (got %v)", k, v)
	}
	return f, nil
}

// Wants reports whether an attempt that ended with code should restart.
// on-abnormal (systemd's name) restarts only an attempt that a signal
// ended (128+n) or a timeout stopped (124), not one that exited with its
// own status: what a program that decides its own end needs (a workflow's
// scheduler).
func (r *Restart) Wants(code int) bool {
	if r == nil {
		return false
	}
	switch r.Policy {
	case "always":
		return true
	case "on-failure":
		return code != 0
	case "on-abnormal":
		return code > 128 || code == 124
	}
	return false
}

// backoff tracks starts for the policy: the delay grows exponentially with
// consecutive quick failures, resets after a stable run, and more than
// Burst starts inside Window is the start limit.
type backoff struct {
	r      *Restart
	starts []time.Time
	streak int
}

// started records an attempt start.
func (b *backoff) started(t time.Time) {
	b.starts = append(b.starts, t)
}

// next decides after an attempt that ran from start to end: the delay
// before the next start, or limit=true when the start limit is reached.
func (b *backoff) next(start, end time.Time) (delay time.Duration, limit bool) {
	window := time.Duration(b.r.WindowMS) * time.Millisecond
	kept := b.starts[:0]
	for _, s := range b.starts {
		if end.Sub(s) < window {
			kept = append(kept, s)
		}
	}
	b.starts = kept
	if len(b.starts) >= b.r.Burst {
		return 0, true
	}
	if end.Sub(start) >= time.Duration(b.r.ResetAfterMS)*time.Millisecond {
		b.streak = 0
	}
	d := float64(b.r.BackoffMS) * math.Pow(2, float64(b.streak))
	d = math.Min(d, float64(b.r.MaxBackoffMS))
	if b.r.Jitter > 0 {
		d *= 1 + b.r.Jitter*(rand.Float64()*2-1)
	}
	b.streak++
	return time.Duration(d) * time.Millisecond, false
}
