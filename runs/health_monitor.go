package runs

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// Stop reasons the health checks give (besides kill, cancel, restart and
// term): watch restarts the attempt at once; liveness and max_rss end it
// as failed and leave the rest to the restart policy.
const (
	reasonWatch    = "watch"
	reasonLiveness = "liveness"
	reasonMaxRSS   = "max_rss"
)

// restartLike reports whether a stop reason starts another attempt
// rather than ending the run.
func restartLike(reason string) bool {
	switch reason {
	case "restart", reasonWatch, reasonLiveness, reasonMaxRSS:
		return true
	}
	return false
}

// healthKill reports whether the health checks stopped the attempt as
// unhealthy.
func healthKill(reason string) bool { return reason == reasonLiveness || reason == reasonMaxRSS }

// Timing of the checks.
const (
	readyFirstEvery  = 100 * time.Millisecond // the readiness probe's first pause; it doubles …
	readyMaxEvery    = 250 * time.Millisecond // … up to this
	readyLateEvery   = 5 * time.Second        // after a timeout the probe goes on this slowly
	readyTryTimeout  = 10 * time.Second       // one readiness try at most
	livenessTryLimit = 30 * time.Second       // one liveness try at most (and at most its period)
	rssEvery         = 500 * time.Millisecond // how often max_rss is checked
)

// monitor runs one attempt's health checks: readiness until it passes,
// liveness, max_rss. A run without probes or max_rss never has one.
type monitor struct {
	s       *supervisor
	h       *Health
	attempt int
	start   time.Time
	// cstart is start on the run's clock: deadlines count only the time
	// the run was not suspended.
	cstart time.Duration
	ready  *prober
	live   *prober
	wg     sync.WaitGroup
	cancel context.CancelFunc
	// verdict is closed once readiness has a first answer (ready or timed
	// out); liveness starts then.
	verdict chan struct{}
}

// startHealth starts the attempt's health checks and returns where the
// leaves' output goes (through a line tap when a probe reads the output)
// and how to stop the checks. A run that declared no probe and no max_rss
// gets its logs back and a no-op: nothing is started.
func (s *supervisor) startHealth(ctx context.Context, attempt int) (stdout, stderr io.Writer, stop func()) {
	h := s.meta.Health
	if h == nil || (h.Ready == nil && h.Liveness == nil && h.MaxRSS == 0) {
		return s.stdout, s.stderr, func() {}
	}
	m := &monitor{s: s, h: h, attempt: attempt, start: time.Now(), cstart: s.clock.Now(), verdict: make(chan struct{})}
	var err error
	if h.Ready != nil {
		if m.ready, err = newProber(s, h.Ready); err != nil {
			s.logf("ready: %v", err)
		}
	}
	if h.Liveness != nil {
		if m.live, err = newProber(s, h.Liveness); err != nil {
			s.logf("liveness: %v", err)
		}
	}
	stdout, stderr = s.stdout, s.stderr
	var logs []*prober
	for _, pr := range []*prober{m.ready, m.live} {
		if pr != nil && pr.re != nil {
			logs = append(logs, pr)
		}
	}
	if len(logs) > 0 {
		offer := func(line []byte) {
			for _, pr := range logs {
				pr.line(line)
			}
		}
		stdout, stderr = &lineTap{w: s.stdout, lines: offer}, &lineTap{w: s.stderr, lines: offer}
	}
	mctx, cancel := context.WithCancel(ctx)
	m.cancel = cancel
	if m.ready != nil {
		m.wg.Go(func() { m.readiness(mctx) })
	} else {
		close(m.verdict)
	}
	if m.live != nil {
		m.wg.Go(func() { m.liveness(mctx) })
	}
	if h.MaxRSS > 0 {
		m.wg.Go(func() { m.rss(mctx) })
	}
	return stdout, stderr, func() {
		cancel()
		m.wg.Wait()
	}
}

