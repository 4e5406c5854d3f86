package template

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// phWant is the expected classification of one placeholder's content.
type phWant struct {
	kind    phKind
	name    string
	typ     string
	def     string
	hasDef  bool
	negate  bool
	yes, no string
	pad     int
	expr    bool // p.expr is set
	index   bool // p.index is set
	exprErr bool // p.exprErr is set
}

func phGot(p *placeholder) phWant {
	return phWant{
		kind: p.kind, name: p.name, typ: p.typ, def: p.def, hasDef: p.hasDef,
		negate: p.negate, yes: p.yes, no: p.no, pad: p.pad,
		expr: p.expr != nil, index: p.index != nil, exprErr: p.exprErr != nil,
	}
}

// TestParsePlaceholderForms checks the classification of every form in
// docs/command-templates.md, section "Placeholders".
func TestParsePlaceholderForms(t *testing.T) {
	lit := phWant{kind: phLiteral}
	tests := []struct {
		content string
		want    phWant
	}{
		// {name}
		{"name", phWant{kind: phName, name: "name"}},
		{"_x", phWant{kind: phName, name: "_x"}},
		{"X9_y", phWant{kind: phName, name: "X9_y"}},
		{"_index", phWant{kind: phName, name: "_index"}},
		{"print", phWant{kind: phName, name: "print"}}, // so awk '{print}' needs a value

		// {name=default}: the default is everything after the first '='
		{"name=default", phWant{kind: phName, name: "name", def: "default", hasDef: true}},
		{"x=", phWant{kind: phName, name: "x", hasDef: true}},
		{"url=http://x", phWant{kind: phName, name: "url", def: "http://x", hasDef: true}},
		{"x=a:b", phWant{kind: phName, name: "x", def: "a:b", hasDef: true}},
		{"x=a=b", phWant{kind: phName, name: "x", def: "a=b", hasDef: true}},
		{"x=a*b", phWant{kind: phName, name: "x", def: "a*b", hasDef: true}},
		{"x=(1+2)", phWant{kind: phName, name: "x", def: "(1+2)", hasDef: true}},
		{"x=?", phWant{kind: phName, name: "x", def: "?", hasDef: true}},
		{"x=a?b:c", phWant{kind: phName, name: "x", def: "a?b:c", hasDef: true}},
		{"x=?y:z", phWant{kind: phName, name: "x", def: "?y:z", hasDef: true}},
		{"x=a??b", phWant{kind: phName, name: "x", def: "a??b", hasDef: true}},
		{"x= a b ", phWant{kind: phName, name: "x", def: " a b ", hasDef: true}},
		{"my-name=v", phWant{kind: phName, name: "my-name", def: "v", hasDef: true}},

		// {name:type}, {name:type=default}
		{"n:int", phWant{kind: phName, name: "n", typ: "int"}},
		{"n:int=3", phWant{kind: phName, name: "n", typ: "int", def: "3", hasDef: true}},
		{"p:path=/a:b", phWant{kind: phName, name: "p", typ: "path", def: "/a:b", hasDef: true}},
		{"m:enum(a,b)", phWant{kind: phName, name: "m", typ: "enum(a,b)"}},
		{"m:enum(a,b)=b", phWant{kind: phName, name: "m", typ: "enum(a,b)", def: "b", hasDef: true}},
		{"m:enum()", phWant{kind: phName, name: "m", typ: "enum()"}},
		{"a:b", phWant{kind: phName, name: "a", typ: "b"}}, // unknown type: a string
		{"x:", lit},
		{"x:1", lit},

		// {a??fallback}
		{"a??fb", phWant{kind: phNullish, name: "a", def: "fb", hasDef: true}},
		{"a??", phWant{kind: phNullish, name: "a", hasDef: true}},
		{"a??b?c:d", phWant{kind: phNullish, name: "a", def: "b?c:d", hasDef: true}},
		{"a??x=y", phWant{kind: phNullish, name: "a", def: "x=y", hasDef: true}},
		{"my-flag??no", phWant{kind: phNullish, name: "my-flag", def: "no", hasDef: true}},
		{"1??b", lit},
		{"a ?? b", lit},

		// {cond?yes:no}, {!cond?yes:no}
		{"cond?y:n", phWant{kind: phTernary, name: "cond", yes: "y", no: "n"}},
		{"!cond?y:n", phWant{kind: phTernary, name: "cond", negate: true, yes: "y", no: "n"}},
		{" ! cond ?y:n", phWant{kind: phTernary, name: "cond", negate: true, yes: "y", no: "n"}},
		{"cond?:", phWant{kind: phTernary, name: "cond"}},
		{"cond?--verbose:", phWant{kind: phTernary, name: "cond", yes: "--verbose"}},
		{"cond?:--quiet", phWant{kind: phTernary, name: "cond", no: "--quiet"}},
		// The first ':' after '?' ends yes; a ':' cannot appear in yes.
		{"c?a:b:c", phWant{kind: phTernary, name: "c", yes: "a", no: "b:c"}},
		{"c?http://x:y", phWant{kind: phTernary, name: "c", yes: "http", no: "//x:y"}},
		{"c?a=b:d", phWant{kind: phTernary, name: "c", yes: "a=b", no: "d"}},
		{"a?b", lit},
		{"a b?c:d", lit},
		{"!!a?b:c", lit},

		// {items[2]}, {items[index]}
		{"items[0]", phWant{kind: phIndex, name: "items", index: true}},
		{"items[index]", phWant{kind: phIndex, name: "items", index: true}},
		{"items[index+1]", phWant{kind: phIndex, name: "items", index: true}},
		{"items[ (n*2)%3 ]", phWant{kind: phIndex, name: "items", index: true}},
		{"items[x.y]", phWant{kind: phIndex, name: "items", exprErr: true}},
		{"items[]", lit},
		{"items[0", lit},

		// {_(expr)}, {__(expr)}: width = underscores + 1
		{"_(index+1)", phWant{kind: phExpr, pad: 2, expr: true}},
		{"__(n)", phWant{kind: phExpr, pad: 3, expr: true}},
		{"______(n)", phWant{kind: phExpr, pad: 7, expr: true}},
		{"_(1+)", phWant{kind: phExpr, pad: 2, exprErr: true}},
		// Seven underscores is no padded form: arithmetic that fails to parse.
		{"_______(1)", phWant{kind: phExpr, exprErr: true}},

		// arithmetic
		{"index+1", phWant{kind: phExpr, expr: true}},
		{"index + 1", phWant{kind: phExpr, expr: true}},
		{"(a*b)%7", phWant{kind: phExpr, expr: true}},
		{"-1", phWant{kind: phExpr, expr: true}},
		{"(9)", phWant{kind: phExpr, expr: true}},
		{"a/b", phWant{kind: phExpr, expr: true}},
		{"1+", phWant{kind: phExpr, exprErr: true}},
		{"file%.md", phWant{kind: phExpr, exprErr: true}},
		// In an expression '-' is always minus, even between name characters.
		{"my-var+1", phWant{kind: phExpr, expr: true}},
		// A bare name holding '-' is a name whose arithmetic is the fallback
		// when no value of that name exists.
		{"a-b", phWant{kind: phName, name: "a-b", expr: true}},
		{"index-1", phWant{kind: phName, name: "index-1", expr: true}},
		{"a-", phWant{kind: phName, name: "a-", exprErr: true}},
		{"a-b=d", phWant{kind: phName, name: "a-b", def: "d", hasDef: true}},
		{"a-b:int", phWant{kind: phName, name: "a-b", typ: "int"}},

		// literal content
		{"", lit},
		{"9", lit},
		{"1abc", lit},
		{"print $1", lit},
		{`"a":1`, lit},
		{`"a": 1, "b": [2]`, lit},
		{"a: .b", lit},
		{"a:.b", lit},
		{"http://x", lit},
		{"a.b", lit},
		{" a ", lit},
		{"é", lit},
		{"$x", lit},
	}
	for _, tt := range tests {
		t.Run(tt.content, func(t *testing.T) {
			p := parsePlaceholder(tt.content)
			if p.raw != tt.content {
				t.Errorf("raw = %q, want %q", p.raw, tt.content)
			}
			if got := phGot(p); got != tt.want {
				t.Errorf("parsePlaceholder(%q) = %+v (exprErr %v), want %+v", tt.content, got, p.exprErr, tt.want)
			}
		})
	}
}

