// Package lazyre compiles a regular expression the first time it is used,
// not at program start: the CLI and every run supervisor start often and
// most runs never touch most patterns.
package lazyre

import (
	"regexp"
	"sync"
)

// Regexp is a pattern compiled on first use (and then like
// *regexp.Regexp). A bad pattern panics on first use, like MustCompile.
type Regexp struct {
	src  string
	once sync.Once
	re   *regexp.Regexp
	// A whole-string character-class pattern (see parseClasses) is
	// matched by MatchString without compiling.
	classOnce sync.Once
	classes   *classes
}

// New returns a lazily compiled pattern.
func New(src string) *Regexp { return &Regexp{src: src} }

func (r *Regexp) get() *regexp.Regexp {
	r.once.Do(func() { r.re = regexp.MustCompile(r.src) })
	return r.re
}

// MatchString is regexp.Regexp.MatchString.
func (r *Regexp) MatchString(s string) bool {
	r.classOnce.Do(func() { r.classes = parseClasses(r.src) })
	if r.classes != nil {
		return r.classes.match(s)
	}
	return r.get().MatchString(s)
}

// FindStringSubmatch is regexp.Regexp.FindStringSubmatch.
func (r *Regexp) FindStringSubmatch(s string) []string { return r.get().FindStringSubmatch(s) }

// FindAllStringSubmatch is regexp.Regexp.FindAllStringSubmatch.
func (r *Regexp) FindAllStringSubmatch(s string, n int) [][]string {
	return r.get().FindAllStringSubmatch(s, n)
}

// FindAllString is regexp.Regexp.FindAllString.
func (r *Regexp) FindAllString(s string, n int) []string { return r.get().FindAllString(s, n) }

// FindStringSubmatchIndex is regexp.Regexp.FindStringSubmatchIndex.
func (r *Regexp) FindStringSubmatchIndex(s string) []int { return r.get().FindStringSubmatchIndex(s) }

// ReplaceAllString is regexp.Regexp.ReplaceAllString.
func (r *Regexp) ReplaceAllString(src, repl string) string {
	return r.get().ReplaceAllString(src, repl)
}

// ReplaceAll is regexp.Regexp.ReplaceAll.
func (r *Regexp) ReplaceAll(src, repl []byte) []byte { return r.get().ReplaceAll(src, repl) }

// ReplaceAllStringFunc is regexp.Regexp.ReplaceAllStringFunc.
func (r *Regexp) ReplaceAllStringFunc(src string, repl func(string) string) string {
	return r.get().ReplaceAllStringFunc(src, repl)
}
