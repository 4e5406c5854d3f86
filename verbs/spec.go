package verbs

import (
	"bytes"
	"context"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/pi-actors/pi-actors/sessions"
)

// Request is one verb's typed parameters.
type Request interface {
	// Validate checks what can be checked without state: required and
	// mutually exclusive parameters, enumerations, shapes. Every error
	// names the parameter and the fix.
	Validate() error
}

// Outcome is what a verb produced: the --json result, the compact text the
// CLI prints, and the exit status.
type Outcome struct {
	// Result is the --json result (and an MCP tool's structured content).
	Result any
	// Text is the compact text for agents (the CLI's default output).
	Text string
	// Exit is the exit status: 0, or a command's own status for exec and
	// call.
	Exit int
	// Fail, when set, is a failure that still carries a result (a command
	// that failed: the envelope is {"ok":false,…} with the result as
	// details).
	Fail *Error
	// OutText and ErrText, when ErrText is set, are Text split for a
	// terminal: the lines of what succeeded (stdout) and of what failed
	// (stderr), as a verb acting on several runs reports them. Text keeps
	// every line, in order, for front doors with one channel (MCP).
	OutText, ErrText string
	// Streamed means the output was already written to Env.Stream byte for
	// byte (exec and call in text mode); Text is empty.
	Streamed bool
	// Settle, when set, must be called once the front door has passed the
	// outcome on (true) or could not (false): a view=followups answer's
	// follow-ups are delivered only then, and go back to the queue
	// otherwise. Call it through SettleOutcome.
	Settle func(passedOn bool)
}

// SettleOutcome calls out.Settle when there is one.
func SettleOutcome(out *Outcome, passedOn bool) {
	if out != nil && out.Settle != nil {
		out.Settle(passedOn)
	}
}

// Annotations are the MCP tool hints of a verb.
type Annotations struct {
	ReadOnly    bool
	Destructive bool
	Idempotent  bool
}

// Spec describes one verb: its name and help, how CLI words map to its
// parameters, and how to run it.
type Spec struct {
	Name    string
	Summary string
	// Usage is the long help: synopsis, explanation, examples. The
	// parameter table is generated from the request type.
	Usage string
	// Word is the parameter the first positional word fills (exec's
	// template, call's recipe, kernel's action); "" means no words.
	Word string
	// Words: every positional word fills Word, a list parameter (the runs
	// of stop, kill, restart and rm: pi-actors stop web worker).
	Words bool
	// Rest is a map parameter that collects every CLI parameter that is not
	// one of the request's own (exec's values, call's args).
	Rest string
	// Flags are the verb's own flags and the parameters they set
	// (--dry-run → dry_run).
	Flags map[string]string
	// Batch: a stdin batch goes to the kernel whole (spawn, message).
	Batch bool
	// Internal parameters are accepted but not documented (call's async
	// launch passes tool and launch_source to spawn).
	Internal []string
	// Terminal parameters read what only a terminal's caller has (exec's
	// and call's stdin): the CLI's alone; the MCP server leaves them out of
	// its schemas and refuses them.
	Terminal []string
	// Tool, when set, makes the verb an MCP tool with these hints.
	Tool *Annotations
	// Enums are the allowed values of string parameters, for generated
	// schemas (the verb validates them itself).
	Enums map[string][]string
	// Hidden verbs are not listed by help.
	Hidden bool
	// Decode, when set, replaces the generic decoding of a JSON object of
	// parameters: the verb reports unknown and mistyped parameters itself
	// (the knowledge operations, with the knowledge graph's error codes).
	Decode func(raw []byte) (Request, error)
	New    func() Request
	Run    func(ctx context.Context, env *Env, req Request) (*Outcome, error)
}

var (
	registry   []*Spec
	registryMu sync.Mutex
)

// Register adds a verb (from an init function). Every call of a verb
// with a session, from outside a run, is that session's activity
// (sessions.Touch: [sessions] auto_suspend_after and session list).
func Register(s *Spec) {
	if run := s.Run; run != nil {
		s.Run = func(ctx context.Context, env *Env, req Request) (*Outcome, error) {
			// Only a session the requests accept (a token): a bad one is
			// refused by the call and leaves no activity file behind.
			if env != nil && env.Session != "" && env.AgentDir != "" && sessions.Caller(env.Environ) && CheckCaller(env.Session, nil) == nil {
				sessions.Touch(env.AgentDir, env.Session)
			}
			return run(ctx, env, req)
		}
	}
	registryMu.Lock()
	defer registryMu.Unlock()
	registry = append(registry, s)
}

