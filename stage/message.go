package stage

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/pi-actors/pi-actors/mailbox"
	"github.com/pi-actors/pi-actors/runs"
	"github.com/pi-actors/pi-actors/verbs"
)

// maxInput bounds what a stage reads from stdin.
const maxInput = 32 << 20

// readInput reads all of stdin, refusing more than maxInput.
func readInput(stageName string, in io.Reader) ([]byte, error) {
	if in == nil {
		return nil, nil
	}
	b, err := io.ReadAll(io.LimitReader(in, maxInput+1))
	if err != nil {
		return nil, fmt.Errorf("stage %s: read stdin: %w", stageName, err)
	}
	if len(b) > maxInput {
		return nil, verbs.Invalidf("stage %s: stdin is larger than %d MiB; write it to a file (artifact-write) and send its path", stageName, maxInput>>20)
	}
	return b, nil
}

// inputOr is parameter key as given (a caller with no stdin to give — an
// agent's tool call — passes the text so), else stdin; bounded alike.
func inputOr(stageName string, a *Args, key string, in io.Reader) ([]byte, error) {
	if v := a.Raw(key); v != "" {
		if len(v) > maxInput {
			return nil, verbs.Invalidf("stage %s: %s= is larger than %d MiB; write it to a file (artifact-write) and send its path", stageName, key, maxInput>>20)
		}
		return []byte(v), nil
	}
	return readInput(stageName, in)
}

// actorMessage sends body= (else stdin) as the body of a typed envelope.
func actorMessage(_ context.Context, env *verbs.Env, a *Args, io IO) error {
	const name = "actor-message"
	m := &verbs.Message{Type: a.Get("type", ""), To: a.Get("to", "coordinator"), From: a.Get("from", envValue(env, "PI_ACTORS_ADDRESS")),
		CorrelationID: verbs.Text(a.Get("correlation_id", "")), ReplyTo: verbs.Text(a.Get("reply_to", ""))}
	m.Summary = verbs.Text(a.Get("summary", m.Type))
	if m.Type == "" {
		return verbs.Usagef("stage actor-message needs type=<channel.action>, e.g. type=review.completed")
	}
	if md := a.Get("metadata", ""); md != "" {
		if err := json.Unmarshal([]byte(md), &m.Metadata); err != nil || m.Metadata == nil {
			return verbs.Invalidf("stage actor-message: metadata must be a JSON object, e.g. metadata={\"stage\":\"review\"} (got %q)", md)
		}
	}
	send, err := a.Bool(name, "send", true)
	if err != nil {
		return err
	}
	echo, err := a.Enum(name, "echo", "envelope", "body")
	if err != nil {
		return err
	}
	if send && m.From == "" {
		return verbs.Usagef("stage actor-message: no sender: inside a run from= is $PI_ACTORS_ADDRESS; elsewhere pass from=run:<id>, or send=false to print the envelope only")
	}
	in, err := inputOr(name, a, "body", io.In)
	if err != nil {
		return err
	}
	m.Body = body(in)
	e, err := m.Envelope()
	if err != nil {
		return fmt.Errorf("stage actor-message: %w", err)
	}
	var d verbs.Delivery
	if send {
		if err := env.Call("message", m, &d); err != nil {
			return fmt.Errorf("stage actor-message: send %s to %s: %w", m.Type, m.To, err)
		}
		fmt.Fprintf(io.Err, "stage actor-message: type=%s to=%s %s\n", e.Type, e.To, deliveryNote(&d))
	}
	if echo == "body" {
		_, err := io.Out.Write(in)
		return err
	}
	return printJSON(io.Out, envelopeJSON(e, d.ID, send))
}

// envelopeJSON is the envelope as actor-message prints it: the fields
// that are set, the id the kernel gave it, and whether it was sent.
func envelopeJSON(e mailbox.Envelope, id string, sent bool) map[string]any {
	out := map[string]any{"to": e.To, "type": e.Type, "summary": e.Summary, "sent": sent}
	if e.Body != nil {
		out["body"] = e.Body
	}
	for k, v := range map[string]string{"from": e.From, "correlation_id": e.CorrelationID, "reply_to": e.ReplyTo, "id": id} {
		if v != "" {
			out[k] = v
		}
	}
	if e.Metadata != nil {
		out["metadata"] = e.Metadata
	}
	return out
}

// body is stdin as a message body: the JSON value when it parses, else
// the text (a final newline dropped); nothing is no body.
func body(in []byte) json.RawMessage {
	t := bytes.TrimSpace(in)
	if len(t) == 0 {
		return nil
	}
	if json.Valid(t) {
		return json.RawMessage(t)
	}
	b, _ := json.Marshal(strings.TrimSuffix(string(in), "\n"))
	return b
}

func deliveryNote(d *verbs.Delivery) string {
	parts := []string{}
	if d.Reason != "" {
		parts = append(parts, "reason="+d.Reason)
	}
	if d.ID != "" {
		parts = append(parts, "id="+d.ID)
	}
	if d.Duplicate {
		parts = append(parts, "duplicate=true")
	}
	return strings.Join(parts, " ")
}