// TestParseWordSegments checks how a word is cut into literal text and
// placeholders: only innermost non-empty {…} are placeholders, and content
// that matches no form stays literal.
func TestParseWordSegments(t *testing.T) {
	// Each segment is written as its text; placeholders as <raw>.
	render := func(segs []segment) []string {
		var out []string
		for _, s := range segs {
			if s.ph != nil {
				out = append(out, "<"+s.ph.raw+">")
			} else {
				out = append(out, s.lit)
			}
		}
		return out
	}
	tests := []struct {
		word string
		want []string
	}{
		{"", nil},
		{"plain", []string{"plain"}},
		{"{x}", []string{"<x>"}},
		{"--file={file}", []string{"--file=", "<file>"}},
		{"page{_(index+1)}.html", []string{"page", "<_(index+1)>", ".html"}},
		{"${x}", []string{"$", "<x>"}},
		{"{a}{b}", []string{"<a>", "<b>"}},
		{"{{x}}", []string{"{", "<x>", "}"}},
		{"{a?--f={b}:}", []string{"{a?--f=", "<b>", ":}"}},
		{"{}", []string{"{}"}},
		{"{}{x}", []string{"{}", "<x>"}},
		{"{print $1}", []string{"{print $1}"}},
		{"{a: .b}", []string{"{a: .b}"}},
		{`{"a":1}`, []string{`{"a":1}`}},
		{"{http://x}", []string{"{http://x}"}},
		{"}{x}{", []string{"}", "<x>", "{"}},
		{"{x", []string{"{x"}},
		{"x}", []string{"x}"}},
	}
	for _, tt := range tests {
		t.Run(tt.word, func(t *testing.T) {
			got := render(parseWord(tt.word))
			if len(got) == 0 && len(tt.want) == 0 {
				return
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("parseWord(%q) = %q, want %q", tt.word, got, tt.want)
			}
			var b strings.Builder
			for _, s := range parseWord(tt.word) {
				if s.ph != nil {
					b.WriteString("{" + s.ph.raw + "}")
				} else {
					b.WriteString(s.lit)
				}
			}
			if b.String() != tt.word {
				t.Errorf("parseWord(%q) re-joins to %q", tt.word, b.String())
			}
		})
	}
}

