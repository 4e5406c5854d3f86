package template

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/pi-actors/pi-actors/internal/lazyre"
)

// expr is an integer arithmetic expression: integers, names (whose values
// must be integers), + - * / % with the usual precedence, unary minus and
// parentheses. Division truncates toward zero.
type expr struct {
	op          byte // 0 for a leaf
	num         int64
	name        string
	left, right *expr
}

var intRe = lazyre.New(`^-?\d+$`)

type exprParser struct {
	src  string
	toks []string
	pos  int
}

func parseExpr(src string) (*expr, error) {
	toks, err := tokenizeExpr(src)
	if err != nil {
		return nil, err
	}
	p := &exprParser{src: src, toks: toks}
	e, err := p.sum()
	if err != nil {
		return nil, err
	}
	if p.pos != len(p.toks) {
		return nil, fmt.Errorf("invalid expression %q: unexpected %q", src, p.toks[p.pos])
	}
	return e, nil
}

func tokenizeExpr(src string) ([]string, error) {
	var toks []string
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			i++
		case strings.IndexByte("+-*/%()", c) >= 0:
			toks = append(toks, string(c))
			i++
		case c >= '0' && c <= '9':
			j := i
			for j < len(src) && src[j] >= '0' && src[j] <= '9' {
				j++
			}
			toks = append(toks, src[i:j])
			i = j
		case c == '_' || (c|0x20) >= 'a' && (c|0x20) <= 'z':
			j := i
			for j < len(src) && (src[j] == '_' || (src[j]|0x20) >= 'a' && (src[j]|0x20) <= 'z' || src[j] >= '0' && src[j] <= '9') {
				j++
			}
			toks = append(toks, src[i:j])
			i = j
		default:
			return nil, fmt.Errorf("invalid expression %q: unexpected character %q", src, c)
		}
	}
	if len(toks) == 0 {
		return nil, fmt.Errorf("invalid expression %q: empty", src)
	}
	return toks, nil
}

func (p *exprParser) peek() string {
	if p.pos < len(p.toks) {
		return p.toks[p.pos]
	}
	return ""
}

func (p *exprParser) sum() (*expr, error) {
	l, err := p.product()
	if err != nil {
		return nil, err
	}
	for t := p.peek(); t == "+" || t == "-"; t = p.peek() {
		p.pos++
		r, err := p.product()
		if err != nil {
			return nil, err
		}
		l = &expr{op: t[0], left: l, right: r}
	}
	return l, nil
}

func (p *exprParser) product() (*expr, error) {
	l, err := p.unary()
	if err != nil {
		return nil, err
	}
	for t := p.peek(); t == "*" || t == "/" || t == "%"; t = p.peek() {
		p.pos++
		r, err := p.unary()
		if err != nil {
			return nil, err
		}
		l = &expr{op: t[0], left: l, right: r}
	}
	return l, nil
}

func (p *exprParser) unary() (*expr, error) {
	switch p.peek() {
	case "-":
		p.pos++
		e, err := p.unary()
		if err != nil {
			return nil, err
		}
		return &expr{op: '-', left: &expr{}, right: e}, nil
	case "+":
		p.pos++
		return p.unary()
	}
	return p.atom()
}

func (p *exprParser) atom() (*expr, error) {
	t := p.peek()
	switch {
	case t == "":
		return nil, fmt.Errorf("invalid expression %q: ends early", p.src)
	case t == "(":
		p.pos++
		e, err := p.sum()
		if err != nil {
			return nil, err
		}
		if p.peek() != ")" {
			return nil, fmt.Errorf("invalid expression %q: missing )", p.src)
		}
		p.pos++
		return e, nil
	case t[0] >= '0' && t[0] <= '9':
		p.pos++
		n, err := strconv.ParseInt(t, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("invalid expression %q: number %s out of range", p.src, t)
		}
		return &expr{num: n}, nil
	case t[0] == '_' || (t[0]|0x20) >= 'a' && (t[0]|0x20) <= 'z':
		p.pos++
		return &expr{name: t}, nil
	}
	return nil, fmt.Errorf("invalid expression %q: unexpected %q", p.src, t)
}

// errExprVar reports a variable that has no integer value.
type errExprVar struct {
	name  string
	value string
	found bool
}

func (e *errExprVar) Error() string {
	if !e.found {
		return fmt.Sprintf("expression variable %s has no value", e.name)
	}
	return fmt.Sprintf("expression variable %s is not an integer (%q)", e.name, e.value)
}

var errOverflow = errors.New("integer overflow")

// eval computes the expression; lookup returns a name's value as text.
func (e *expr) eval(lookup func(string) (string, bool, error)) (int64, error) {
	if e.op == 0 {
		if e.name == "" {
			return e.num, nil
		}
		v, ok, err := lookup(e.name)
		if err != nil {
			return 0, err
		}
		v = strings.TrimSpace(v)
		if !ok || !intRe.MatchString(v) {
			return 0, &errExprVar{name: e.name, value: v, found: ok}
		}
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return 0, &errExprVar{name: e.name, value: v, found: true}
		}
		return n, nil
	}
	l, err := e.left.eval(lookup)
	if err != nil {
		return 0, err
	}
	r, err := e.right.eval(lookup)
	if err != nil {
		return 0, err
	}
	switch e.op {
	case '+':
		s := l + r
		if (l > 0 && r > 0 && s < 0) || (l < 0 && r < 0 && s >= 0) {
			return 0, errOverflow
		}
		return s, nil
	case '-':
		s := l - r
		if (l >= 0 && r < 0 && s < 0) || (l < 0 && r > 0 && s >= 0) {
			return 0, errOverflow
		}
		return s, nil
	case '*':
		if l != 0 && r != 0 {
			if (l == -1 && r == math.MinInt64) || (r == -1 && l == math.MinInt64) {
				return 0, errOverflow
			}
			s := l * r
			if s/r != l {
				return 0, errOverflow
			}
			return s, nil
		}
		return 0, nil
	case '/', '%':
		if r == 0 {
			return 0, errors.New("division by zero")
		}
		if l == math.MinInt64 && r == -1 {
			return 0, errOverflow
		}
		if e.op == '/' {
			return l / r, nil
		}
		return l % r, nil
	}
	return 0, fmt.Errorf("unknown operator %q", e.op)
}

// formatPadded renders n zero-padded to width digits (sign not counted).
func formatPadded(n int64, width int) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	if neg {
		s = s[1:]
	}
	for len(s) < width {
		s = "0" + s
	}
	if neg {
		s = "-" + s
	}
	return s
}
