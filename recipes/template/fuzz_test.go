package template

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"os"
	"os/exec"
	"reflect"
	"strings"
	"testing"
	"time"
)

// Plain `go test` runs every fuzzer below on its seed corpus (f.Add plus
// testdata/fuzz/<FuzzName>) only, deterministically; `-fuzz` explores.

// ---------------------------------------------------------------------------
// FuzzSplitShell: Split against /bin/sh.

// shellSafeChars are the characters for which Split must agree with sh word
// splitting: no expansions, globbing, redirections or operators can occur.
const shellSafeChars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 \t'\"\\-./=,:@%+_"

// shellComparable reports whether in only uses shellSafeChars (so no
// newline) and no backslash escapes a character outside that set.
func shellComparable(in string) bool {
	for i := 0; i < len(in); i++ {
		if strings.IndexByte(shellSafeChars, in[i]) < 0 {
			return false
		}
		if in[i] == '\\' && i+1 < len(in) && strings.IndexByte(shellSafeChars, in[i+1]) < 0 {
			return false
		}
	}
	return true
}

// shWords splits in with /bin/sh. The input is placed at the very end of the
// script, as the arguments of a function that prints each of its arguments
// NUL-terminated: equivalent to `set -- <input>; for a in "$@"; …`, except
// that a trailing backslash in the input stays at the end of the script
// (after `set -- a\` it would escape the following `;`). ok is false when
// sh exits non-zero (a syntax error such as an unterminated quote).
func shWords(t *testing.T, in string) (words []string, ok bool, stderr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	script := `f() { for a in "$@"; do printf '%s\0' "$a"; done; }; f ` + in
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", script)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("/bin/sh timed out on %q", in)
	}
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("running /bin/sh: %v", err)
		}
		return nil, false, errb.String()
	}
	b := out.Bytes()
	for len(b) > 0 {
		i := bytes.IndexByte(b, 0)
		if i < 0 {
			t.Fatalf("/bin/sh output %q is not NUL-terminated", out.Bytes())
		}
		words = append(words, string(b[:i]))
		b = b[i+1:]
	}
	return words, true, ""
}

var splitShellSeeds = []string{
	"",
	"a",
	"a b\tc",
	"  lead  trail  ",
	`'a b'`,
	`"a b"`,
	`'a\b'`,
	`'a\'`,
	`"a\\b"`,
	`"a\"b"`,
	`"a\b"`,
	`"\'"`,
	`"\ "`,
	`a\ b`,
	`\'\"`,
	`a\\\ b`,
	`a\`,
	`\`,
	`a\\`,
	`a \\\`,
	`''`,
	`""`,
	`a '' "" b`,
	`''""''`,
	`a'b'"c"`,
	`a"b c"d`,
	`"'"'"'`,
	`'`,
	`"`,
	`"a\"`,
	`'a'"`,
	`-x --y=z -- -e`,
	`@a%b+c,d:e/f.g_h`,
	`\-n "\-n" '\-n'`,
}

func FuzzSplitShell(f *testing.F) {
	if _, err := os.Stat("/bin/sh"); err != nil {
		f.Skip("no /bin/sh")
	}
	for _, s := range splitShellSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		if !shellComparable(in) {
			return
		}
		got, err := Split(in)
		want, ok, stderr := shWords(t, in)
		switch {
		case !ok && err == nil:
			t.Fatalf("Split(%q) = %q, but sh fails: %s", in, got, stderr)
		case ok && err != nil:
			t.Fatalf("Split(%q) error %v, but sh gives %q", in, err, want)
		case ok && !(len(got) == 0 && len(want) == 0) && !reflect.DeepEqual(got, want):
			t.Fatalf("Split(%q) = %q, sh gives %q", in, got, want)
		}
	})
}

// ---------------------------------------------------------------------------
// FuzzParseWord: the placeholder scanner and the expression parser.

var exprFuzzValues = map[string]string{
	"a":     "3",
	"b":     "-7",
	"z":     "0",
	"sp":    " 12 ",
	"big":   "9223372036854775807",
	"small": "-9223372036854775808",
	"huge":  "99999999999999999999",
	"s":     "x",
	"f":     "1.5",
}