func exprLookupOf(vals map[string]string) func(string) (string, bool, error) {
	return func(name string) (string, bool, error) {
		v, ok := vals[name]
		return v, ok, nil
	}
}

func TestExprEval(t *testing.T) {
	vals := map[string]string{
		"index": "4", "a": "3", "b": "5", "neg": "-7", "sp": " 12 ", "zero": "0",
		"lead": "007", "max": "9223372036854775807", "min": "-9223372036854775808",
	}
	tests := []struct {
		src  string
		want int64
	}{
		{"1", 1},
		{"1+2*3", 7},
		{"2*3+1", 7},
		{"(1+2)*3", 9},
		{"10-4-3", 3},   // left associative
		{"100/10/5", 2}, // left associative
		{"2*3%4", 2},    // (2*3)%4: same precedence, left to right
		{"2+3%4", 5},    // % binds tighter than +
		{"8-2*3", 2},    // * binds tighter than -
		{"((2))", 2},    // nested parentheses
		{"(a*b)%7", 1},  // the docs' example
		{"index+1", 5},  // a name
		{" index + 1 ", 5},
		{"\tindex\n*\r2", 8},
		{"-3+5", 2},
		{"--3", 3},
		{"-(2+3)*2", -10},
		{"+4", 4},
		{"-+-4", 4},
		{"2*-3", -6},
		{"2--3", 5},
		{"-a", -3},
		{"neg", -7},
		{"-neg", 7},
		{"sp*2", 24},  // values are trimmed
		{"lead+1", 8}, // leading zeros
		{"007", 7},
		// division truncates toward zero; % takes the dividend's sign
		{"7/2", 3},
		{"-7/2", -3},
		{"7/-2", -3},
		{"-7/-2", 3},
		{"neg/2", -3},
		{"7%3", 1},
		{"-7%3", -1},
		{"7%-3", 1},
		{"-7%-3", -1},
		{"neg%a", -1},
		{"1/3", 0},
		{"-1/3", 0},
		// the int64 range
		{"9223372036854775807", math.MaxInt64},
		{"-9223372036854775807-1", math.MinInt64},
		{"max", math.MaxInt64},
		{"min", math.MinInt64},
		{"max+min", -1},
		{"min+max", -1},
		{"min/1", math.MinInt64},
		{"min%2", 0},
		{"-max", -math.MaxInt64},
		{"max*-1", -math.MaxInt64},
		{"min*1", math.MinInt64},
		{"max-max", 0},
		{"min-min", 0},
		{"3037000499*3037000499", 9223372030926249001},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			e, err := parseExpr(tt.src)
			if err != nil {
				t.Fatalf("parseExpr(%q): %v", tt.src, err)
			}
			got, err := e.eval(exprLookupOf(vals))
			if err != nil {
				t.Fatalf("eval(%q): %v", tt.src, err)
			}
			if got != tt.want {
				t.Errorf("eval(%q) = %d, want %d", tt.src, got, tt.want)
			}
		})
	}
}