// readiness tries the probe (pausing 100 ms, then 200, then 250 ms) until it
// passes or ready_timeout is up; after a timeout it goes on every 5 s, so
// a run that comes up late still becomes ready.
func (m *monitor) readiness(ctx context.Context) {
	s, timeout := m.s, m.h.ReadyTimeout()
	deadline := m.cstart + timeout // on the run's clock
	until := func() time.Duration { return deadline - s.clock.Now() }
	s.setHealth(func(h *HealthState) {
		*h = HealthState{ReadyState: ReadyWaiting, ReadySince: m.start.UTC(), LastRestart: h.LastRestart, LastRestartAt: h.LastRestartAt}
	}, false)
	pause, timedOut := readyFirstEvery, false
	for tries := 1; ; tries++ {
		limit := min(readyTryTimeout, max(until(), readyFirstEvery))
		if timedOut {
			limit = readyTryTimeout
		}
		tctx, cancel := context.WithTimeout(ctx, limit)
		err := m.ready.check(tctx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		if err == nil {
			m.becameReady(tries, timedOut)
			return
		}
		s.setHealth(func(h *HealthState) { h.ReadyError, h.ReadyChecks = err.Error(), tries }, false)
		if !timedOut && until() <= 0 {
			timedOut = true
			m.timedOut(timeout, err)
			pause = readyLateEvery
		}
		wait := pause
		if !timedOut {
			wait = min(pause, max(until(), time.Millisecond))
			pause = min(2*pause, readyMaxEvery)
		}
		if !m.pause(ctx, wait, m.ready.wake) {
			return
		}
	}
}

// pause waits d of the run's clock (it stops while the run is
// suspended), or less when a log probe's doorbell rings (nil for other
// probes: it never rings); false when the attempt ended.
func (m *monitor) pause(ctx context.Context, d time.Duration, bell chan struct{}) bool {
	m.s.clock.Until(ctx, m.s.clock.Now()+d, bell)
	return ctx.Err() == nil
}

// becameReady records that the probe passed: the event and the outbox
// record first, then progress.json (written at once), so a reader that
// sees the run ready finds the record of it.
func (m *monitor) becameReady(tries int, late bool) {
	s, now := m.s, time.Now()
	after := s.clock.Now() - m.cstart // time suspended aside
	s.mu.Lock()
	first := !s.readyReported
	s.readyReported = true
	s.mu.Unlock()
	s.appendEvent(map[string]any{"event": "run.ready", "attempt": m.attempt, "after_ms": after.Milliseconds(), "checks": tries, "probe": m.h.Ready.Spec})
	// The run's first readiness, and a readiness after a timeout, are
	// follow-ups; becoming ready again after a restart is only logged.
	delivery := "log"
	if first || late {
		delivery = "followup"
	}
	summary := fmt.Sprintf("run:%s is ready after %s (%s passed)", s.meta.Run, roundDuration(after), m.h.Ready.Spec)
	if late {
		summary = fmt.Sprintf("run:%s became ready after %s, past its ready_timeout (%s passed)", s.meta.Run, roundDuration(after), m.h.Ready.Spec)
	}
	s.healthOutbox("run.ready", "info", delivery, summary, map[string]any{
		"ready": true, "ready_at": now.UTC().Format(time.RFC3339Nano), "attempt": m.attempt, "after_ms": after.Milliseconds(), "probe": m.h.Ready.Spec,
	})
	s.setHealth(func(h *HealthState) {
		h.Ready, h.ReadyAt, h.ReadyState, h.ReadySince, h.ReadyError, h.ReadyChecks = true, now.UTC(), ReadyOK, now.UTC(), "", tries
	}, true)
	if !late {
		close(m.verdict)
	}
}

// timedOut records that ready_timeout passed (records first, then
// progress.json); the run goes on.
func (m *monitor) timedOut(timeout time.Duration, err error) {
	s, now := m.s, time.Now()
	s.appendEvent(map[string]any{"event": "run.ready_timeout", "attempt": m.attempt, "timeout_ms": timeout.Milliseconds(), "error": err.Error(), "probe": m.h.Ready.Spec})
	s.healthOutbox("run.ready_timeout", "warning", "followup",
		fmt.Sprintf("run:%s is not ready after %s (ready_timeout): %s; it keeps running and the probe goes on every %s", s.meta.Run, roundDuration(timeout), cut(err.Error(), 300), readyLateEvery),
		map[string]any{"ready": false, "attempt": m.attempt, "timeout_ms": timeout.Milliseconds(), "error": err.Error(), "probe": m.h.Ready.Spec})
	s.setHealth(func(h *HealthState) {
		h.ReadyState, h.ReadySince, h.ReadyError = ReadyTimedOut, now.UTC(), err.Error()
	}, true)
	close(m.verdict)
}

// liveness checks the run every liveness_every once readiness has an
// answer; liveness_failures failures in a row make it unhealthy.
func (m *monitor) liveness(ctx context.Context) {
	select {
	case <-ctx.Done():
		return
	case <-m.verdict:
	}
	every, limit := m.h.LivenessPeriod(), m.h.LivenessLimit()
	clock := m.s.clock
	fails := 0
	for {
		if !clock.Wait(ctx, every) { // the period stops while the run is suspended
			return
		}
		epoch := clock.Epoch()
		tctx, cancel := context.WithTimeout(ctx, min(every, livenessTryLimit))
		err := m.live.check(tctx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		if err != nil && (clock.Paused() || clock.Epoch() != epoch) {
			continue // the run was suspended during the try: its answer says nothing
		}
		if err == nil {
			if fails > 0 {
				fails = 0
				m.s.setHealth(func(h *HealthState) { h.LivenessFailures, h.LivenessError = 0, "" }, false)
			}
			continue
		}
		fails++
		n := fails
		m.s.setHealth(func(h *HealthState) { h.LivenessFailures, h.LivenessError = n, err.Error() }, false)
		m.s.appendEvent(map[string]any{"event": "run.liveness", "attempt": m.attempt, "failures": fails, "of": limit, "error": err.Error()})
		if fails >= limit {
			m.s.unhealthy(reasonLiveness, fmt.Sprintf("liveness probe %s failed %d times in a row: %s", m.h.Liveness.Spec, fails, cut(err.Error(), 300)))
			return
		}
	}
}

// rss checks every 500 ms that the run's process tree (every descendant
// of the supervisor) stays within max_rss.
func (m *monitor) rss(ctx context.Context) {
	t := time.NewTicker(rssEvery)
	defer t.Stop()
	page := uint64(os.Getpagesize())
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if m.s.clock.Paused() {
			continue // stopped processes do not grow
		}
		var total uint64
		for _, p := range Descendants(os.Getpid()) {
			if st, err := Stat(p); err == nil {
				total += st.RSS * page
			}
		}
		if int64(total) > m.h.MaxRSS {
			m.s.unhealthy(reasonMaxRSS, fmt.Sprintf("process tree RSS %s passed max_rss %s", mib(int64(total)), mib(m.h.MaxRSS)))
			return
		}
	}
}

// unhealthy stops the attempt as failed (liveness, max_rss): the restart
// policy decides what follows (a run with liveness or max_rss and no
// policy has on-failure).
func (s *supervisor) unhealthy(reason, msg string) {
	now := time.Now().UTC()
	restart := s.meta.Restart.Wants(1, false)
	s.mu.Lock()
	s.healthErr = msg
	s.mu.Unlock()
	s.setHealth(func(h *HealthState) { h.LastRestart, h.LastRestartAt = reason, now }, false)
	s.appendEvent(map[string]any{"event": "run.unhealthy", "reason": reason, "error": msg, "restart": restart})
	next := "stopping it (restart policy never)"
	if restart {
		next = "restarting it (restart policy " + s.meta.Restart.Policy + ")"
	}
	s.healthOutbox("run.unhealthy", "warning", "followup", fmt.Sprintf("run:%s is unhealthy: %s; %s", s.meta.Run, msg, next),
		map[string]any{"reason": reason, "error": msg, "restart": restart})
	s.request(reason)
}

// setHealth edits progress.json's health record: written at once with
// flush (readiness verdicts), else with the next coalesced write.
func (s *supervisor) setHealth(edit func(*HealthState), flush bool) {
	s.mu.Lock()
	if s.progress.Health == nil {
		s.progress.Health = &HealthState{}
	}
	edit(s.progress.Health)
	s.mu.Unlock()
	if flush {
		s.flushProgress()
		return
	}
	select {
	case s.dirty <- struct{}{}:
	default:
	}
}

// healthOutbox records a health transition for the coordinator.
func (s *supervisor) healthOutbox(event, level, delivery, summary string, body map[string]any) {
	if s.meta.WorkflowNode != nil && delivery == "followup" {
		// A workflow node's health is its scheduler's to act on (and
		// the workflow's follow-ups the session's): logged, not raised.
		delivery = "log"
	}
	body["run"] = s.meta.Run
	s.appendOutbox(map[string]any{
		"body": body, "data": body, "delivery": delivery, "event": event, "from": s.meta.Address,
		"level": level, "summary": summary, "to": "coordinator", "type": event,
	})
}

// roundDuration writes a duration to the millisecond below 10 s, else to
// the second.
func roundDuration(d time.Duration) time.Duration {
	if d < 10*time.Second {
		return d.Round(time.Millisecond)
	}
	return d.Round(time.Second)
}

// mib writes a byte count in MiB.
func mib(n int64) string { return fmt.Sprintf("%.1fMiB", float64(n)/(1<<20)) }
