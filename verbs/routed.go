package verbs

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/pi-actors/pi-actors/internal/fsutil"
)

// RoutedOutcome is a verb's outcome carried between kernels: the verb ran
// on Node for a caller on another node, and this is what that caller's
// front door renders (the same text, --json result and exit code as a
// local run of the verb).
type RoutedOutcome struct {
	Node   string          `json:"node"`
	Result json.RawMessage `json:"result,omitempty"`
	Text   string          `json:"text,omitempty"`
	Exit   int             `json:"exit,omitempty"`
	Fail   *Error          `json:"fail,omitempty"`
}

// Routed packs an outcome that ran on node.
func Routed(out *Outcome, node string) *RoutedOutcome {
	r := &RoutedOutcome{Node: node, Text: out.Text, Exit: out.Exit, Fail: out.Fail}
	if out.Result != nil {
		r.Result, _ = json.Marshal(out.Result)
	}
	return r
}

// Outcome unpacks a routed outcome.
func (r *RoutedOutcome) Outcome() *Outcome {
	out := &Outcome{Text: r.Text, Exit: r.Exit, Fail: r.Fail}
	if len(r.Result) > 0 {
		out.Result = r.Result
	}
	return out
}

// Qualified is the outcome as the caller on another node sees it: the
// addresses of run in the result's address fields name the node
// (QualifyResult), the text names it where it shows those addresses and
// nowhere inside what it quotes of the result's content (log lines,
// message bodies, commands), a failure's message and hint name it, and an
// object result carries "node".
func (r *RoutedOutcome) Qualified(run string) *Outcome {
	out := r.Outcome()
	var content []string
	if len(r.Result) > 0 {
		var res json.RawMessage
		res, content = qualifyResult(r.Result, run, r.Node)
		out.Result = res
	}
	out.Text = qualifyText(out.Text, run, r.Node, content)
	out.Fail = QualifyError(out.Fail, run, r.Node)
	return out
}

// The rule for a routed answer (docs/cluster.md): it is the answering
// node's own answer, byte for byte, except that its addresses of the
// routed run name that node. An address is a string in an address field
// (addressFields) of the result object, or of an object in one of its
// address-bearing lists (addressLists, nested as the views nest them:
// communication.rooms[].members[]). Nothing else is read for addresses:
// any other field — a message's body, summary or preview, a log line, a
// command, a template's values, an event or trace record, whatever an
// unknown field holds — is content and comes back as it was.

// addressFields are the fields whose string (or list of strings) is an
// address or a next action naming one.
var addressFields = map[string]bool{
	"address": true, "target": true, "to": true, "from": true, "reply_to": true,
	"parent": true, "self": true, "root": true, "room": true, "claimed_by": true,
	"last_message_from": true, "multicast": true, "candidates": true,
	"next_actions": true, "hint": true,
}

// addressLists are the fields holding objects (or lists of them) that
// carry address fields of their own: message envelopes (mailbox views,
// room timelines, dead letters), rosters, contacts, a run's rooms and
// their members, a multicast's deliveries, a trace's entries.
var addressLists = map[string]bool{
	"messages": true, "previews": true, "dead_letters": true, "roster": true,
	"contacts": true, "communication": true, "rooms": true, "members": true,
	"multicast_results": true, "entries": true,
}

// QualifyResult is a JSON answer about run from node as a caller on
// another node reads it: run's addresses in its address fields name the
// node, and an object gets "node" when it has none. Content is never
// rewritten. Anything it cannot read comes back as it was.
func QualifyResult(raw json.RawMessage, run, node string) json.RawMessage {
	out, _ := qualifyResult(raw, run, node)
	return out
}

