package recipes

import (
	"path/filepath"
	"strings"

	"github.com/pi-actors/pi-actors/recipes/template"
)

// bundleHeader introduces the actor_context bundle appended to pi prompts.
const bundleHeader = "Recipe context for this actor, as JSONL: one record per recipe it is composed of; " +
	"the record with \"you_are_here\": true is the recipe node that launched you.\n" +
	"Read it as the surrounding workflow. Your task prompt above takes precedence."

// ContextHook returns the Runner hook that appends the actor_context bundle
// to the prompt of every `pi -p`/`pi --print` leaf, marking the record of
// the recipe node the leaf belongs to. It returns nil when the recipe
// turned the bundle off.
func (res *Resolved) ContextHook() func(*template.Step, []string) []string {
	if !res.Recipe.ActorContext || len(res.Records) == 0 {
		return nil
	}
	return func(s *template.Step, argv []string) []string {
		i := promptIndex(argv)
		if i < 0 {
			return argv
		}
		out := append([]string{}, argv...)
		out[i] = argv[i] + "\n\n" + res.Bundle(s.Context)
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
func (res *Resolved) Bundle(marker map[string]any) string {
	here := -1
	file, _ := marker["file"].(string)
	name, _ := marker["name"].(string)
	alias, _ := marker["alias"].(string)
	for i, r := range res.Records {
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
	for i, r := range res.Records {
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
		b.Write(jsonBytes(rec))
		b.WriteByte('\n')
	}
	b.WriteString("```")
	return b.String()
}