func TestExprErrors(t *testing.T) {
	vals := map[string]string{
		"zero": "0", "max": "9223372036854775807", "min": "-9223372036854775808",
		"file": "a.md", "f": "1.5", "e": "1e3", "plus": "+3", "huge": "99999999999999999999",
		"empty": "",
	}
	tests := []struct {
		src, want string
	}{
		// parse errors
		{"", "empty"},
		{"   ", "empty"},
		{"1+", "ends early"},
		{"(1", "missing )"},
		{"1)", "unexpected \")\""},
		{"1 2", "unexpected \"2\""},
		{"()", "unexpected \")\""},
		{"*3", "unexpected \"*\""},
		{"a.b", "unexpected character '.'"},
		{"file%.md", "unexpected character '.'"},
		{"a[0]", "unexpected character '['"},
		{"9223372036854775808", "out of range"},
		{"-9223372036854775808", "out of range"}, // the literal is parsed before the sign
		// evaluation errors
		{"1/0", "division by zero"},
		{"1%0", "division by zero"},
		{"1/zero", "division by zero"},
		{"5%(2-2)", "division by zero"},
		{"max+1", "integer overflow"},
		{"1+max", "integer overflow"},
		{"min-1", "integer overflow"},
		{"-1+min", "integer overflow"},
		{"0-min", "integer overflow"},
		{"-min", "integer overflow"},
		{"max-(-1)", "integer overflow"},
		{"max*2", "integer overflow"},
		{"min*-1", "integer overflow"},
		{"-1*min", "integer overflow"},
		{"3037000500*3037000500", "integer overflow"},
		{"-3037000500*3037000500", "integer overflow"},
		{"min/-1", "integer overflow"},
		// MinInt64 % -1 is 0, which fits, but is reported as an overflow.
		{"min%-1", "integer overflow"},
		// variables
		{"nosuch+1", "expression variable nosuch has no value"},
		{"file+1", `expression variable file is not an integer ("a.md")`},
		{"f*2", "expression variable f is not an integer"},
		{"e*2", "expression variable e is not an integer"},
		{"plus*2", "expression variable plus is not an integer"},
		{"empty+1", "expression variable empty is not an integer"},
		{"huge+0", "expression variable huge is not an integer"},
	}
	for _, tt := range tests {
		t.Run(tt.src, func(t *testing.T) {
			e, err := parseExpr(tt.src)
			if err == nil {
				var n int64
				n, err = e.eval(exprLookupOf(vals))
				if err == nil {
					t.Fatalf("%q = %d, want an error containing %q", tt.src, n, tt.want)
				}
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("%q: error %q, want it to contain %q", tt.src, err, tt.want)
			}
		})
	}
	// A lookup error is passed through unchanged.
	boom := errors.New("boom")
	e, err := parseExpr("x+1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.eval(func(string) (string, bool, error) { return "", false, boom }); !errors.Is(err, boom) {
		t.Errorf("lookup error: got %v, want %v", err, boom)
	}
}

