package mailbox

import (
	"context"
	"fmt"
)

// LoopOwner is the claimed_by of records claimed by HandleOnce and Drain.
const LoopOwner = "mailbox-loop"

// TypeKill is the one message type a drain stops on: the runtime's
// force-kill. control.stop and control.cancel are ordinary messages.
const TypeKill = "control.kill"

// DefaultDrainMax bounds one Drain call when max is 0.
const DefaultDrainMax = 100

// Handler processes one claimed record. A nil error marks it handled; an
// error marks it failed with the error text in "error".
type Handler func(ctx context.Context, rec Record) error

// HandleOnce claims one queued record (owner LoopOwner unless given), runs
// h and marks the record handled, or failed and returns h's error. It
// returns the record it handled, nil when there was nothing to claim.
func (in *Inbox) HandleOnce(ctx context.Context, owner string, h Handler) (rec Record, err error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if owner == "" {
		owner = LoopOwner
	}
	rec, err = in.Claim(owner, StatusQueued)
	if err != nil || rec == nil {
		return nil, err
	}
	if herr := h(ctx, rec); herr != nil {
		if err := in.Done(rec.ID(), StatusFailed, map[string]any{"error": herr.Error()}); err != nil {
			return rec, fmt.Errorf("handle %s: %w (and mark failed: %v)", rec.ID(), herr, err)
		}
		return rec, herr
	}
	return rec, in.Done(rec.ID(), StatusHandled, nil)
}

// Drain handles queued records one by one until the inbox has none, max
// records were handled (DefaultDrainMax when 0), ctx is done or, with
// stopOnKill, right after a control.kill was handled (stopped is then
// true). A handler error marks that record failed and ends the drain.
func (in *Inbox) Drain(ctx context.Context, owner string, max int, stopOnKill bool, h Handler) (handled int, stopped bool, err error) {
	if max <= 0 {
		max = DefaultDrainMax
	}
	for handled < max {
		rec, err := in.HandleOnce(ctx, owner, h)
		if rec == nil {
			return handled, false, err
		}
		handled++
		if err != nil {
			return handled, false, err
		}
		if stopOnKill && rec.Type() == TypeKill {
			return handled, true, nil
		}
	}
	return handled, false, nil
}