// All returns the registered verbs in registration order.
func All() []*Spec {
	registryMu.Lock()
	defer registryMu.Unlock()
	return slices.Clone(registry)
}

// Names returns the names of the registered verbs, in registration
// order: what a recipe tool must not be spelt like (recipes.ShadowOf).
func Names() []string {
	all := All()
	out := make([]string, len(all))
	for i, s := range all {
		out[i] = s.Name
	}
	return out
}

// Find returns the verb named name, or nil.
func Find(name string) *Spec {
	for _, s := range All() {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// field is one parameter of a request type.
type field struct {
	name     string
	index    []int
	typ      reflect.Type
	tag      reflect.StructTag // its description is the jsonschema key
	required bool
}

// requestType is what fields and plainRequest read of a request type.
type requestType struct {
	fields []field
	plain  bool
}

var fieldCache sync.Map // reflect.Type → *requestType

// fields lists a request type's parameters in declaration order.
func fields(t reflect.Type) []field { return readType(t).fields }

// plainRequest reports whether json decodes an object into request type
// t field by field, each key into the field fields names so: t does not
// decode itself, embeds nothing, and every exported field's json name is
// its tag's (plain, unique whatever the case) with no option but
// omitempty and omitzero.
func plainRequest(t reflect.Type) bool { return readType(t).plain }

func readType(t reflect.Type) *requestType {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if f, ok := fieldCache.Load(t); ok {
		return f.(*requestType)
	}
	pt := reflect.PointerTo(t)
	rt := &requestType{plain: !pt.Implements(reflect.TypeFor[json.Unmarshaler]()) && !pt.Implements(reflect.TypeFor[encoding.TextUnmarshaler]())}
	var seen map[string]bool
	for _, sf := range structFields(t) {
		if sf.Anonymous || len(sf.Index) > 1 {
			rt.plain = false
		}
		if !sf.IsExported() || sf.Anonymous {
			continue
		}
		tag := sf.Tag.Get("json")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			if tag != "-" {
				rt.plain = false // json names it "-"
			}
			continue
		}
		if name == "" {
			name = sf.Name
		}
		if rt.plain {
			rt.plain = plainOptions(opts) && plainJSONName(name) && !seen[strings.ToLower(name)]
			if seen == nil {
				seen = map[string]bool{}
			}
			seen[strings.ToLower(name)] = true
		}
		rt.fields = append(rt.fields, field{name: name, index: sf.Index, typ: sf.Type, tag: sf.Tag,
			required: !strings.Contains(opts, "omitempty") && !strings.Contains(opts, "omitzero")})
	}
	fieldCache.Store(t, rt)
	return rt
}

// plainOptions are json tag options besides the name that decoding
// ignores.
func plainOptions(opts string) bool {
	for opts != "" {
		var o string
		if o, opts, _ = strings.Cut(opts, ","); o != "omitempty" && o != "omitzero" {
			return false
		}
	}
	return true
}

// structFields is reflect.VisibleFields(t), read directly when t embeds
// nothing (most requests: the CLI reads one request type per run).
func structFields(t reflect.Type) []reflect.StructField {
	out := make([]reflect.StructField, t.NumField())
	for i := range out {
		if out[i] = t.Field(i); out[i].Anonymous {
			return reflect.VisibleFields(t)
		}
	}
	return out
}

// Params lists the verb's documented parameter names.
func (s *Spec) Params() []string {
	var names []string
	for _, f := range fields(reflect.TypeOf(s.New())) {
		if !slices.Contains(s.Internal, f.name) {
			names = append(names, f.name)
		}
	}
	return names
}

// HasParam reports whether the verb's request has a parameter name.
func (s *Spec) HasParam(name string) bool {
	for _, f := range fields(reflect.TypeOf(s.New())) {
		if f.name == name {
			return true
		}
	}
	return false
}

// DecodeCLI builds the typed request from the CLI's words and parameters
// (key=value strings, key:=JSON values, a stdin object): the first word
// fills Spec.Word, parameters the request does not have go to Spec.Rest
// (or are an error naming them), and each value must fit its parameter's
// type.
func (s *Spec) DecodeCLI(words []string, params map[string]any) (Request, error) {
	clean := make(map[string]any, len(params)+1)
	var rest, whole map[string]any
	for k, v := range params {
		if (s.Decode != nil || s.HasParam(k)) && k != s.Rest {
			clean[k] = v
			continue
		}
		if s.Rest == "" {
			return nil, Usagef("unknown %s parameter %s (parameters: %s)", s.Name, k, strings.Join(s.Params(), ", "))
		}
		// The map parameter itself, given whole (values:={…}, or
		// "args":{…} on stdin), joins the loose ones.
		if m, ok := v.(map[string]any); ok && k == s.Rest {
			whole = m
			continue
		}
		if rest == nil {
			rest = map[string]any{}
		}
		rest[k] = v
	}
	for k, v := range whole {
		if _, dup := rest[k]; dup {
			return nil, Usagef("%s got %s both as %s=… and inside %s:=; give it once", s.Name, k, k, s.Rest)
		}
		if rest == nil {
			rest = map[string]any{}
		}
		rest[k] = v
	}
	if rest != nil {
		clean[s.Rest] = rest
	}
	if len(words) > 0 {
		if s.Word == "" {
			return nil, Usagef("%s takes parameters, not words (got %q): %s", s.Name, words[0], s.example())
		}
		if len(words) > 1 && !s.Words {
			if k, _, ok := strings.Cut(words[1], "="); ok && k != "" {
				// key=value whose key is no parameter name (wörd=1).
				return nil, Usagef("%q is not a parameter: a name is ASCII letters, digits, '_', '.' and '-', starting with a letter or '_' (got %q)", words[1], strings.TrimSuffix(k, ":"))
			}
			return nil, Usagef("%s takes one word before its parameters; got extra word %q — quote a value with spaces, or write it as key=value", s.Name, words[1])
		}
		if _, dup := clean[s.Word]; dup {
			also := ""
			if s.Rest != "" {
				also = fmt.Sprintf(" (a value named %s for the %s goes inside %s:='{\"%s\":…}')", s.Word, s.Word, s.Rest, s.Word)
			}
			return nil, Usagef("%s got both a %s word and %s=…; give one%s", s.Name, s.Word, s.Word, also)
		}
		if s.Words {
			clean[s.Word] = words
		} else {
			clean[s.Word] = words[0]
		}
	}
	if req, ok := s.decodeFields(clean); ok {
		return req, nil
	}
	b, err := json.Marshal(clean)
	if err != nil {
		return nil, Invalidf("%s parameters: %v", s.Name, err)
	}
	return s.decode(b)
}

// decodeFields is s.decode(json.Marshal(params)) without encoding/json's
// table of the request type's fields (spawn's has 36: building it was a
// twentieth of a spawn's CPU in the CLI, which decodes one request): each
// parameter is marshalled and decoded into its field alone, as json
// decodes it in the whole object. ok is false when the type is not
// plainRequest, a parameter names no field, or a value does not decode
// (s.decode then says why, as before).
func (s *Spec) decodeFields(params map[string]any) (Request, bool) {
	if s.Decode != nil {
		return nil, false
	}
	req := s.New()
	rv := reflect.ValueOf(req)
	if rv.Kind() != reflect.Pointer || rv.IsNil() || rv.Elem().Kind() != reflect.Struct || !plainRequest(rv.Elem().Type()) {
		return nil, false
	}
	fs, sv := fields(rv.Type()), rv.Elem()
	for k, v := range params {
		i := slices.IndexFunc(fs, func(f field) bool { return f.name == k })
		if i < 0 {
			return nil, false
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, false
		}
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		if err := dec.Decode(sv.FieldByIndex(fs[i].index).Addr().Interface()); err != nil {
			return nil, false
		}
	}
	return req, true
}

// plainJSONName is a name json takes from a tag as it is, and that is
// not "-" (json's name of a field tagged "-,").
func plainJSONName(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return s != "" && s != "-"
}

// DecodeJSON builds the typed request from one JSON object (an MCP tool
// call, a kernel request): unknown parameters are an error naming them.
func (s *Spec) DecodeJSON(raw []byte) (Request, error) {
	if len(strings.TrimSpace(string(raw))) == 0 {
		raw = []byte("{}")
	}
	if s.Decode != nil {
		return s.Decode(raw)
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, Invalidf("%s parameters must be one JSON object: %v", s.Name, err)
	}
	for k := range obj {
		if !s.HasParam(k) {
			return nil, Usagef("unknown %s parameter %s (parameters: %s)", s.Name, k, strings.Join(s.Params(), ", "))
		}
	}
	return s.decode(raw)
}

// decode reads JSON into the request; numbers in untyped values stay
// json.Number (as the template engine expects them: 1 stays 1, never 1.0).
func (s *Spec) decode(b []byte) (Request, error) {
	if s.Decode != nil {
		return s.Decode(b)
	}
	req := s.New()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(req); err != nil {
		return nil, s.typeError(err, b)
	}
	return req, nil
}

// typeError turns a JSON decoding error into one that names the parameter.
func (s *Spec) typeError(err error, b []byte) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return Invalidf("%s: %s must be %s, got a JSON %s", s.Name, te.Field, describeType(te.Type), te.Value)
	}
	msg := err.Error()
	// Errors from the lenient types' UnmarshalJSON name the Go field path.
	if _, after, ok := strings.Cut(msg, "Go struct field "); ok {
		path, why, _ := strings.Cut(after, ": ")
		if i := strings.IndexByte(path, '.'); i >= 0 {
			path = path[i+1:]
		}
		if name := s.jsonName(path); name != "" {
			return Invalidf("%s: %s: %s", s.Name, name, why)
		}
	}
	// A lenient type's own error names no field: find the parameter
	// whose value does not decode on its own.
	if name, why := s.failingField(b); name != "" {
		return Invalidf("%s: %s: %s", s.Name, name, why)
	}
	return Invalidf("%s parameters: %v", s.Name, err)
}