func TestFormatPadded(t *testing.T) {
	tests := []struct {
		n     int64
		width int
		want  string
	}{
		{7, 0, "7"},
		{7, 1, "7"},
		{7, 2, "07"},
		{7, 3, "007"},
		{0, 0, "0"},
		{0, 3, "000"},
		{42, 2, "42"},
		{123, 2, "123"}, // wider numbers are not cut
		{1234567, 7, "1234567"},
		// the sign is not counted in the width
		{-5, 0, "-5"},
		{-5, 2, "-05"},
		{-5, 3, "-005"},
		{-123, 2, "-123"},
		{-10, 3, "-010"},
		{math.MaxInt64, 2, "9223372036854775807"},
		{math.MinInt64, 2, "-9223372036854775808"},
		{math.MinInt64, 21, "-009223372036854775808"},
	}
	for _, tt := range tests {
		if got := formatPadded(tt.n, tt.width); got != tt.want {
			t.Errorf("formatPadded(%d, %d) = %q, want %q", tt.n, tt.width, got, tt.want)
		}
	}
}

// planArgs plans a one-leaf template against vals and returns its argv.
func planArgs(t *testing.T, tmpl string, vals Values) ([]string, error) {
	t.Helper()
	n, err := Parse(tmpl)
	if err != nil {
		return nil, err
	}
	p, err := NewPlan(n, vals, Options{Dir: "/nonexistent/dir", Home: "/nonexistent/home"})
	if err != nil {
		return nil, err
	}
	return p.Root.Argv, nil
}

// TestPlaceholderResolve checks what each form gives once substituted, as
// documented.
func TestPlaceholderResolve(t *testing.T) {
	vals := Values{
		"a": "5", "b": "2", "my-var": "3", "file": "a.md", "x": "X", "n": "-5",
		"items": []any{"p", "q r", "s"}, "index": "1", "c": "7", "obj": map[string]any{"k": "v"},
		"t": "yes", "f": " No ", "zero": "0", "off": false, "nul": nil, "empty": "",
		"a-b": "hyphen", "arrstr": `["j","k"]`, "tpl": "{a}",
	}
	tests := []struct {
		tmpl string
		want []string
	}{
		{"x {x}", []string{"x", "X"}},
		{"x --x={x}", []string{"x", "--x=X"}},
		{"x {nosuch=d:e}", []string{"x", "d:e"}},
		{"x {x=d}", []string{"x", "X"}},
		{"x {items}", []string{"x", `["p","q r","s"]`}},
		{"x {obj}", []string{"x", `{"k":"v"}`}},
		{"x {items[1]}", []string{"x", "q r"}}, // a value with spaces stays one argument
		{"x {items[index+1]}", []string{"x", "s"}},
		{"x {arrstr[1]}", []string{"x", "k"}},
		{"x {t?y:n} {f?y:n} {!f?y:n} {nosuch?y:n} {zero?y:n} {off?y:n} {nul?y:n}", []string{"x", "y", "n", "y", "n", "n", "n", "n"}},
		{"x {t??fb} {f??fb} {nosuch??fb} {empty??fb} {obj??fb}", []string{"x", "yes", "fb", "fb", "fb", `{"k":"v"}`}},
		{"x {t?:} {nosuch??}", []string{"x"}}, // empty arguments are dropped
		{"x {empty} {nul} '' \"\"", []string{"x"}},
		{"x {index+1} {(a*c)%3} {-a} {a-1}", []string{"x", "2", "2", "-5", "4"}},
		{`x "{index + 1}"`, []string{"x", "2"}},
		{"x {index + 1}", []string{"x", "{index", "+", "1}"}}, // split first: no placeholder
		{"x page{_(index+1)}.html {__(c)} {_(n)}", []string{"x", "page02.html", "007", "-05"}},
		{"x {a-b}", []string{"x", "hyphen"}}, // a value of that name wins
		{"x {my-var}", []string{"x", "3"}},
		{"x ${x}", []string{"x", "$X"}},
		{"x {a?--f={b}:}", []string{"x", "{a?--f=2:}"}},
		{"x {{x}}", []string{"x", "{X}"}},
		{"find . -exec rm {} +", []string{"find", ".", "-exec", "rm", "{}", "+"}},
		{"awk '{print $1}'", []string{"awk", "{print $1}"}},
		{"jq '{a: .b}' '{\"a\":1}'", []string{"jq", "{a: .b}", `{"a":1}`}},
		{"x {c:int=3} {nosuch:int=3}", []string{"x", "7", "3"}},
		// substituted text is never scanned again
		{"x {tpl} pre{tpl}post", []string{"x", "{a}", "pre{a}post"}},
	}
	for _, tt := range tests {
		t.Run(tt.tmpl, func(t *testing.T) {
			got, err := planArgs(t, tt.tmpl, vals)
			if err != nil {
				t.Fatalf("plan %q: %v", tt.tmpl, err)
			}
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("plan %q: argv %q, want %q", tt.tmpl, got, tt.want)
			}
		})
	}
	// With no value named a-b, {a-b} is arithmetic.
	if got, err := planArgs(t, "x {a-b}", Values{"a": "5", "b": "2"}); err != nil || !reflect.DeepEqual(got, []string{"x", "3"}) {
		t.Errorf("{a-b} without a value a-b: %q, %v; want [x 3]", got, err)
	}
	// In an expression '-' is minus: {my-var+1} is my - var + 1.
	if got, err := planArgs(t, "x {my-var+1}", Values{"my": "10", "var": "4"}); err != nil || !reflect.DeepEqual(got, []string{"x", "7"}) {
		t.Errorf("{my-var+1}: %q, %v; want [x 7]", got, err)
	}
}