// qualifyResult is QualifyResult, and the content strings of the result
// that hold an address of run (what the text must not rewrite).
func qualifyResult(raw json.RawMessage, run, node string) (json.RawMessage, []string) {
	q := qualifier{run: run, node: node}
	fields, ok := decodeObject(raw)
	if !ok || run == "" || node == "" {
		q.collect(raw)
		return raw, q.textContent()
	}
	out, _ := q.object(fields)
	for _, f := range fields {
		if f.key == "node" {
			return out, q.textContent()
		}
	}
	return encodeObject(append(fields, jsonField{"node", marshalString(node)})), q.textContent()
}

// textContent is what the text must not rewrite: the content strings,
// each once, but those that say exactly what one of the answer's own
// address values says (a log line that reads like a next action: the
// text's next action is qualified, as the JSON's is).
func (q *qualifier) textContent() []string {
	seen := map[string]bool{}
	var out []string
	for _, c := range q.content {
		if !seen[c] && !q.own[c] {
			seen[c] = true
			out = append(out, c)
		}
	}
	return out
}

// qualifier walks a result: it qualifies run's addresses in address
// fields and keeps the content strings that mention run.
type qualifier struct {
	run, node string
	content   []string
	own       map[string]bool // the answer's own address values that mention run (next actions, hints, …)
}

// object qualifies an object's fields; changed reports a rewrite.
func (q *qualifier) object(fields []jsonField) (json.RawMessage, bool) {
	changed := false
	for i, f := range fields {
		v, c := q.value(f.key, f.val)
		if c {
			fields[i].val, changed = v, true
		}
	}
	return encodeObject(fields), changed
}

// value qualifies the value of field key.
func (q *qualifier) value(key string, raw json.RawMessage) (json.RawMessage, bool) {
	switch {
	case addressFields[key]:
		q.ownValues(raw)
		var s string
		if json.Unmarshal(raw, &s) == nil {
			if t := QualifyRun(s, q.run, q.node); t != s {
				return marshalString(t), true
			}
			return raw, false
		}
		var list []string
		if json.Unmarshal(raw, &list) == nil {
			changed := false
			for i, s := range list {
				if t := QualifyRun(s, q.run, q.node); t != s {
					list[i], changed = t, true
				}
			}
			if changed {
				return encodeStrings(list), true
			}
			return raw, false
		}
	case addressLists[key]:
		if fields, ok := decodeObject(raw); ok {
			return q.object(fields)
		}
		if items, ok := decodeArray(raw); ok {
			changed := false
			for i, it := range items {
				if fields, ok := decodeObject(it); ok {
					if v, c := q.object(fields); c {
						items[i], changed = v, true
					}
				} else {
					q.collect(it)
				}
			}
			if changed {
				return encodeArray(items), true
			}
			return raw, false
		}
	}
	q.collect(raw)
	return raw, false
}

// ownValues notes the strings of an address field that mention run: the
// answer's own words, which the text shows qualified even where a content
// string says the same.
func (q *qualifier) ownValues(raw json.RawMessage) {
	if !mentions(string(raw), q.run) {
		return
	}
	var list []string
	var one string
	if json.Unmarshal(raw, &one) == nil {
		list = []string{one}
	} else if json.Unmarshal(raw, &list) != nil {
		return
	}
	if q.own == nil {
		q.own = map[string]bool{}
	}
	for _, s := range list {
		for _, r := range renderings(s) {
			q.own[r] = true
		}
	}
}