// failingField is the first parameter in b whose value does not decode
// into its field, and why.
func (s *Spec) failingField(b []byte) (string, string) {
	var raw map[string]json.RawMessage
	if json.Unmarshal(b, &raw) != nil {
		return "", ""
	}
	for _, f := range fields(reflect.TypeOf(s.New())) {
		v, ok := raw[f.name]
		if !ok {
			continue
		}
		dec := json.NewDecoder(bytes.NewReader(v))
		dec.UseNumber()
		if err := dec.Decode(reflect.New(f.typ).Interface()); err != nil {
			var te *json.UnmarshalTypeError
			if errors.As(err, &te) {
				return f.name, fmt.Sprintf("must be %s, got a JSON %s", describeType(te.Type), te.Value)
			}
			return f.name, strings.TrimPrefix(err.Error(), "json: ")
		}
	}
	return "", ""
}

func (s *Spec) jsonName(goName string) string {
	t := reflect.TypeOf(s.New()).Elem()
	for _, f := range fields(t) {
		if t.FieldByIndex(f.index).Name == goName || f.name == goName {
			return f.name
		}
	}
	return ""
}

func describeType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int64, reflect.Int32, reflect.Uint64, reflect.Uint32:
		return "an integer"
	case reflect.Float64, reflect.Float32:
		return "a number"
	}
	return t.String()
}