func exprFuzzLookup(name string) (string, bool, error) {
	v, ok := exprFuzzValues[name]
	return v, ok, nil
}

// bigEval evaluates e exactly. inRange is false when any intermediate
// value does not fit an int64; ok is false on division by zero or a
// variable without an integer value.
func bigEval(e *expr) (v *big.Int, inRange, ok bool) {
	if e.op == 0 {
		if e.name == "" {
			return big.NewInt(e.num), true, true
		}
		s, found := exprFuzzValues[e.name]
		s = strings.TrimSpace(s)
		if !found || !intRe.MatchString(s) {
			return nil, true, false
		}
		n, _ := new(big.Int).SetString(s, 10)
		return n, n.IsInt64(), true
	}
	l, lin, lok := bigEval(e.left)
	if !lok {
		return nil, lin, false
	}
	r, rin, rok := bigEval(e.right)
	if !rok {
		return nil, lin && rin, false
	}
	inRange = lin && rin
	v = new(big.Int)
	switch e.op {
	case '+':
		v.Add(l, r)
	case '-':
		v.Sub(l, r)
	case '*':
		v.Mul(l, r)
	case '/', '%':
		if r.Sign() == 0 {
			return nil, inRange, false
		}
		if e.op == '/' {
			v.Quo(l, r) // truncates toward zero
		} else {
			v.Rem(l, r) // sign of the dividend
		}
	}
	return v, inRange && v.IsInt64(), true
}

// minModMinusOne reports whether e contains MinInt64 % -1, which the engine
// reports as an overflow although the result (0) fits.
func minModMinusOne(e *expr) bool {
	if e == nil || e.op == 0 {
		return false
	}
	if e.op == '%' {
		l, _, lok := bigEval(e.left)
		r, _, rok := bigEval(e.right)
		if lok && rok && l.IsInt64() && l.Int64() == math.MinInt64 && r.IsInt64() && r.Int64() == -1 {
			return true
		}
	}
	return minModMinusOne(e.left) || minModMinusOne(e.right)
}

// checkExpr compares the engine's evaluation of e with exact arithmetic.
func checkExpr(t *testing.T, src string, e *expr) {
	t.Helper()
	got, err := e.eval(exprFuzzLookup)
	want, inRange, ok := bigEval(e)
	var ve *errExprVar
	switch {
	case err == nil && !ok:
		t.Fatalf("eval(%q) = %d, want an error", src, got)
	case err == nil && !inRange:
		t.Fatalf("eval(%q) = %d, but an intermediate value overflows int64 (exact %v)", src, got, want)
	case err == nil && want.Int64() != got:
		t.Fatalf("eval(%q) = %d, want %v", src, got, want)
	case errors.Is(err, errOverflow):
		if ok && inRange && !minModMinusOne(e) {
			t.Fatalf("eval(%q): overflow error, but the exact result %v and every intermediate fit int64", src, want)
		}
	case errors.As(err, &ve), err != nil && err.Error() == "division by zero":
		if ok && inRange {
			t.Fatalf("eval(%q): error %v, want %v", src, err, want)
		}
	case err != nil:
		t.Fatalf("eval(%q): unexpected error %v", src, err)
	}
}

