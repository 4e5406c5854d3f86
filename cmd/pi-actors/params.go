package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/pi-actors/pi-actors/internal/lazyre"

	"github.com/pi-actors/pi-actors/recipes/template"
	"github.com/pi-actors/pi-actors/verbs"
)

// request is one parsed invocation: a verb, its parameters and flags.
type request struct {
	verb    string
	words   []string       // positional words, in order
	params  map[string]any // key=value (string) and key:=JSON values
	order   []string       // parameter names in the order given
	batch   []map[string]any
	json    bool
	text    bool
	verbose bool
	help    bool
	// flags are the verb's own flags that were given (--dry-run, --stdin).
	flags map[string]bool
	// stdinKeys are the parameters the stdin object gave.
	stdinKeys map[string]bool
	// item is a batch item's place in its batch, from 1 (0: no batch):
	// an item's error in text names it.
	item int
}

var keyRe = lazyre.New(`^[A-Za-z_][A-Za-z0-9_.-]*$`)

// commonFlagSet are the flags every verb takes; a verb declares its own
// besides (they are recorded in request.flags).
var commonFlagSet = map[string]func(*request){
	"--json":    func(r *request) { r.json = true },
	"--text":    func(r *request) { r.text = true },
	"--verbose": func(r *request) { r.verbose = true },
	"--help":    func(r *request) { r.help = true },
	"-h":        func(r *request) { r.help = true },
}

var commonFlags = []string{"--json", "--verbose", "--help", "-h"}

// parseArgs reads `<verb> [key=value | key:=JSON | word ...] [flags]`.
// Flags may stand anywhere; `--` ends flag parsing. When the verb takes a
// word (exec's template, call's recipe), the first non-flag word is that
// word even when it contains '=', unless it is written word=…. A lone `-` reads parameters from stdin: one JSON object, or a
// JSON array or JSON lines of objects for a batch.
func parseArgs(args []string, stdin io.Reader, verbFlags []string, word string) (*request, error) {
	allowed := append(append([]string{}, commonFlags...), verbFlags...)
	r := &request{params: map[string]any{}, flags: map[string]bool{}}
	if len(args) == 0 {
		return r, nil
	}
	r.verb = args[0]
	rest := args[1:]
	literal, stdinParams := false, false
	for _, a := range rest {
		if !literal {
			if a == "--" {
				literal = true
				continue
			}
			if set, ok := commonFlagSet[a]; ok && slices.Contains(allowed, a) {
				set(r)
				continue
			}
			if slices.Contains(verbFlags, a) && !strings.HasSuffix(a, "=") {
				r.flags[a] = true
				continue
			}
			if name, val, ok := strings.Cut(a, "="); ok && strings.HasPrefix(a, "--") && slices.Contains(verbFlags, name+"=") {
				// A value flag (--client=claude) is the parameter client.
				if err := r.give(strings.TrimPrefix(name, "--"), val, false); err != nil {
					return nil, err
				}
				continue
			}
			if strings.HasPrefix(a, "--") || a == "-h" {
				return nil, usagef("unknown flag %s for %s (flags: %s)", a, r.verb, strings.Join(slices.DeleteFunc(slices.Clone(allowed), func(f string) bool { return f == "-h" || f == "--text" }), ", "))
			}
			if a == "-" {
				if stdinParams {
					return nil, usagef("- given twice: parameters are read from stdin once")
				}
				stdinParams = true
				if err := r.readStdin(stdin); err != nil {
					return nil, err
				}
				continue
			}
		}
		if word != "" && len(r.words) == 0 && len(r.params) == 0 && !strings.HasPrefix(a, word+"=") && !strings.HasPrefix(a, word+":=") {
			// The first word is the verb's word: exec's template whatever
			// it holds (x=1 included); any other verb's (a run id, an
			// action, a recipe: never a key=value) unless it is one, so
			// parameters may stand before it (logs lines=5 a1).
			if _, _, _, param := splitParam(a); word == "template" || !param {
				r.words = append(r.words, a)
				continue
			}
		}
		key, val, isJSON, ok := splitParam(a)
		if !ok {
			r.words = append(r.words, a)
			continue
		}
		if isJSON {
			v, err := template.DecodeJSON([]byte(val))
			if err != nil {
				return nil, verbs.Invalidf("parameter %s: malformed JSON after := (%v); write strings as %s=value", key, err, key)
			}
			if err := r.give(key, v, false); err != nil {
				return nil, err
			}
		} else if err := r.give(key, val, false); err != nil {
			return nil, err
		}
	}
	if r.flags["--stdin"] && stdinParams {
		return nil, usagef("--stdin and - both want stdin: pass parameters as words, or give the command's input another way")
	}
	return r, nil
}