// await passes stdin through, then appends the first accepted message of
// the run's inbox (or given=).
func await(ctx context.Context, env *verbs.Env, a *Args, io IO) error {
	const name = "await"
	types := strings.Split(a.Get("types", "control.reply,control.revise"), ",")
	for i, t := range types {
		types[i] = strings.TrimSpace(t)
		if _, err := mailbox.Normalize(map[string]any{"to": "coordinator", "type": types[i]}); err != nil || types[i] == "" {
			return verbs.Invalidf("stage await: types must be message types separated by commas (got %q)", a.Get("types", ""))
		}
	}
	wait, err := a.Duration(name, "wait", 10*time.Minute)
	if err != nil {
		return err
	}
	given := strings.TrimSpace(a.Raw("given"))
	dir := envValue(env, "PI_ACTORS_STATE_DIR")
	if given == "" && dir == "" {
		return verbs.Usagef("stage await waits on its run's inbox: run it inside a run ($PI_ACTORS_STATE_DIR), or pass given=<reply>")
	}
	in, err := readInput(name, io.In)
	if err != nil {
		return err
	}
	if given != "" {
		return writeReply(io.Out, in, "reply", given)
	}
	rec, err := awaitMessage(ctx, env, runs.Dir(dir), types, wait)
	if err != nil {
		return err
	}
	if err := writeReply(io.Out, in, replyKind(rec.Type()), bodyText(rec["body"])); err != nil {
		return err
	}
	return mailbox.NewInbox(runs.Dir(dir).Path(runs.InboxFile)).Done(rec.ID(), mailbox.StatusHandled, nil)
}

// awaitMessage claims messages of the run's inbox until one of types
// arrives; any other is marked failed (never dropped) with the reason.
// The wait does not count the time the run spent suspended with its
// session (progress.json paused_ms, written before the run continues).
func awaitMessage(ctx context.Context, env *verbs.Env, d runs.Dir, types []string, wait time.Duration) (mailbox.Record, error) {
	deadline := time.Now().Add(wait)
	paused := d.PausedMS()
	inbox := mailbox.NewInbox(d.Path(runs.InboxFile))
	claim := verbs.Find("mailbox")
	for {
		left := time.Until(deadline)
		if left <= 0 {
			if now := d.PausedMS(); now > paused {
				deadline = deadline.Add(time.Duration(now-paused) * time.Millisecond)
				paused = now
				continue
			}
			return nil, &verbs.Error{Exit: verbs.ExitTempFail, Code: "no_reply",
				Message: fmt.Sprintf("stage await: no %s arrived within %s", strings.Join(types, " or "), wait),
				Hint:    "send one: pi-actors message to=run:<id> type=" + types[0] + " body=…"}
		}
		out, err := claim.Run(ctx, env, &verbs.Mailbox{Action: "claim", Wait: left.Round(time.Millisecond).String(), StateDir: string(d)})
		if err != nil {
			if ve := (*verbs.Error)(nil); errors.As(err, &ve) && ve.Code == "empty" {
				continue
			}
			return nil, fmt.Errorf("stage await: %w", err)
		}
		if ctx.Err() != nil {
			// Stopped (control.cancel) while waiting: the shell's status of
			// a SIGTERM, as validate reports it.
			return nil, &verbs.Error{Exit: 143, Code: "stopped", Message: "stage await: stopped while waiting"}
		}
		rec, _ := out.Result.(mailbox.Record)
		if rec == nil {
			continue
		}
		for _, t := range types {
			if rec.Type() == t {
				return rec, nil
			}
		}
		why := fmt.Sprintf("not accepted while this run awaits %s", strings.Join(types, " or "))
		if err := inbox.Done(rec.ID(), mailbox.StatusFailed, map[string]any{"error": why}); err != nil {
			return nil, fmt.Errorf("stage await: %w", err)
		}
	}
}

// replyKind names a message in the heading writeReply writes.
func replyKind(typ string) string {
	switch typ {
	case "control.reply":
		return "reply"
	case "control.revise":
		return "revision"
	}
	return typ
}

// writeReply writes the input, then the reply under a heading naming its
// type.
func writeReply(w io.Writer, in []byte, kind, text string) error {
	var b bytes.Buffer
	b.Write(in)
	if len(in) > 0 && !bytes.HasSuffix(in, []byte("\n")) {
		b.WriteByte('\n')
	}
	if len(in) > 0 {
		b.WriteByte('\n')
	}
	fmt.Fprintf(&b, "## Coordinator %s\n%s\n", kind, strings.TrimRight(text, "\n"))
	_, err := w.Write(b.Bytes())
	return err
}

// bodyText is a message body as text: a string as is, anything else as
// JSON.
func bodyText(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case string:
		return x
	}
	b, _ := json.Marshal(v)
	return string(b)
}