func checkPlaceholder(t *testing.T, content string, p *placeholder) {
	t.Helper()
	if p.raw != content {
		t.Fatalf("parsePlaceholder(%q).raw = %q", content, p.raw)
	}
	switch p.kind {
	case phLiteral:
	case phName, phNullish, phTernary, phIndex:
		if !nameRe.MatchString(p.name) {
			t.Fatalf("parsePlaceholder(%q): kind %d with invalid name %q", content, p.kind, p.name)
		}
	case phExpr:
		if p.pad != 0 && (p.pad < 2 || p.pad > 7) {
			t.Fatalf("parsePlaceholder(%q): pad %d", content, p.pad)
		}
	default:
		t.Fatalf("parsePlaceholder(%q): unknown kind %d", content, p.kind)
	}
	switch p.kind {
	case phIndex:
		if (p.index == nil) == (p.exprErr == nil) {
			t.Fatalf("parsePlaceholder(%q): index %v, exprErr %v", content, p.index, p.exprErr)
		}
		if p.index != nil {
			checkExpr(t, content, p.index)
		}
	case phExpr:
		if (p.expr == nil) == (p.exprErr == nil) {
			t.Fatalf("parsePlaceholder(%q): expr %v, exprErr %v", content, p.expr, p.exprErr)
		}
		if p.expr != nil {
			checkExpr(t, content, p.expr)
			formatPadded(math.MinInt64, p.pad)
		}
	case phName:
		if p.expr != nil {
			checkExpr(t, content, p.expr)
		}
	}
}

func FuzzParseWord(f *testing.F) {
	for _, s := range []string{
		"", "{}", "{x}", "{{x}}", "}{", "{a}{b}", "--file={file}", "${x}",
		"page{_(index+1)}.html", "{a?--f={b}:}", "{print $1}", `{"a":1}`,
		"{a: .b}", "{http://x}", "{name=default}", "{n:int=3}",
		"{m:enum(a,b)=b}", "{a??fb}", "{a??}", "{cond?y:n}", "{!cond?y:n}",
		"{cond?:}", "{items[0]}", "{items[index+1]}", "{__(n)}", "{index+1}",
		"{a-b}", "{(a*b)%7}", "{-a}", "{big+1}", "{small-1}", "{--small}",
		"{small/-1}", "{small%-1}", "{big*2}", "{huge}", "{s+1}", "{f*1}",
		"{sp*sp}", "{9223372036854775808}", "{1/0}", "{1%z}", "{_______(1)}",
		"{((((1))))}", "{1 2}", "{a.b}", "{file%.md}", "x{", "}x", "{é}",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		var b strings.Builder
		for _, seg := range parseWord(in) {
			if seg.ph == nil {
				if seg.lit == "" {
					t.Fatalf("parseWord(%q): empty literal segment", in)
				}
				b.WriteString(seg.lit)
				continue
			}
			if seg.lit != "" {
				t.Fatalf("parseWord(%q): segment has both a placeholder and a literal", in)
			}
			if seg.ph.kind == phLiteral {
				t.Fatalf("parseWord(%q): literal placeholder {%s} not kept as text", in, seg.ph.raw)
			}
			if seg.ph.raw == "" || strings.ContainsAny(seg.ph.raw, "{}") {
				t.Fatalf("parseWord(%q): placeholder content %q is empty or holds a brace", in, seg.ph.raw)
			}
			checkPlaceholder(t, seg.ph.raw, seg.ph)
			b.WriteString("{" + seg.ph.raw + "}")
		}
		if b.String() != in {
			t.Fatalf("parseWord(%q) re-joins to %q", in, b.String())
		}
		checkPlaceholder(t, in, parsePlaceholder(in))
		if e, err := parseExpr(in); err == nil {
			checkExpr(t, in, e)
		}
	})
}

// ---------------------------------------------------------------------------
// FuzzResolve: planning never panics and fails only with *Error.

func fuzzValues() Values {
	return Values{
		"repo":   "/r",
		"n":      json.Number("3"),
		"neg":    "-5",
		"big":    json.Number("9223372036854775807"),
		"float":  json.Number("1.5"),
		"text":   "hello world",
		"file":   "a.md",
		"empty":  "",
		"nul":    nil,
		"flag":   false,
		"yes":    true,
		"items":  []any{"a", "b c", json.Number("1"), nil, []any{"x"}},
		"arrstr": `["x","y"]`,
		"obj":    map[string]any{"k": "v", "n": json.Number("2")},
	}
}