// give sets a parameter the caller gave once: the same name twice on
// the command line, or on the command line and in the stdin object, is
// an error (which one was meant?). A batch's items are set over the
// command line's parameters instead (single).
func (r *request) give(key string, v any, fromStdin bool) error {
	if _, dup := r.params[key]; dup {
		if fromStdin || r.stdinKeys[key] {
			return usagef("parameter %s is given both on stdin and on the command line; give it once", key)
		}
		return usagef("parameter %s is given twice; give it once", key)
	}
	if fromStdin {
		if r.stdinKeys == nil {
			r.stdinKeys = map[string]bool{}
		}
		r.stdinKeys[key] = true
	}
	r.set(key, v)
	return nil
}

func (r *request) set(key string, v any) {
	if _, ok := r.params[key]; !ok {
		r.order = append(r.order, key)
	}
	r.params[key] = v
}

// splitParam splits key=value or key:=JSON; ok is false for other words.
func splitParam(a string) (key, val string, isJSON, ok bool) {
	i := strings.IndexByte(a, '=')
	if i <= 0 {
		return "", "", false, false
	}
	key, val = a[:i], a[i+1:]
	if strings.HasSuffix(key, ":") {
		key, isJSON = key[:len(key)-1], true
	}
	if !keyRe.MatchString(key) {
		return "", "", false, false
	}
	return key, val, isJSON, true
}

// readStdin reads one JSON object (merged into the parameters) or several
// (a batch: a JSON array, or one object per line).
func (r *request) readStdin(in io.Reader) error {
	data, err := io.ReadAll(in)
	if err != nil {
		return fmt.Errorf("read parameters from stdin: %w", err)
	}
	data = bytes.TrimSpace(data)
	if len(data) == 0 {
		return verbs.Invalidf("stdin: expected a JSON object of parameters (or an array / JSON lines for a batch), got nothing")
	}
	if data[0] == '[' {
		var items []json.RawMessage
		if err := json.Unmarshal(data, &items); err != nil {
			return verbs.Invalidf("stdin: malformed JSON array: %v", err)
		}
		for i, item := range items {
			v, err := template.DecodeJSON(item)
			obj, ok := v.(map[string]any)
			if err != nil || !ok {
				return verbs.Invalidf("stdin: batch item %d is not a JSON object", i+1) // 1-based, as a failed item is named
			}
			if k := duplicateKey(item); k != "" {
				return usagef("stdin: batch item %d gives parameter %s twice; give it once", i+1, k)
			}
			r.batch = append(r.batch, obj)
		}
		if len(r.batch) == 0 {
			return verbs.Invalidf("stdin: the batch array is empty")
		}
		return nil
	}
	var objs []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 64<<20)
	whole, wholeErr := template.DecodeJSON(data)
	if wholeErr == nil {
		obj, ok := whole.(map[string]any)
		if !ok {
			return verbs.Invalidf("stdin: expected a JSON object of parameters, got %s", template.CompactJSON(whole))
		}
		if k := duplicateKey(data); k != "" {
			return usagef("stdin: parameter %s is given twice in the object; give it once", k)
		}
		objs = append(objs, obj)
	} else {
		line := 0
		for sc.Scan() {
			line++
			text := bytes.TrimSpace(sc.Bytes())
			if len(text) == 0 {
				continue
			}
			v, err := template.DecodeJSON(text)
			if err != nil {
				return verbs.Invalidf("stdin line %d: malformed JSON: %v", line, err)
			}
			obj, ok := v.(map[string]any)
			if !ok {
				return verbs.Invalidf("stdin line %d: expected a JSON object", line)
			}
			if k := duplicateKey(text); k != "" {
				return usagef("stdin line %d: parameter %s is given twice; give it once", line, k)
			}
			objs = append(objs, obj)
		}
		if err := sc.Err(); err != nil {
			return verbs.Invalidf("stdin: %v", err)
		}
	}
	if len(objs) == 1 {
		for k, v := range objs[0] {
			if err := r.give(k, v, true); err != nil {
				return err
			}
		}
		return nil
	}
	r.batch = objs
	return nil
}

// duplicateKey is the first key a JSON object gives twice ("" when
// none): decoding keeps the last, and the first would be dropped unseen.
func duplicateKey(obj []byte) string {
	dec := json.NewDecoder(bytes.NewReader(obj))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return ""
	}
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		k, ok := t.(string)
		if err != nil || !ok {
			return ""
		}
		if seen[k] {
			return k
		}
		seen[k] = true
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return ""
		}
	}
	return ""
}

// single returns the requests this invocation stands for: itself, or one
// per batch item (each item's parameters over the command line's).
func (r *request) single() []*request {
	if len(r.batch) == 0 {
		return []*request{r}
	}
	out := make([]*request, len(r.batch))
	for i, obj := range r.batch {
		c := *r
		c.batch = nil
		c.flags = r.flags
		c.params = map[string]any{}
		c.order = nil
		for _, k := range r.order {
			c.set(k, r.params[k])
		}
		for k, v := range obj {
			c.set(k, v)
		}
		c.item = i + 1
		out[i] = &c
	}
	return out
}
