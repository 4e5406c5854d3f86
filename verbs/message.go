package verbs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/pi-actors/pi-actors/internal/fsutil"
	"github.com/pi-actors/pi-actors/mailbox"
	"github.com/pi-actors/pi-actors/runs"
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
// canonical, strings trimmed, the type checked), refusing one that carries
// more than a message may (mailbox.Envelope.CheckSize: body over 1 MiB,
// summary over 4 KiB, …).
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
	env, err := mailbox.Normalize(raw)
	if err != nil {
		return mailbox.Envelope{}, err
	}
	// A caller's id is a token: copy ids (<id>@<branch>) are the routes'.
	if err := mailbox.CheckCallerID(env.ID); err != nil {
		return mailbox.Envelope{}, err
	}
	// What one message carries is bounded where it is sent: the CLI and
	// MCP (Validate) and the kernel (actors.message) all come here. A
	// knowledge operation is not a stored message: its own limits apply
	// (task_context text up to 1 MiB, which JSON escapes make larger).
	if !knowledgeAddress(env.To) {
		if err := env.CheckSize(); err != nil {
			return mailbox.Envelope{}, sizeError(err)
		}
	}
	return env, nil
}

// sizeError is a message that carries too much, with the field, its size
// and the limit in details.
func sizeError(err error) error {
	var ee *mailbox.EnvelopeError
	if !errors.As(err, &ee) || ee.Limit == 0 {
		return err
	}
	return &Error{Exit: ExitDataErr, Code: "invalid_envelope", Message: ee.Msg,
		Hint:    "send large content as a file: write it (a run's artifact, or any file the recipient can read) and put its path in the body; a message carries a body up to 1 MiB, metadata up to 64 KiB, a summary up to 4 KiB (docs/messages.md, Size limits)",
		Details: map[string]any{"field": ee.Field, "bytes": ee.Bytes, "limit": ee.Limit}}
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
			// A node-qualified address with no cluster starts no kernel
			// to be refused by it (the kernel refuses it too).
			check := func() error {
				if _, node, err := SplitAddress(m.To); err == nil && node != "" && !env.Config.Cluster.Enabled() {
					return env.notClustered(fmt.Sprintf("%s names a node, but this kernel is not in a cluster (no [cluster] in pi-actors.toml)", m.To), "drop the @<node>, or set up a cluster: docs/cluster.md")
				}
				return nil
			}
			if err := env.callChecked("message", m, &res, check); err != nil {
				return nil, err
			}
			text := res.Text()
			if m.Verbose {
				text += "\n" + prettyJSON(map[string]any{"message": verboseMessage(m, &res), "result": &res})
			}
			return &Outcome{Result: &res, Text: text}, nil
		},
	})
}

// verboseMessage is the message as verbose=true shows it: its values
// bounded as the views bound them (a 1 MiB body was printed whole),
// naming where the whole is.
func verboseMessage(m *Message, res *Delivery) any {
	where := cutWhere{ID: res.InboxID}
	if where.ID == "" {
		where.ID = res.ID
	}
	if res.StateDir != "" {
		where.File = filepath.Join(res.StateDir, runs.InboxFile)
	}
	return boundRecord(m, where)
}

// Bounds of what the JSON views and watch lines carry of one message
// (docs/messages.md, "Size limits"). A value of a record larger than
// viewValueBytes (a string's bytes, anything else's compact JSON) is
// replaced by a preview string — its first viewPreviewBytes, then
// "…[cut: <bytes> bytes; whole in <file> id=<id>]" — and the record gets "<key>_cut": {bytes, type, file, id|line} right after
// it, saying how big the whole is and where it is. A record still larger
// than viewRecordBytes has its largest values cut the same way, until it
// fits or nothing is left to cut. A record that needs no cut is shown
// exactly as it is stored.
const (
	viewValueBytes   = mailbox.MaxSummaryBytes // 4 KiB: every summary a message may carry is shown whole
	viewPreviewBytes = 1 << 10
	viewRecordBytes  = 16 << 10
)

// cutWhere is where the whole of a record is: its file, and its id there
// (else its 1-based line).
type cutWhere struct {
	File string
	ID   string
	Line int
}

// cutNote is the "<key>_cut" object beside a cut value.
type cutNote struct {
	Bytes int    `json:"bytes"`
	Type  string `json:"type"`
	File  string `json:"file,omitempty"`
	ID    string `json:"id,omitempty"`
	Line  int    `json:"line,omitempty"`
}

