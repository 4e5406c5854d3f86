package template

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

// A `defaults` value that does not fit its declared type is refused when
// the template is parsed, with the message of the inline form and the
// field named; defaults holding placeholders resolve later and pass.
func TestParseChecksDefaultsAgainstArgs(t *testing.T) {
	for _, tc := range []struct {
		tmpl string
		path string // "" = accepted
		msg  string
	}{
		{`{"args":["n:int"],"defaults":{"n":"abc"},"template":"echo {n}"}`, "template.defaults.n", `invalid default for n:int: "abc" is not an integer`},
		{`{"args":["n:int"],"defaults":{"n":1.5},"template":"echo {n}"}`, "template.defaults.n", "invalid default for n:int"},
		{`{"args":["n:int"],"defaults":{"n":""},"template":"echo {n}"}`, "template.defaults.n", "invalid default for n:int"},
		{`{"args":"n:number","defaults":{"n":"1e3"},"template":"echo {n}"}`, "template.defaults.n", "invalid default for n:number"},
		{`{"args":["b:bool"],"defaults":{"b":"maybe"},"template":"echo {b}"}`, "template.defaults.b", "invalid default for b:bool"},
		{`{"args":["m:enum(a,b)"],"defaults":{"m":"c"},"template":"echo {m}"}`, "template.defaults.m", "invalid default for m:enum(a,b)"},
		{`{"args":["xs:array"],"defaults":{"xs":"x"},"template":"echo {xs}"}`, "template.defaults.xs", "invalid default for xs:array"},
		// a child's defaults are checked against the args it inherits
		{`{"args":["n:int"],"template":[{"defaults":{"n":"abc"},"template":"echo {n}"}]}`, "template.template[0].defaults.n", "invalid default for n:int"},
		{`{"args":["n:int"],"template":{"defaults":{"n":"abc"},"template":"echo {n}"}}`, "template.template.defaults.n", "invalid default for n:int"},
		// …and against the args that replace them
		{`{"args":["n:int"],"template":[{"args":["n"],"defaults":{"n":"abc"},"template":"echo {n}"}]}`, "", ""},
		// defaults over an args default are checked too
		{`{"args":["n:int=3"],"defaults":{"n":"x"},"template":"echo {n}"}`, "template.defaults.n", "invalid default for n:int"},
		// values that fit, as text or JSON
		{`{"args":["n:int","f:number","b:bool","xs:array","m:enum(a,b)"],"defaults":{"n":3,"f":"1.5","b":true,"xs":["a"],"m":"b"},"template":"echo {n}"}`, "", ""},
		{`{"args":["n:int"],"defaults":{"n":" 7 "},"template":"echo {n}"}`, "", ""},
		{`{"args":["n:int"],"defaults":{"n":null},"template":"echo {n}"}`, "", ""},
		// placeholders resolve later
		{`{"args":["n:int"],"defaults":{"n":"{m}"},"template":"echo {n}"}`, "", ""},
		// undeclared and untyped names take anything
		{`{"args":["n","p:path"],"defaults":{"n":"abc","p":"x","other":"y"},"template":"echo {n}"}`, "", ""},
	} {
		_, err := ParseJSON([]byte(tc.tmpl))
		if tc.path == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.tmpl, err)
			}
			continue
		}
		var te *Error
		if !errors.As(err, &te) || te.Path != tc.path || !strings.Contains(te.Msg, tc.msg) {
			t.Errorf("%s: got %v; want %s: …%s…", tc.tmpl, err, tc.path, tc.msg)
		}
	}
}

func TestArgCheckDefaultValue(t *testing.T) {
	a := Arg{Name: "n", Type: Type{Kind: "int"}}
	if err := a.CheckDefaultValue("abc"); err == nil || err.Error() != `invalid default for n:int: "abc" is not an integer` {
		t.Errorf("got %v", err)
	}
	for _, v := range []any{"5", "{x}/1", nil} {
		if err := a.CheckDefaultValue(v); err != nil {
			t.Errorf("%v: %v", v, err)
		}
	}
}

// when "{flag}" with no value is falsy, as the docs' falsy set says
// ("missing"), and the plan says how it was decided.
func TestWhenPlaceholderMissingIsFalsy(t *testing.T) {
	for _, tc := range []struct {
		when, how string
	}{
		{"{flag}", "{flag} (flag unset)"},
		{" {flag:bool} ", "{flag:bool} (flag unset)"},
		{"{items[2]}", "{items[2]} (no value)"},
	} {
		n, err := ParseJSON([]byte(`{"when":` + CompactJSON(tc.when) + `,"template":"echo hi"}`))
		if err != nil {
			t.Fatal(err)
		}
		p, err := NewPlan(n, nil, Options{})
		if err != nil {
			t.Fatalf("%s: %v", tc.when, err)
		}
		if p.Root.Kind != StepSkipped || p.Root.When != tc.how {
			t.Errorf("%s: kind=%s when=%q; want skipped, %q", tc.when, p.Root.Kind, p.Root.When, tc.how)
		}
	}
	n, _ := ParseJSON([]byte(`{"when":"{flag}","template":"echo hi"}`))
	p, err := NewPlan(n, Values{"flag": "yes"}, Options{})
	if err != nil || p.Root.Kind != StepLeaf || p.Root.When != `{flag}="yes"` {
		t.Fatalf("flag=yes: %v %+v", err, p)
	}
}