func TestPlaceholderResolveErrors(t *testing.T) {
	vals := Values{"file": "a.md", "a": "5", "items": []any{"p"}, "s": "str", "index": "0"}
	tests := []struct {
		tmpl, want string
	}{
		{"x {nosuch}", "missing value for placeholder {nosuch}: pass nosuch=<value> or give it a default"},
		{"x {n:int}", "missing value for placeholder {n:int}: pass n=<value> or give it a default"},
		// Names may hold '-': a missing one must give the missing-value error
		// (docs, "Where values come from", step 5).
		{"x {output-dir}", "missing value for placeholder {output-dir}: pass output-dir=<value> or give it a default"},
		{"x {items[1]}", "missing value for placeholder {items[1]}"},
		{"x {items[-1]}", "missing value for placeholder {items[-1]}"},
		{"x {s[0]}", "missing value for placeholder {s[0]}"},
		{"x {nosuch[0]}", "missing value for placeholder {nosuch[0]}"},
		{"x {items[file]}", "expression variable file is not an integer"},
		{"x {file%.md}", "file%.md"},
		{"x {a/0}", "division by zero"},
		{"x {a%(index)}", "division by zero"},
		{"x {9223372036854775807+a}", "integer overflow"},
		{"x {_(file)}", "expression variable file is not an integer"},
		{"x {n:int=abc}", "invalid default"},
		{"x {m:enum(a,b)=c}", "invalid default"},
		{"{empty=}", "command word"},
	}
	for _, tt := range tests {
		t.Run(tt.tmpl, func(t *testing.T) {
			got, err := planArgs(t, tt.tmpl, vals)
			if err == nil {
				t.Fatalf("plan %q = %q, want an error containing %q", tt.tmpl, got, tt.want)
			}
			var te *Error
			if !errors.As(err, &te) {
				t.Errorf("plan %q: error %T is not an *Error", tt.tmpl, err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("plan %q: error %q, want it to contain %q", tt.tmpl, err, tt.want)
			}
		})
	}
}

// An error quotes a caller's input at most clipBytes long: a 300 KB
// placeholder name or an unterminated 200 KB template is named by its
// start and its size, not echoed whole (twice).
func TestErrorsClipTheInputTheyQuote(t *testing.T) {
	long := strings.Repeat("n", 300_000)
	_, err := planArgs(t, "x {"+long+"}", Values{})
	if err == nil || len(err.Error()) > 1000 || !strings.Contains(err.Error(), "…[+299800 bytes]") {
		t.Errorf("a missing long placeholder: %d bytes: %.300q", len(fmt.Sprint(err)), fmt.Sprint(err))
	}
	_, err = Parse("echo '" + strings.Repeat("é", 100_000))
	if err == nil || len(err.Error()) > 1000 || !strings.Contains(err.Error(), "unterminated") || !utf8.ValidString(err.Error()) {
		t.Errorf("an unterminated long template: %d bytes: %.300q", len(fmt.Sprint(err)), fmt.Sprint(err))
	}
}
