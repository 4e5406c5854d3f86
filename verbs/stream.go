package verbs

import (
	"context"
	"encoding/json"

	"github.com/pi-actors/pi-actors/verbs/wire"
)

// stream sends one streaming request to the kernel (starting it if
// needed; node "" is wherever the kernel answers it) and hands each
// response to frame until frame says it is done, the kernel goes away or
// ctx ends (then it returns nil). A response that is an error ends the
// stream with that error; keepalives and the opening {"watching":…} are
// skipped.
func (env *Env) stream(ctx context.Context, op, node string, params any, frame func(resp *wire.Response) (done bool, err error)) error {
	return env.streamAcked(ctx, op, node, params, frame, nil)
}

// streamAcked is stream; a watcher (op watch) acknowledges each follow-up
// once its front door passed it on — when frame returned, or, with acks,
// when the caller sends its id there. One never acknowledged goes back
// to the queue when the watcher hangs up.
func (env *Env) streamAcked(ctx context.Context, op, node string, params any, frame func(resp *wire.Response) (done bool, err error), acks <-chan string) error {
	c, err := env.Dial(true)
	if err != nil {
		return err
	}
	defer c.Close()
	req := wire.Request{Op: op, Session: env.Session, Cwd: env.Cwd, Env: env.Environ, Node: node, Ack: op == "watch"}
	if params != nil {
		if err := req.Encode(params); err != nil {
			return err
		}
	}
	if err := c.Send(req); err != nil {
		return err
	}
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	if acks != nil {
		go func() {
			for id := range acks {
				if c.Ack(id) != nil {
					return
				}
			}
		}()
	}
	for first := true; ; first = false {
		resp, err := c.Read()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		if resp.Error != nil {
			return resp.Error
		}
		var probe struct {
			Keepalive bool   `json:"keepalive"`
			Watching  string `json:"watching"`
			End       bool   `json:"end"` // the stream is over (an archived run's room)
			ID        string `json:"id"`  // a follow-up's (watch)
		}
		json.Unmarshal(resp.Result, &probe)
		if probe.Keepalive || (first && probe.Watching != "") {
			continue
		}
		if probe.End && probe.ID == "" {
			return nil
		}
		var id string
		if op == "watch" {
			// A follow-up carries a run's message: bounded as in
			// view=followups, for every front door (CLI, MCP).
			id = probe.ID
			resp.Result = boundFollowupJSON(resp.Result)
		}
		if done, err := frame(resp); done || err != nil {
			return err
		}
		if id != "" && acks == nil {
			if err := c.Ack(id); err != nil {
				return err
			}
		}
	}
}