// boundRecord returns v (a record of a view: an envelope, an inbox or
// outbox record, a follow-up, …) as it is when it is small, else as an
// ordered JSON object with its large values cut (see viewValueBytes).
// The objects under the keys in nested (a dead letter's message) are
// bounded the same way first.
func boundRecord(v any, where cutWhere, nested ...string) any {
	b, err := fsutil.MarshalCompact(v)
	if err != nil || len(b) <= viewValueBytes {
		return v
	}
	if out, cut := boundObject(b, where, nested); cut {
		return out
	}
	return v
}

// boundRecords bounds each record of a list (see boundRecord); where
// gives each record's place.
func boundRecords[T any](list []T, where func(T) cutWhere, nested ...string) []any {
	out := make([]any, len(list))
	for i, r := range list {
		out[i] = boundRecord(r, where(r), nested...)
	}
	return out
}

// boundObject cuts the large values of the JSON object b; cut reports
// whether anything was cut.
func boundObject(b []byte, where cutWhere, nested []string) (json.RawMessage, bool) {
	ms, ok := decodeObject(b)
	if !ok {
		return nil, false
	}
	cut := false
	for i := range ms {
		if slices.Contains(nested, ms[i].key) && len(ms[i].val) > viewValueBytes {
			if inner, c := boundObject(ms[i].val, where, nil); c {
				ms[i].val, cut = inner, true
			}
		}
	}
	done := map[string]bool{}
	cutAt := func(i int) {
		m := ms[i]
		preview, note := cutValue(m.val, where)
		nb, _ := fsutil.MarshalCompact(note)
		ms[i].val = preview
		done[m.key] = true
		ms = slices.Insert(ms, i+1, jsonField{m.key + "_cut", nb})
		cut = true
	}
	for i := 0; i < len(ms); i++ {
		if valueBytes(ms[i].val) > viewValueBytes {
			cutAt(i)
			i++
		}
	}
	for encodedSize(ms) > viewRecordBytes {
		big := -1
		for i, m := range ms {
			if !done[m.key] && !strings.HasSuffix(m.key, "_cut") && len(m.val) > viewPreviewBytes+64 && (big < 0 || len(m.val) > len(ms[big].val)) {
				big = i
			}
		}
		if big < 0 {
			break
		}
		cutAt(big)
	}
	if !cut {
		return nil, false
	}
	return encodeObject(ms), true
}

// cutValue is a value's preview (a JSON string) and its note.
func cutValue(raw json.RawMessage, where cutWhere) (json.RawMessage, cutNote) {
	note := cutNote{Bytes: len(raw), Type: jsonType(raw), File: where.File, ID: where.ID}
	if note.ID == "" {
		note.Line = where.Line
	}
	text := string(raw)
	var s string
	if note.Type == "string" && json.Unmarshal(raw, &s) == nil {
		note.Bytes, text = len(s), s
	}
	if len(text) > viewPreviewBytes {
		n := viewPreviewBytes
		for n > 0 && !utf8.RuneStart(text[n]) {
			n--
		}
		text = text[:n]
	}
	p, _ := fsutil.MarshalCompact(text + "…" + where.note(note.Bytes))
	return p, note
}

// note ends a preview: how big the whole is and where it is, so a reader
// of the preview alone (a follow-up decoded into its struct) knows too.
func (w cutWhere) note(bytes int) string {
	s := fmt.Sprintf("[cut: %d bytes", bytes)
	if w.File != "" {
		s += "; whole in " + w.File
		if w.ID != "" {
			s += " id=" + w.ID
		} else if w.Line > 0 {
			s += fmt.Sprintf(" line %d", w.Line)
		}
	}
	return s + "]"
}

// valueBytes is a value's size: a string's bytes, anything else's JSON.
func valueBytes(raw json.RawMessage) int {
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return len(s)
		}
	}
	return len(raw)
}

// jsonType names the JSON type of a raw value.
func jsonType(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "null"
	}
	switch raw[0] {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

// encodedSize is about the size of encodeObject(ms).
func encodedSize(ms []jsonField) int {
	n := 2
	for _, m := range ms {
		n += len(m.key) + 4 + len(m.val)
	}
	return n
}
