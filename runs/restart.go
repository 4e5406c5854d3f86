package runs

import (
	"math"
	"math/rand/v2"
	"time"

	"github.com/pi-actors/pi-actors/runs/restart"
)

// Restart is a run's restart policy (package restart).
type Restart = restart.Policy

// DefaultRestart is the policy with every field at its default.
func DefaultRestart() Restart { return restart.Default() }

// ParseRestart reads a restart policy: a policy name, or an object whose
// missing fields take the defaults. nil means no policy.
func ParseRestart(raw any) (*Restart, error) { return restart.Parse(raw) }

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
