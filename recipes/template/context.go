package template

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
)

// ContextRecord is one line of the actor_context bundle: a recipe a run
// is composed of.
type ContextRecord struct {
	Alias      string         `json:"alias,omitempty"`
	Depth      int            `json:"depth"`
	File       string         `json:"file"`
	ImportPath []string       `json:"import_path"`
	Name       string         `json:"name"`
	Recipe     map[string]any `json:"recipe"`
	Role       string         `json:"role"`
}

// bundleHeader introduces the actor_context bundle appended to pi prompts.
const bundleHeader = "Recipe context for this actor, as JSONL: one record per recipe it is composed of; " +
	"the record with \"you_are_here\": true is the recipe node that launched you.\n" +
	"Read it as the surrounding workflow. Your task prompt above takes precedence."

// ContextHook returns the Runner hook that appends the actor_context
// bundle of records to the prompt of every `pi -p`/`pi --print` leaf,
// marking the record of the recipe node the leaf belongs to; nil when
// there are no records. A foreground call and a run's supervisor both
// use it.
func ContextHook(records []ContextRecord) func(*Step, []string) []string {
	if len(records) == 0 {
		return nil
	}
	return func(s *Step, argv []string) []string {
		i := promptIndex(argv)
		if i < 0 {
			return argv
		}
		out := append([]string{}, argv...)
		out[i] = argv[i] + "\n\n" + Bundle(records, s.Context)
		return out
	}
}

// promptIndex finds the prompt of a `pi` command in print mode
// (-p/--print): its last word, when that comes after the flag and is not a
// flag itself.
func promptIndex(argv []string) int {
	if len(argv) < 2 || filepath.Base(argv[0]) != "pi" {
		return -1
	}
	last := len(argv) - 1
	for _, a := range argv[1:last] {
		if (a == "-p" || a == "--print") && !strings.HasPrefix(argv[last], "-") {
			return last
		}
	}
	return -1
}

// Bundle renders the records as the fenced JSONL block, marking the record
// that matches the context marker (or the entry record without one).
func Bundle(records []ContextRecord, marker map[string]any) string {
	here := -1
	file, _ := marker["file"].(string)
	name, _ := marker["name"].(string)
	alias, _ := marker["alias"].(string)
	for i, r := range records {
		if marker != nil && (r.File == file || r.Name == name) && (alias == "" || r.Alias == alias) {
			here = i
			break
		}
	}
	if here < 0 {
		here = 0
	}
	var b strings.Builder
	b.WriteString(bundleHeader)
	b.WriteString("\n```jsonl\n")
	for i, r := range records {
		rec := map[string]any{"depth": r.Depth, "file": r.File, "import_path": r.ImportPath, "name": r.Name, "recipe": r.Recipe, "role": r.Role}
		if r.Alias != "" {
			rec["alias"] = r.Alias
		}
		if i == here {
			rec["you_are_here"] = true
			path, _ := marker["path"].(string)
			switch {
			case len(r.ImportPath) > 0:
				path = strings.Join(r.ImportPath, ".")
			case path == "":
				path = r.Name
			}
			rec["you_are_here_path"] = path
		}
		var line bytes.Buffer
		enc := json.NewEncoder(&line)
		enc.SetEscapeHTML(false)
		enc.Encode(rec)
		b.Write(line.Bytes()) // Encode ends it with its newline
	}
	b.WriteString("```")
	return b.String()
}