func (s *Spec) example() string {
	for _, line := range strings.Split(s.Usage, "\n") {
		if strings.HasPrefix(line, "pi-actors ") {
			return line
		}
	}
	return "pi-actors help " + s.Name
}

// ParamHelp renders the parameter table of --help: one line per parameter
// with its type and description.
func (s *Spec) ParamHelp() string {
	t := reflect.TypeOf(s.New()).Elem()
	var b strings.Builder
	width := 0
	fs := fields(t)
	for _, f := range fs {
		width = max(width, len(f.name))
	}
	for _, f := range fs {
		if slices.Contains(s.Internal, f.name) {
			continue
		}
		desc := f.tag.Get("jsonschema")
		if f.name == s.Word {
			desc = "(or the " + map[bool]string{false: "first word", true: "words"}[s.Words] + ") " + desc
		}
		if f.name == s.Rest {
			desc = "(or any other key=value) " + desc
		}
		fmt.Fprintf(&b, "  %-*s  %-7s %s\n", width, f.name, typeWord(f.typ), desc)
	}
	return b.String()
}

func typeWord(t reflect.Type) string {
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t {
	case reflect.TypeFor[Int]():
		return "int"
	case reflect.TypeFor[Bool]():
		return "bool"
	case reflect.TypeFor[Text](), reflect.TypeFor[LooseString]():
		return "string"
	case reflect.TypeFor[LooseInt]():
		return "int"
	case reflect.TypeFor[LooseBool]():
		return "bool"
	case reflect.TypeFor[LooseObject]():
		return "object"
	case reflect.TypeFor[Value](), reflect.TypeFor[json.RawMessage]():
		return "json"
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Map, reflect.Struct:
		return "object"
	case reflect.Slice:
		return "array"
	case reflect.Bool:
		return "bool"
	case reflect.Int, reflect.Int64:
		return "int"
	case reflect.Interface:
		return "json"
	}
	return t.Kind().String()
}

// names returns the verbs' names, sorted, for errors.
func names(list []*Spec) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = s.Name
	}
	sort.Strings(out)
	return out
}