// The strings "true"/"false" are refused: as a value name they would
// never be set, so the node would silently never run.
func TestWhenBoolStringRefused(t *testing.T) {
	for _, tc := range []struct{ when, want string }{
		{"true", "use the JSON bool true"},
		{" False ", "use the JSON bool false"},
		{"!true", "use the JSON bool false"},
		{"!false", "use the JSON bool true"},
	} {
		_, err := ParseJSON([]byte(`{"when":` + CompactJSON(tc.when) + `,"template":"echo hi"}`))
		var te *Error
		if !errors.As(err, &te) || te.Path != "template.when" || !strings.Contains(te.Msg, tc.want) {
			t.Errorf("%q: got %v; want template.when: …%s…", tc.when, err, tc.want)
		}
	}
	for _, w := range []string{"truthy", "is_true", "!flag", "{true}"} {
		if _, err := ParseJSON([]byte(`{"when":` + CompactJSON(w) + `,"template":"echo hi"}`)); err != nil {
			t.Errorf("%q: %v", w, err)
		}
	}
}

// output is "stdout", a value name, or a template — a literal path with
// no placeholder included.
func TestOutputLiteralPath(t *testing.T) {
	for _, tc := range []struct {
		output string
		vals   Values
		want   string
	}{
		{"/tmp/fixed.ogg", nil, "/tmp/fixed.ogg"},
		{"out.ogg", nil, "out.ogg"},
		{"./ogg", nil, "./ogg"},
		{"{dir}/out.ogg", Values{"dir": "d"}, "d/out.ogg"},
		{"ogg", Values{"ogg": "x.ogg"}, "x.ogg"},
	} {
		n, err := ParseJSON([]byte(`{"output":` + CompactJSON(tc.output) + `,"template":"echo hi"}`))
		if err != nil {
			t.Fatalf("%s: %v", tc.output, err)
		}
		p, err := NewPlan(n, tc.vals, Options{})
		if err != nil {
			t.Fatalf("%s: %v", tc.output, err)
		}
		if p.Root.Output == nil || *p.Root.Output != tc.want {
			t.Errorf("%s: output %v; want %q", tc.output, p.Root.Output, tc.want)
		}
	}
	// A name with no value is still an error naming output and the ways out.
	n, _ := ParseJSON([]byte(`{"output":"ogg","template":"echo hi"}`))
	_, err := NewPlan(n, nil, Options{})
	var te *Error
	if !errors.As(err, &te) || te.Path != "template.output" || !strings.Contains(te.Msg, `write a path ("./ogg")`) {
		t.Errorf("got %v", err)
	}
}

// A placeholder of a recipe's artifact path with no value: the hint says
// what works (declare it in args), not "pass nope=<value>", which a
// recipe refuses as an unknown argument.
func TestExpandMissingHint(t *testing.T) {
	_, err := Expand("{nope}/x", Values{}, nil)
	if err == nil || !strings.Contains(err.Error(), `a recipe takes it only when its args declare nope: args: ["nope"]`) {
		t.Errorf("got %v", err)
	}
	if got, err := Expand("{nope}/x", Values{}, map[string]any{"nope": "d"}); err != nil || got != "d/x" {
		t.Errorf("default: %q %v", got, err)
	}
}

// A typed argument given "" must still fit its type (as the reference
// does); the error says how to leave it out: null.
func TestNormalizeEmptyTyped(t *testing.T) {
	for _, typ := range []string{"int", "number", "bool", "enum(a,b)", "array"} {
		_, err := ParseType(typ).Normalize("n", "")
		if err == nil || !strings.Contains(err.Error(), "pass null (n:=null)") {
			t.Errorf("%s: got %v", typ, err)
		}
		if v, err := ParseType(typ).Normalize("n", nil); err != nil || v != "" {
			t.Errorf("%s null: %v %v", typ, v, err)
		}
	}
	if _, err := ParseType("int").Normalize("n", "x"); err == nil || strings.Contains(err.Error(), "null") {
		t.Errorf("x: %v", err)
	}
}

// A path passed in is never an option of its command: find's -delete or
// tail's -f given as a path went through as they were (utility-markdown-
// index directory=-delete deleted the files of the working directory).
func TestNormalizePathNeverAnOption(t *testing.T) {
	for in, want := range map[string]string{"-delete": "./-delete", "-": "./-", "--version": "./--version", "a/-b": "a/-b", "/x": "/x", "": ""} {
		if v, err := ParseType("path").Normalize("p", in); err != nil || v != want {
			t.Errorf("path %q: %v %v, want %q", in, v, err, want)
		}
	}
	if v, _ := ParseType("string").Normalize("s", "-delete"); v != "-delete" {
		t.Errorf("a string is passed as it is: %v", v)
	}
	// A number given as JSON (p:=-5) too.
	for _, in := range []any{json.Number("-5"), -5.0} {
		if v, err := ParseType("path").Normalize("p", in); err != nil || v != "./-5" {
			t.Errorf("path %v (%T): %v %v, want ./-5", in, in, v, err)
		}
	}
}

// A value holding a NUL byte cannot become a command argument: the plan
// refuses it (65, naming the word), rather than exec (126, "cannot
// execute").
func TestPlanRefusesNULInArgv(t *testing.T) {
	node, err := ParseJSON([]byte(`{"template":"echo {x}"}`))
	if err != nil {
		t.Fatal(err)
	}
	_, err = NewPlan(node, Values{"x": "a\x00b"}, Options{})
	var te *Error
	if !errors.As(err, &te) || !strings.Contains(te.Msg, "NUL byte") || te.Path != "template" {
		t.Fatalf("NewPlan = %v, want an *Error at template naming the NUL byte", err)
	}
}
