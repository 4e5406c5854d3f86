package workflows

import (
	"errors"
	"io"
	"os"
	"strconv"
	"strings"

	"github.com/pi-actors/pi-actors/internal/lazyre"
)

// OutputMax bounds {upstream.<node>.output}: the last 64 KiB of the
// dependency's stdout.
const OutputMax = 64 << 10

// Upstream is what a node may use of a dependency: its bounded stdout
// tail and the file that holds all of it.
type Upstream struct {
	Output     string
	OutputFile string
}

// upstreamRe matches {upstream.<node>.output} and
// {upstream.<node>.output_file} (node ids may contain dots: the field is
// the last part).
var upstreamRe = lazyre.New(`\{upstream\.([A-Za-z0-9_.-]+)\.(output_file|output)\}`)

// refs lists the upstream references in every string of v.
func refs(v any, out map[string]bool) {
	switch x := v.(type) {
	case string:
		for _, m := range upstreamRe.FindAllStringSubmatch(x, -1) {
			out[m[1]] = true
		}
	case []any:
		for _, e := range x {
			refs(e, out)
		}
	case map[string]any:
		for _, e := range x {
			refs(e, out)
		}
	}
}

// checkUpstream checks that a node's upstream references name nodes it
// depends on (directly or not): only their output exists when it starts.
func (w *Workflow) checkUpstream(n *Node) error {
	used := map[string]bool{}
	refs(n.Spawn, used)
	refs(n.Prompt, used)
	for _, id := range upstreamOutputs(n) {
		used[id] = true
	}
	if len(used) == 0 {
		return nil
	}
	anc := w.Ancestors(n)
	for _, id := range sortedSet(used) {
		if !anc[id] {
			return invalid(n.ID, "upstream."+id, "%s is not among %s's dependencies (depends_on): its output does not exist when %s starts", id, n.ID, n.ID)
		}
	}
	return nil
}

// placeholder is the template placeholder an upstream reference becomes
// in a node's template: the template engine substitutes it per word
// after splitting (a value with spaces stays one argument).
func placeholder(index int, field string) string {
	return "upstream_" + strconv.Itoa(index) + "_" + field
}

// rewriteTemplate turns each {upstream.<node>.<field>} of a template into
// its placeholder and adds the value it stands for.
func (w *Workflow) rewriteTemplate(v any, up func(string) Upstream, values map[string]any) any {
	switch x := v.(type) {
	case string:
		return upstreamRe.ReplaceAllStringFunc(x, func(m string) string {
			sub := upstreamRe.FindStringSubmatch(m)
			dep := w.byID[sub[1]]
			if dep == nil {
				return m
			}
			name := placeholder(dep.Index, sub[2])
			u := up(dep.ID)
			values[name] = u.Output
			if sub[2] == "output_file" {
				values[name] = u.OutputFile
			}
			return "{" + name + "}"
		})
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = w.rewriteTemplate(e, up, values)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = w.rewriteTemplate(e, up, values)
		}
		return out
	}
	return v
}

// expandText replaces upstream references in a literal string (a value,
// a prompt) with what they stand for.
func (w *Workflow) expandText(s string, up func(string) Upstream) string {
	return upstreamRe.ReplaceAllStringFunc(s, func(m string) string {
		sub := upstreamRe.FindStringSubmatch(m)
		if w.byID[sub[1]] == nil {
			return m
		}
		u := up(sub[1])
		if sub[2] == "output_file" {
			return u.OutputFile
		}
		return u.Output
	})
}

func (w *Workflow) expandValues(v any, up func(string) Upstream) any {
	switch x := v.(type) {
	case string:
		return w.expandText(x, up)
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = w.expandValues(e, up)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = w.expandValues(e, up)
		}
		return out
	}
	return v
}

// ReadOutput reads the last OutputMax bytes of a stdout log — its files
// oldest first, the current one last, read back across them (starting
// at a line when cut) — without its trailing newlines; "" when there is
// none.
func ReadOutput(files ...string) string {
	var out []byte // the newest bytes, in order
	cut := false
	for i := len(files) - 1; i >= 0 && len(out) < OutputMax; i-- {
		b, more := readTail(files[i], OutputMax-len(out))
		out = append(b, out...)
		cut = more || i > 0 && len(out) >= OutputMax
	}
	s := string(out)
	if cut {
		if i := strings.IndexByte(s, '\n'); i >= 0 && i < len(s)-1 {
			s = s[i+1:]
		}
	}
	return strings.TrimRight(s, "\n")
}

// readTail is the last n bytes of a file, and whether it holds more.
func readTail(path string, n int) ([]byte, bool) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, false
	}
	off := max(0, st.Size()-int64(n))
	buf := make([]byte, st.Size()-off)
	k, err := f.ReadAt(buf, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, false
	}
	return buf[:k], off > 0
}