// collect keeps the content strings in raw that mention run: each string
// in it, and a whole object or list as its compact JSON (text shows
// bodies that way).
func (q *qualifier) collect(raw json.RawMessage) {
	if !mentions(string(raw), q.run) {
		return
	}
	var v any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if d.Decode(&v) != nil {
		q.content = append(q.content, string(raw))
		return
	}
	var walk func(v any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			if mentions(x, q.run) {
				q.content = append(q.content, x)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	if _, isString := v.(string); !isString {
		q.content = append(q.content, compactJSON(v), string(raw))
	}
}

// mentions reports whether s may hold an address of run.
func mentions(s, run string) bool {
	return run != "" && (strings.Contains(s, "run:"+run) || strings.Contains(s, "room:"+run) || strings.Contains(s, "branch:"+run+"/"))
}

// QualifyError is a failure about run that node answered, as a caller on
// another node reads it: its message and hint name run's addresses with
// the node (details, which may quote content, are left as they are).
func QualifyError(e *Error, run, node string) *Error {
	if e == nil || run == "" || node == "" {
		return e
	}
	c := *e
	c.Message, c.Hint = QualifyErrorText(c.Message, run, node), QualifyErrorText(c.Hint, run, node)
	return &c
}

// QualifyErrorText is an error's message or hint about run from node as
// the caller reads it: run's addresses name the node, except the from=
// values it asks for (fromValues).
func QualifyErrorText(text, run, node string) string {
	if run == "" || node == "" {
		return text
	}
	return qualifyOutside(text, run, node, fromValues(text))
}

// fromValues are the spans of an error's from=<address> values: what it
// asks the caller to give as from=, which names no node (a sender is
// given bare: from=run:<id>@<node> is refused).
func fromValues(text string) [][2]int {
	var out [][2]int
	for from := 0; ; {
		i := strings.Index(text[from:], "from=")
		if i < 0 {
			return out
		}
		start := from + i + len("from=")
		end := start
		for end < len(text) && text[end] != ' ' && text[end] != ';' && text[end] != ',' && text[end] != '\n' {
			end++
		}
		out = append(out, [2]int{start, end})
		from = end
	}
}

// qualifyText is the text of an answer about run from node: run's
// addresses name the node, except inside the renderings of content (the
// result's content strings as the text shows them: verbatim, as a
// preview with whitespace written _ and maybe cut with …, or JSON-quoted).
func qualifyText(text, run, node string, content []string) string {
	if run == "" || node == "" || !mentions(text, run) {
		return text
	}
	var spans [][2]int
	for _, s := range content {
		for _, r := range renderings(s) {
			spans = append(spans, contentSpans(text, r, run)...)
		}
	}
	return qualifyOutside(text, run, node, spans)
}

// renderings are the forms in which a text may quote content s.
func renderings(s string) []string {
	out := []string{s}
	add := func(r string) {
		for _, o := range out {
			if o == r {
				return
			}
		}
		out = append(out, r)
	}
	add(spaces.ReplaceAllString(s, "_"))
	if b, err := json.Marshal(s); err == nil {
		add(string(b[1 : len(b)-1]))
	}
	q := compactJSON(s)
	add(q[1 : len(q)-1])
	return out
}

// contentSpans are the places where text quotes rendering r: whole, or
// cut short by … (a preview). A rendering that is nothing but one of
// run's addresses is content only where text quotes a value: at the start
// of a line, after a quote, or after key= of a field that is not an
// address field (to=run:x and "trace run:x" are the answer's own).
func contentSpans(text, r, run string) [][2]int {
	if r == "" {
		return nil
	}
	bare := isAddressOf(r, run)
	var spans [][2]int
	for i := 0; i < len(text); {
		j := strings.Index(text[i:], r)
		if j < 0 {
			break
		}
		start := i + j
		if !bare || quotesValue(text[:start]) {
			spans = append(spans, [2]int{start, start + len(r)})
		}
		i = start + 1
	}
	// A preview cut short: a prefix of r right before "…". Found from r's
	// first bytes (one search of the text), not by trying every length.
	head := r[:min(len(r), previewHead)]
	for i := 0; i < len(text); {
		j := strings.Index(text[i:], head)
		if j < 0 {
			break
		}
		start := i + j
		k := commonPrefix(text[start:], r)
		if k < len(r) && strings.HasPrefix(text[start+k:], "…") && mentions(r[:k], run) {
			spans = append(spans, [2]int{start, start + k})
		}
		i = start + 1
	}
	return spans
}

// previewHead is how many leading bytes of a content string find where a
// text quotes it cut short.
const previewHead = 16

// commonPrefix is the length of the longest common prefix of a and b.
func commonPrefix(a, b string) int {
	n := min(len(a), len(b))
	i := 0
	for i < n && a[i] == b[i] {
		i++
	}
	return i
}

// isAddressOf reports whether s is one of run's addresses and nothing
// else.
func isAddressOf(s, run string) bool {
	for _, a := range []string{"run:" + run, "room:" + run} {
		if s == a || strings.HasPrefix(s, a+"@") {
			return true
		}
	}
	b, ok := strings.CutPrefix(s, "branch:"+run+"/")
	return ok && b != "" && !strings.ContainsAny(b, " \t\n")
}

// quotesValue reports whether a value that starts after before is
// quoted content.
func quotesValue(before string) bool {
	switch {
	case before == "", strings.HasSuffix(before, "\n"), strings.HasSuffix(before, `"`):
		return true
	case strings.HasSuffix(before, "="):
		return !afterAddressKey(before)
	}
	return false
}

// afterAddressKey reports whether before ends with an address field's
// key=, as in to=run:x, or next=inspect_target=run:x.
func afterAddressKey(before string) bool {
	k, ok := strings.CutSuffix(before, "=")
	if !ok {
		return false
	}
	i := len(k)
	for i > 0 && isTokenByte(k[i-1]) {
		i--
	}
	key := k[i:]
	if j := strings.LastIndexByte(key, '_'); j >= 0 && !addressFields[key] {
		key = key[j+1:]
	}
	return addressFields[key] || key == "last_from"
}

// qualifyOutside is QualifyRun on text, except for the addresses that
// start inside one of spans.
func qualifyOutside(text, run, node string, spans [][2]int) string {
	inside := func(i int) bool {
		for _, s := range spans {
			if s[0] <= i && i < s[1] {
				return true
			}
		}
		return false
	}
	var b strings.Builder
	last := 0
	for _, at := range addressEnds(text, run) {
		if inside(at[0]) {
			continue
		}
		b.WriteString(text[last:at[1]])
		b.WriteString("@" + node)
		last = at[1]
	}
	b.WriteString(text[last:])
	return b.String()
}

// jsonField is one member of a JSON object, in its order.
type jsonField struct {
	key string
	val json.RawMessage
}

// decodeObject reads a JSON object's members in order.
func decodeObject(raw json.RawMessage) ([]jsonField, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil, false
	}
	d := json.NewDecoder(bytes.NewReader(raw))
	if _, err := d.Token(); err != nil {
		return nil, false
	}
	var out []jsonField
	for d.More() {
		t, err := d.Token()
		if err != nil {
			return nil, false
		}
		k, ok := t.(string)
		if !ok {
			return nil, false
		}
		var v json.RawMessage
		if err := d.Decode(&v); err != nil {
			return nil, false
		}
		out = append(out, jsonField{k, v})
	}
	if _, err := d.Token(); err != nil {
		return nil, false
	}
	return out, true
}

// decodeArray reads a JSON array's items.
func decodeArray(raw json.RawMessage) ([]json.RawMessage, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '[' {
		return nil, false
	}
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return nil, false
	}
	return items, true
}

func encodeObject(fields []jsonField) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, f := range fields {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(marshalString(f.key))
		b.WriteByte(':')
		b.Write(f.val)
	}
	b.WriteByte('}')
	return b.Bytes()
}

func encodeArray(items []json.RawMessage) json.RawMessage {
	var b bytes.Buffer
	b.WriteByte('[')
	for i, it := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(it)
	}
	b.WriteByte(']')
	return b.Bytes()
}

func encodeStrings(list []string) json.RawMessage {
	items := make([]json.RawMessage, len(list))
	for i, s := range list {
		items[i] = marshalString(s)
	}
	return encodeArray(items)
}

// marshalString is s as a JSON string, without HTML escapes (as the
// kernel's answers and stored records write it).
func marshalString(s string) json.RawMessage {
	b, _ := fsutil.MarshalCompact(s)
	return b
}
