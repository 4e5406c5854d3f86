package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/pi-actors/pi-actors/actors/wire"
)

func init() {
	verbs = append(verbs,
		&verb{
			name:    "spawn",
			summary: "start a detached, supervised run actor",
			batch:   true,
			usage: `pi-actors spawn as=run:<id> (recipe=<name> | file=<path> | template=… ) [values:='{…}'] [artifacts:='{…}'] [state_dir=…] [restart:='{…}'] [--json]
pi-actors spawn -        (a JSON array or JSON lines on stdin: a batch, one run per object)

Starts a run under its own supervisor process (it survives the kernel) and
returns its address, pid and state dir once the supervisor is up. The run
belongs to your session ($PI_ACTORS_SESSION or session=). restart is
{policy: never|on-failure|always, backoff_ms, max_backoff_ms, jitter,
reset_after_ms, burst, window_ms}.

Examples:
  pi-actors spawn as=run:web template='python3 -m http.server 8000' restart=on-failure
  pi-actors spawn recipe=utility-git-log values:='{"count":3}'`,
			run: runSpawn,
		},
		&verb{
			name:    "message",
			summary: "send a typed envelope to an actor",
			batch:   true,
			usage: `pi-actors message to=run:<id> type=<channel.action> [body=… | body:=JSON] [summary=…] [from=…] [id=…] [--json]
pi-actors message -      (a batch on stdin)

The envelope is appended to the run's inbox.jsonl (durable, with a unique
id: a retried send with the same id= is not duplicated) before anything
else. The supervisor applies control.kill (SIGKILL the run's process
groups), control.cancel (SIGTERM, grace, SIGKILL) and control.restart;
control.archive and control.prune act on terminal runs. Every other type
stays queued for the run's own consumer (pi-actors mailbox claim).
A run reports upward with to=coordinator from=$PI_ACTORS_ADDRESS.`,
			run: runMessage,
		},
		&verb{
			name:    "watch",
			summary: "stream your session's follow-ups as JSON lines",
			usage: `pi-actors watch [session=<id>]

Streams the follow-ups queued for your session (terminal transitions of
the runs it owns, and their notify/followup messages) as JSON lines, each
delivered once. Ctrl-C stops.`,
			run: runWatch,
		},
	)
}

func runSpawn(ctx context.Context, a *app, r *request) int {
	return a.kernelOp(r, "spawn", spawnText)
}

func runMessage(ctx context.Context, a *app, r *request) int {
	return a.kernelOp(r, "message", messageText)
}

// kernelOp sends a request (a batch when stdin held several objects) and
// prints each result.
func (a *app) kernelOp(r *request, op string, text func(map[string]any) string) int {
	var items []map[string]any
	if len(r.batch) > 0 {
		// Each item's parameters over the command line's (session travels
		// on the request).
		for _, one := range r.single() {
			item := map[string]any{}
			for k, v := range one.params {
				if k != "session" {
					item[k] = v
				}
			}
			items = append(items, item)
		}
	}
	resp, err := a.call(r, op, items)
	if err != nil {
		return a.fail(r, err)
	}
	if len(items) == 0 {
		return a.reply(r, *resp, text)
	}
	code := exitOK
	for _, one := range resp.Results {
		if c := a.reply(r, one, text); c != exitOK && code == exitOK {
			code = c
		}
	}
	return code
}

func (a *app) reply(r *request, resp wire.Response, text func(map[string]any) string) int {
	if resp.Error != nil {
		return a.fail(r, resp.Error)
	}
	m, _ := resp.Result.(map[string]any)
	return a.ok(r, text(m), resp.Result)
}

func spawnText(m map[string]any) string {
	addr := fmt.Sprint(m["address"])
	s := fmt.Sprintf("address=%s status=%v pid=%v state_dir=%v", addr, m["status"], m["pid"], m["state_dir"])
	if d, ok := m["draft_recipe"]; ok {
		s += fmt.Sprintf(" draft_recipe=%v", d)
	}
	s += fmt.Sprintf(" next=inspect_target=%s_view=status|inspect_target=%s_view=tail|message_to=%s_type=control.kill", addr, addr, addr)
	if w, ok := m["warnings"].([]any); ok {
		for _, x := range w {
			s += fmt.Sprintf("\nwarning: %v", x)
		}
	}
	return s
}

// messageText is the compact delivery outcome: the facts that are set, in
// a fixed order.
func messageText(m map[string]any) string {
	var parts []string
	for _, k := range []string{"to", "type", "inbox_id", "delivered", "queued", "persisted", "consumer", "reason", "status", "stopped", "duplicate", "archive_dir", "pruned"} {
		if v, ok := m[k]; ok && v != nil && v != "" {
			parts = append(parts, fmt.Sprintf("%s=%v", k, v))
		}
	}
	sent := m["delivered"] == true || m["queued"] == true || m["sent"] == true
	parts = append(parts[:2:2], append([]string{"message=" + map[bool]string{true: "sent", false: "not_sent"}[sent]}, parts[2:]...)...)
	s := strings.Join(parts, " ")
	if run, ok := m["run"].(string); ok {
		if m["queued"] == true || m["delivered"] == false {
			s += fmt.Sprintf(" next=inspect_target=run:%s_view=mailbox|inspect_target=run:%s_view=status", run, run)
		}
	}
	if w, ok := m["warnings"].([]any); ok {
		for _, x := range w {
			s += fmt.Sprintf("\nwarning: %v", x)
		}
	}
	return s
}

func runWatch(ctx context.Context, a *app, r *request) int {
	c, err := a.dialKernel(true)
	if err != nil {
		return a.fail(r, err)
	}
	defer c.Close()
	cwd, _ := os.Getwd()
	if err := c.Send(wire.Request{Op: "watch", Session: r.session(), Cwd: cwd}); err != nil {
		return a.fail(r, err)
	}
	go func() {
		<-ctx.Done()
		c.Close()
	}()
	first := true
	for {
		resp, err := c.Read()
		if err != nil {
			if ctx.Err() != nil {
				return exitOK
			}
			return a.fail(r, err)
		}
		if resp.Error != nil {
			return a.fail(r, resp.Error)
		}
		if m, ok := resp.Result.(map[string]any); ok && (m["keepalive"] == true || (first && m["watching"] != nil)) {
			first = false
			continue
		}
		a.writeJSON(resp.Result)
	}
}
