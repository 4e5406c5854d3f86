package runs

import (
	"context"
	"sync"
	"time"
)

// Clock is a run's counted time: it stops while the run is suspended, so
// a timeout, a restart delay or a probe's deadline that was running when
// the run was suspended goes on with the time it had left. The zero value
// is not usable; NewClock starts one.
type Clock struct {
	mu     sync.Mutex
	base   time.Time
	paused bool
	since  time.Time     // when the current pause began
	total  time.Duration // the pauses that ended
	epoch  int           // pauses so far
	change chan struct{} // closed and replaced at every pause and resume
}

// NewClock returns a running clock.
func NewClock() *Clock {
	return &Clock{base: time.Now(), change: make(chan struct{})}
}

// Now is the counted time since the clock started.
func (c *Clock) Now() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.nowLocked(time.Now())
}

func (c *Clock) nowLocked(t time.Time) time.Duration {
	if c.paused {
		t = c.since
	}
	return t.Sub(c.base) - c.total
}

// Pause stops the clock; false when it was stopped already.
func (c *Clock) Pause() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.paused {
		return false
	}
	c.paused, c.since = true, time.Now()
	c.epoch++
	c.changed()
	return true
}

// Resume restarts the clock and returns how long it was stopped (0 when
// it was running).
func (c *Clock) Resume() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.paused {
		return 0
	}
	d := time.Since(c.since)
	c.paused, c.total = false, c.total+d
	c.changed()
	return d
}

func (c *Clock) changed() {
	close(c.change)
	c.change = make(chan struct{})
}

// Paused reports whether the clock is stopped.
func (c *Clock) Paused() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.paused
}

// Epoch counts the pauses so far: a check that started in one epoch and
// ended in another spanned a suspension.
func (c *Clock) Epoch() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.epoch
}

// Wait returns true once d of counted time has passed, false when ctx
// ended first (template.Clock).
func (c *Clock) Wait(ctx context.Context, d time.Duration) bool {
	ok, _ := c.Until(ctx, c.Now()+d, nil)
	return ok
}

// Until waits until the counted time reaches end (true), ctx ends (false)
// or bell rings (false, rang); a nil bell never rings.
func (c *Clock) Until(ctx context.Context, end time.Duration, bell <-chan struct{}) (reached, rang bool) {
	for {
		c.mu.Lock()
		left, paused, ch := end-c.nowLocked(time.Now()), c.paused, c.change
		c.mu.Unlock()
		if !paused && left <= 0 {
			return true, false
		}
		var timer *time.Timer
		var fire <-chan time.Time
		if !paused {
			timer = time.NewTimer(left)
			fire = timer.C
		}
		select {
		case <-ctx.Done():
			stopTimer(timer)
			return false, false
		case <-bell:
			stopTimer(timer)
			return false, true
		case <-ch:
		case <-fire:
		}
		stopTimer(timer)
	}
}

// Running waits while the clock is stopped: true once it runs, false
// when ctx ended or bell rang first.
func (c *Clock) Running(ctx context.Context, bell <-chan struct{}) bool {
	for {
		c.mu.Lock()
		paused, ch := c.paused, c.change
		c.mu.Unlock()
		if !paused {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-bell:
			return false
		case <-ch:
		}
	}
}

func stopTimer(t *time.Timer) {
	if t != nil {
		t.Stop()
	}
}
