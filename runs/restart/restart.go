// Package restart is a run's restart policy: its fields, their defaults,
// parsing and checking (a recipe's restart field is checked with it when
// the recipe loads; spawn's restart= when the run starts), and which
// exit codes it restarts. The supervisor (package runs) applies it.
package restart

import (
	"fmt"
	"math"
)

// Policy is a run's restart policy.
type Policy struct {
	Policy       string  `json:"policy"` // never, on-failure, on-abnormal, always
	BackoffMS    int     `json:"backoff_ms"`
	MaxBackoffMS int     `json:"max_backoff_ms"`
	Jitter       float64 `json:"jitter"`
	ResetAfterMS int     `json:"reset_after_ms"`
	Burst        int     `json:"burst"`
	WindowMS     int     `json:"window_ms"`
}

// Default is the policy with every field at its default.
func Default() Policy {
	return Policy{Policy: "never", BackoffMS: 1000, MaxBackoffMS: 60000, Jitter: 0.1, ResetAfterMS: 30000, Burst: 5, WindowMS: 600000}
}

// Parse reads a restart policy: a policy name, or an object whose
// missing fields take the defaults. nil means no policy.
func Parse(raw any) (*Policy, error) {
	r := Default()
	switch v := raw.(type) {
	case nil:
		return nil, nil
	case string:
		r.Policy = v
	case map[string]any:
		if _, ok := v["policy"]; !ok {
			// {backoff_ms: 10} alone meant never: the run it was written
			// for was never restarted.
			return nil, fmt.Errorf("restart.policy is required in a restart object: never, on-failure, on-abnormal or always (e.g. {\"policy\":\"on-failure\",\"backoff_ms\":500})")
		}
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

func (r Policy) check() error {
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

// maxField bounds the integer fields: milliseconds up to about 31 years
// (a time.Duration overflows past 9.2e12 ms).
const maxField = 1e12

func intField(k string, v any) (int, error) {
	f, err := floatField(k, v)
	if err != nil || f != math.Trunc(f) {
		return 0, fmt.Errorf("restart.%s must be an integer", k)
	}
	if math.Abs(f) > maxField {
		// int(f) of a larger float is undefined (it read 1e30 as the
		// smallest int), and a time.Duration of it overflows.
		return 0, fmt.Errorf("restart.%s must be at most %g (got %g)", k, float64(maxField), f)
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

// Wants reports whether an attempt that ended with code should restart;
// abnormal is whether a signal ended it (128+n) or a timeout stopped it
// (124) — the attempt's real cause, not inferred from the code.
// on-abnormal (systemd's name) restarts only such an attempt, not one that
// exited with its own status (255, 130 or 124 included): what a program
// that decides its own end needs (a workflow's scheduler).
func (r *Policy) Wants(code int, abnormal bool) bool {
	if r == nil {
		return false
	}
	switch r.Policy {
	case "always":
		return true
	case "on-failure":
		return code != 0
	case "on-abnormal":
		return abnormal
	}
	return false
}
