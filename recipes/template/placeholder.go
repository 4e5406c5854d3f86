package template

import (
	"strings"

	"github.com/pi-actors/pi-actors/internal/lazyre"
)

// A placeholder is the parsed content of one {…} in a word. Braces do not
// nest: only innermost {…} with non-empty content are placeholders, and a
// word is scanned once, so substituted text is never scanned again.
type placeholder struct {
	kind    phKind
	raw     string // content between the braces
	name    string
	typ     string // declared type for phName (may be "")
	def     string // inline default (phName) or fallback (phNullish)
	hasDef  bool
	negate  bool   // ternary on !name
	yes, no string // ternary branches
	index   *expr  // phIndex
	expr    *expr  // phExpr, and phName when the name may be arithmetic
	exprErr error  // parse error of an arithmetic form
	pad     int    // zero-padding width for _(expr); 0 = none
}

type phKind int

const (
	phLiteral phKind = iota // not a placeholder: kept as {raw}
	phName                  // name, name=default, name:type, name:type=default
	phNullish               // name??fallback
	phTernary               // [!]name?yes:no
	phIndex                 // name[expr]
	phExpr                  // arithmetic, optionally _(expr) padded
)

const namePattern = `[A-Za-z_][A-Za-z0-9_-]*`

var (
	nameRe     = lazyre.New(`^` + namePattern + `$`)
	nameFormRe = lazyre.New(`^(` + namePattern + `)(?::([A-Za-z]+|enum\([^)]*\)))?(?:=(.*))?$`)
	ternaryRe  = lazyre.New(`^([^?:]+)\?([^:]*):(.*)$`)
	indexRe    = lazyre.New(`^(` + namePattern + `)\[(.+)\]$`)
	padRe      = lazyre.New(`^(_{1,6})\((.+)\)$`)
	// Arithmetic is only attempted on content made of expression characters;
	// anything else (JSON, jq, awk programs) stays literal.
	exprCharsRe = lazyre.New(`^[A-Za-z0-9_\s()+\-*/%.]+$`)
)

// parsePlaceholder classifies the content of {…}. Content that matches no
// placeholder form (e.g. `{print $1}` in an awk program, or `{}` for find)
// stays literal.
func parsePlaceholder(content string) *placeholder {
	p := &placeholder{raw: content}
	if i := strings.Index(content, "??"); i > 0 && nameRe.MatchString(content[:i]) {
		p.kind, p.name, p.def, p.hasDef = phNullish, content[:i], content[i+2:], true
		return p
	}
	if m := ternaryRe.FindStringSubmatch(content); m != nil {
		cond := strings.TrimSpace(m[1])
		neg := strings.HasPrefix(cond, "!")
		if neg {
			cond = strings.TrimSpace(cond[1:])
		}
		if nameRe.MatchString(cond) {
			p.kind, p.name, p.negate, p.yes, p.no = phTernary, cond, neg, m[2], m[3]
			return p
		}
	}
	if m := nameFormRe.FindStringSubmatch(content); m != nil {
		p.kind, p.name, p.typ = phName, m[1], m[2]
		if strings.Contains(content, "=") {
			p.def, p.hasDef = m[3], true
		}
		// A bare name with '-' may be meant as arithmetic ({index-1}); keep
		// the parsed expression for when no value of that name exists.
		if !p.hasDef && p.typ == "" && strings.Contains(content, "-") {
			p.expr, p.exprErr = parseExpr(content)
		}
		return p
	}
	if m := indexRe.FindStringSubmatch(content); m != nil {
		p.kind, p.name = phIndex, m[1]
		p.index, p.exprErr = parseExpr(m[2])
		return p
	}
	if m := padRe.FindStringSubmatch(content); m != nil {
		p.kind, p.pad = phExpr, len(m[1])+1
		p.expr, p.exprErr = parseExpr(m[2])
		return p
	}
	if strings.ContainsAny(content, "()+-*/%") && exprCharsRe.MatchString(content) {
		p.kind = phExpr
		p.expr, p.exprErr = parseExpr(content)
		return p
	}
	p.kind = phLiteral
	return p
}

// segment is a piece of a word: literal text, or a placeholder.
type segment struct {
	lit string
	ph  *placeholder
}

// parseWord cuts a word into literal and placeholder segments.
func parseWord(w string) []segment {
	var segs []segment
	for {
		open, close := innermostBraces(w)
		if open < 0 {
			if w != "" {
				segs = append(segs, segment{lit: w})
			}
			return segs
		}
		if open > 0 {
			segs = append(segs, segment{lit: w[:open]})
		}
		ph := parsePlaceholder(w[open+1 : close])
		if ph.kind == phLiteral {
			segs = append(segs, segment{lit: w[open : close+1]})
		} else {
			segs = append(segs, segment{ph: ph})
		}
		w = w[close+1:]
	}
}

// innermostBraces finds the first {…} whose content is non-empty and holds
// no brace.
func innermostBraces(w string) (int, int) {
	open := -1
	for i := 0; i < len(w); i++ {
		switch w[i] {
		case '{':
			open = i
		case '}':
			if open >= 0 && i > open+1 {
				return open, i
			}
			open = -1
		}
	}
	return -1, -1
}

// hasPlaceholder reports whether s holds at least one placeholder.
func hasPlaceholder(s string) bool {
	for _, seg := range parseWord(s) {
		if seg.ph != nil {
			return true
		}
	}
	return false
}
