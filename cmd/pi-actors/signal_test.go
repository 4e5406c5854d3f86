package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"
	"testing"
	"time"
)

// TestInterruptible: SIGINT cancels the context once signals are handled
// (armed at once, or after the delay) and not before; stop releases them.
// The test holds its own SIGINT channel throughout, so an unhandled
// signal never ends the test binary.
func TestInterruptible(t *testing.T) {
	guard := make(chan os.Signal, 8)
	signal.Notify(guard, os.Interrupt)
	defer signal.Stop(guard)
	interrupt := func() {
		t.Helper()
		if err := syscall.Kill(os.Getpid(), syscall.SIGINT); err != nil {
			t.Fatal(err)
		}
		select {
		case <-guard:
		case <-time.After(5 * time.Second):
			t.Fatal("SIGINT never arrived")
		}
	}
	cancelled := func(ctx context.Context, within time.Duration) bool {
		select {
		case <-ctx.Done():
			return true
		case <-time.After(within):
			return false
		}
	}

	t.Run("before the delay a signal is not the context's", func(t *testing.T) {
		ctx, stop := interruptible(context.Background(), time.Hour)
		defer stop()
		interrupt()
		if cancelled(ctx, 100*time.Millisecond) {
			t.Fatal("context cancelled by a signal before signals were handled")
		}
	})
	t.Run("armed at once", func(t *testing.T) {
		ctx, stop := interruptible(context.Background(), time.Hour)
		defer stop()
		armSignals(ctx)
		armSignals(ctx) // idempotent
		interrupt()
		if !cancelled(ctx, 5*time.Second) {
			t.Fatal("SIGINT did not cancel an armed context")
		}
	})
	t.Run("armed after the delay", func(t *testing.T) {
		ctx, stop := interruptible(context.Background(), time.Millisecond)
		defer stop()
		deadline := time.Now().Add(5 * time.Second)
		for !cancelled(ctx, 0) && time.Now().Before(deadline) {
			interrupt()
			if cancelled(ctx, 20*time.Millisecond) {
				break
			}
		}
		if ctx.Err() == nil {
			t.Fatal("SIGINT did not cancel the context after the delay")
		}
	})
	t.Run("stop cancels the context; arming after it neither blocks nor panics", func(t *testing.T) {
		ctx, stop := interruptible(context.Background(), time.Millisecond)
		stop()
		if ctx.Err() == nil {
			t.Fatal("stop did not cancel the context")
		}
		time.Sleep(20 * time.Millisecond) // the delay passed: nothing armed
		armSignals(ctx)                   // after stop: nothing armed either
	})
	t.Run("a context interruptible did not make", func(t *testing.T) {
		armSignals(context.Background()) // no-op, no panic
	})
}
