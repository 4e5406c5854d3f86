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
	c, err := env.Dial(true)
	if err != nil {
		return err
	}
	defer c.Close()
	req := wire.Request{Op: op, Session: env.Session, Cwd: env.Cwd, Env: env.Environ, Node: node}
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
		}
		json.Unmarshal(resp.Result, &probe)
		if probe.Keepalive || (first && probe.Watching != "") {
			continue
		}
		if op == "watch" {
			// A follow-up carries a run's message: bounded as in
			// view=followups, for every front door (CLI, MCP).
			resp.Result = boundFollowupJSON(resp.Result)
		}
		if done, err := frame(resp); done || err != nil {
			return err
		}
	}
}
