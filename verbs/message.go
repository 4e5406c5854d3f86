package verbs

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/pi-actors/pi-actors/mailbox"
)

// Message sends one typed envelope to an actor.
type Message struct {
	To            string          `json:"to" jsonschema:"the recipient: run:<id>, branch:<run>/<branch>, room:<run>, tool:<name>, coordinator, session:<id>, knowledge"`
	Type          string          `json:"type" jsonschema:"the message type <channel.action>, e.g. task.assign or control.kill"`
	Body          json.RawMessage `json:"body,omitempty" jsonschema:"the payload: any JSON value"`
	CorrelationID Text            `json:"correlation_id,omitempty" jsonschema:"ties replies to a request"`
	From          string          `json:"from,omitempty" jsonschema:"the sender's address (a run reports as run:<id>; scripts get it as $PI_ACTORS_ADDRESS)"`
	Metadata      map[string]any  `json:"metadata,omitempty" jsonschema:"free-form metadata (metadata.recipients multicasts a room post; metadata.requires_response asks the coordinator for a follow-up)"`
	ReplyTo       Text            `json:"reply_to,omitempty" jsonschema:"where replies should go"`
	Summary       Text            `json:"summary,omitempty" jsonschema:"a one-line summary"`
	ID            string          `json:"id,omitempty" jsonschema:"a caller-chosen id: a retried send with the same id is not delivered twice"`
	TTLMs         *Int            `json:"ttl_ms,omitempty" jsonschema:"the message expires this many milliseconds after it is sent (then it goes to the dead-letter log)"`
	Deadline      string          `json:"deadline,omitempty" jsonschema:"the message expires at this RFC 3339 time"`
	Verbose       Bool            `json:"verbose,omitempty" jsonschema:"append the full envelope and result as JSON to the text"`
}

// Envelope returns the normalised envelope (mailbox.Normalize: addresses
// canonical, strings trimmed, the type checked).
func (m *Message) Envelope() (mailbox.Envelope, error) {
	raw := map[string]any{}
	put := func(k, v string) {
		if v != "" {
			raw[k] = v
		}
	}
	put("to", m.To)
	put("type", m.Type)
	put("from", m.From)
	put("id", m.ID)
	put("correlation_id", string(m.CorrelationID))
	put("reply_to", string(m.ReplyTo))
	put("summary", string(m.Summary))
	if m.Metadata != nil {
		raw["metadata"] = m.Metadata
	}
	if m.TTLMs != nil { // given, 0 too: the envelope's check refuses what is not positive
		raw["ttl_ms"] = json.Number(fmt.Sprint(int(*m.TTLMs)))
	}
	put("deadline", m.Deadline)
	if len(m.Body) > 0 {
		var body any
		if err := json.Unmarshal(m.Body, &body); err != nil {
			return mailbox.Envelope{}, Invalidf("message: body is not valid JSON: %v", err)
		}
		raw["body"] = body
	}
	return mailbox.Normalize(raw)
}

// Validate checks the envelope. A node-qualified to= (run:<id>@<node>)
// is checked without its node; the kernel routes it.
func (m *Message) Validate() error {
	addr, _, err := mailbox.SplitNode(m.To)
	if err != nil {
		return &Error{Exit: ExitDataErr, Code: "invalid_envelope", Message: err.Error()}
	}
	probe := *m
	probe.To = addr
	if _, err := probe.Envelope(); err != nil {
		return err
	}
	return nil
}

// Delivery is the outcome of a message: whether it was persisted, queued
// or delivered, by which consumer, and why.
type Delivery struct {
	Archived           bool        `json:"archived,omitempty"`
	ArchiveDir         string      `json:"archive_dir,omitempty"`
	Consumer           string      `json:"consumer,omitempty"`
	DeadLetter         string      `json:"dead_letter,omitempty"`
	Delivered          *bool       `json:"delivered,omitempty"`
	DeliveryError      string      `json:"delivery_error,omitempty"`
	Duplicate          bool        `json:"duplicate,omitempty"`
	Forwarded          bool        `json:"forwarded,omitempty"`
	ID                 string      `json:"id,omitempty"`
	InboxID            string      `json:"inbox_id,omitempty"`
	Invoked            bool        `json:"invoked,omitempty"`
	MessageCount       *int        `json:"message_count,omitempty"`
	Multicast          []string    `json:"multicast,omitempty"`
	MulticastCount     int         `json:"multicast_count,omitempty"`
	MulticastResults   []*Delivery `json:"multicast_results,omitempty"`
	Node               string      `json:"node,omitempty"`
	NextActions        []string    `json:"next_actions,omitempty"`
	Outbox             string      `json:"outbox,omitempty"`
	Persisted          *bool       `json:"persisted,omitempty"`
	PreservedArtifacts any         `json:"preserved_artifacts,omitempty"`
	Pruned             bool        `json:"pruned,omitempty"`
	Queued             *bool       `json:"queued,omitempty"`
	Reason             string      `json:"reason,omitempty"`
	Room               string      `json:"room,omitempty"`
	RosterCount        *int        `json:"roster_count,omitempty"`
	Run                string      `json:"run,omitempty"`
	Sent               bool        `json:"sent,omitempty"`
	StateDir           string      `json:"state_dir,omitempty"`
	Status             string      `json:"status,omitempty"`
	Stopped            bool        `json:"stopped,omitempty"`
	To                 string      `json:"to,omitempty"`
	Tool               string      `json:"tool,omitempty"`
	ToolResult         any         `json:"tool_result,omitempty"`
	Type               string      `json:"type,omitempty"`
	Warnings           []string    `json:"warnings,omitempty"`
}