func fuzzDefaults() map[string]any {
	return map[string]any{
		"dir":     "{repo}/docs",
		"chain":   "{dir}/x",
		"pick":    "{items[1]}",
		"n2":      "{n+1}",
		"loop":    "{loop}",
		"ping":    "{pong}",
		"pong":    "{ping}",
		"partial": "{nosuch}/y",
		"typed":   json.Number("7"),
		"list":    []any{"p", "q"},
	}
}

func FuzzResolve(f *testing.F) {
	for _, s := range []string{
		"echo {dir}", "x {chain}", "x {pick}", "x {n2}", "x {loop}",
		"x {ping}", "x {partial}", "x {items[n-2]}", "x {items[9]}",
		"x {items[-1]}", "x {_(n*2)}", "{text} {nosuch=d}",
		"x {flag?y:n} {!flag?y:n} {yes?:}", "x {empty??fb} {nul??}",
		"x {obj} {items} {list}", "x {arrstr[1]}", "x {big+1}", "x {n/0}",
		"x {file%.md}", "x {_index} {__next} {repeat} {_prev}",
		"x '{print $1}' {} '{a: .b}'", "x ${repo}", "{empty}", "'' a",
		"x {n:int=2} {mode:enum(a,b)=b}", "x {n:bool}", "x {a-b} {n-1}",
		"x {index-1} {_(index+1)}", `"x {n}"`, "x {neg*neg} {nul}",
		"~ {repo}", "~/bin/x", "./rel {typed}", "{float:int}", "x 'a",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		graphs := []any{
			s,
			map[string]any{"defaults": fuzzDefaults(), "template": s},
			map[string]any{"repeat": json.Number("2"), "defaults": fuzzDefaults(), "template": s},
			map[string]any{"repeat": s, "defaults": fuzzDefaults(), "template": "x {index}"},
			map[string]any{"label": s, "when": s, "defaults": fuzzDefaults(), "template": "x"},
			map[string]any{"output": s, "defaults": fuzzDefaults(), "template": "x"},
			map[string]any{"timeout": s, "delay": s, "retry": s, "defaults": fuzzDefaults(), "template": "x"},
			map[string]any{"args": s, "template": []any{"x {n}", map[string]any{"defaults": fuzzDefaults(), "template": s}}},
		}
		for _, g := range graphs {
			node, err := Parse(g)
			if err != nil {
				requireTemplateError(t, "Parse", g, err)
				continue
			}
			plan, err := NewPlan(node, fuzzValues(), Options{Dir: "/nonexistent/dir", Home: "/nonexistent/home", MaxLeaves: 100})
			if err != nil {
				requireTemplateError(t, "NewPlan", g, err)
				continue
			}
			checkSteps(t, g, plan.Root)
		}
	})
}

func requireTemplateError(t *testing.T, what string, g any, err error) {
	t.Helper()
	var te *Error
	if !errors.As(err, &te) {
		t.Fatalf("%s(%s): error %T %v is not an *Error", what, CompactJSON(g), err, err)
	}
	if te.Msg == "" {
		t.Fatalf("%s(%s): *Error with an empty message", what, CompactJSON(g))
	}
}

func checkSteps(t *testing.T, g any, s *Step) {
	t.Helper()
	if s == nil {
		t.Fatalf("plan of %s has a nil step", CompactJSON(g))
	}
	if s.Kind == StepLeaf {
		if len(s.Argv) == 0 || s.Argv[0] == "" {
			t.Fatalf("plan of %s: leaf %s has argv %q", CompactJSON(g), s.Path, s.Argv)
		}
		for _, a := range s.Argv[1:] {
			if a == "" {
				t.Fatalf("plan of %s: leaf %s keeps an empty argument: %q", CompactJSON(g), s.Path, s.Argv)
			}
		}
	}
	if s.Retry < 0 || s.Delay < 0 || s.Timeout < 0 {
		t.Fatalf("plan of %s: step %s has retry %d delay %v timeout %v", CompactJSON(g), s.Path, s.Retry, s.Delay, s.Timeout)
	}
	for _, c := range s.Children {
		checkSteps(t, g, c)
	}
	if s.Recover != nil {
		checkSteps(t, g, s.Recover)
	}
}