// Ptr returns a pointer to v (for Delivery's optional facts).
func Ptr[T any](v T) *T { return &v }

// Text is the compact delivery outcome: the facts that are set, in a fixed
// order.
func (d *Delivery) Text() string {
	parts := []string{"to=" + d.To, "type=" + d.Type}
	if d.Node != "" {
		parts = append(parts, "node="+d.Node)
	}
	sent := d.Sent || d.Stopped || (d.Delivered != nil && *d.Delivered) || (d.Queued != nil && *d.Queued)
	parts = append(parts, "message="+map[bool]string{true: "sent", false: "not_sent"}[sent])
	add := func(k string, v any) { parts = append(parts, fmt.Sprintf("%s=%v", k, v)) }
	if d.InboxID != "" {
		add("inbox_id", d.InboxID)
	}
	for _, f := range []struct {
		k string
		v *bool
	}{{"delivered", d.Delivered}, {"queued", d.Queued}, {"persisted", d.Persisted}} {
		if f.v != nil {
			add(f.k, *f.v)
		}
	}
	if d.Forwarded {
		add("forwarded", true)
	}
	for _, f := range []struct{ k, v string }{{"consumer", d.Consumer}, {"reason", d.Reason}, {"dead_letter", d.DeadLetter}, {"status", d.Status}} {
		if f.v != "" {
			add(f.k, f.v)
		}
	}
	if d.MessageCount != nil {
		add("messages", *d.MessageCount)
	}
	if d.RosterCount != nil {
		add("roster", *d.RosterCount)
	}
	if d.Room != "" {
		add("room", d.Room)
	}
	if d.Tool != "" {
		add("tool", d.Tool)
	}
	if d.Stopped {
		add("stopped", true)
	}
	if d.Invoked {
		add("invoked", true)
	}
	if d.Duplicate {
		add("duplicate", true)
	}
	if d.ArchiveDir != "" {
		add("archive_dir", d.ArchiveDir)
	}
	if d.Pruned {
		add("pruned", true)
	}
	if d.DeliveryError != "" {
		add("delivery_error", preview(d.DeliveryError, 96))
	}
	s := strings.Join(parts, " ")
	if len(d.NextActions) > 0 {
		s += nextText(d.NextActions)
	} else if d.Run != "" && ((d.Queued != nil && *d.Queued) || (d.Delivered != nil && !*d.Delivered)) {
		run := d.Run
		if d.Node != "" { // another node's run (the answer came from there)
			run += "@" + d.Node
		}
		s += fmt.Sprintf(" next=inspect_target=run:%s_view=mailbox|inspect_target=run:%s_view=status", run, run)
	}
	for _, w := range d.Warnings {
		s += "\nwarning: " + w
	}
	return s
}

func init() {
	Register(&Spec{
		Name:    "message",
		Summary: "send a typed envelope to an actor",
		Batch:   true,
		Tool:    &Annotations{Destructive: true},
		Usage: `pi-actors message to=<address> type=<channel.action> [body=… | body:=JSON] [summary=…] [from=…] [id=…] [ttl_ms=…|deadline=…] [--json]
pi-actors message -      (a batch on stdin; one destination's messages stay in order)

Every message is appended (durable, with a unique id: a retried send with
the same id= answers duplicate=true and writes nothing) before anything
else. Addresses:
  run:<id>           the run's inbox. control.kill (SIGKILL the run's tree),
                     control.cancel (SIGTERM, grace, SIGKILL), control.restart;
                     control.archive and control.prune act on terminal runs;
                     every other type waits for the run's consumer (mailbox claim)
  branch:<run>/<b>   a member's inbox in run <run> (from=, when given, of that
                     run); a copy goes to the run's own inbox
  room:<run>         the run's room timeline (from=run:<run> or
                     branch:<run>/<b> required; metadata.recipients multicasts)
  tool:<name>        a recipe tool runs with the body as its arguments
  coordinator, session:<id>   upward: from=$PI_ACTORS_ADDRESS required
  knowledge          type=knowledge.<operation> body:=<parameters>: a knowledge
                     operation in the kernel's knowledge actor
A message that expires (ttl_ms, deadline) goes to a dead-letter log
(inspect target=run:<id> view=dead_letters). See docs/messages.md.`,
		New: func() Request { return new(Message) },
		Run: func(ctx context.Context, env *Env, req Request) (*Outcome, error) {
			m := req.(*Message)
			var res Delivery
			if knowledgeAddress(m.To) {
				var raw json.RawMessage
				if err := env.Call("message", m, &raw); err != nil {
					return nil, err
				}
				return knowledgeMessageOutcome(m, raw)
			}
			if err := env.Call("message", m, &res); err != nil {
				return nil, err
			}
			text := res.Text()
			if m.Verbose {
				text += "\n" + prettyJSON(map[string]any{"message": m, "result": &res})
			}
			return &Outcome{Result: &res, Text: text}, nil
		},
	})
}
