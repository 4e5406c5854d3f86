package recipes

import (
	"errors"
	"testing"

	"github.com/pi-actors/pi-actors/recipes/template"
)

var markdownSeeds = []string{
	// valid
	"---\ndescription: d\nargs: who\n---\n```template\necho hi {who}\n```\n",
	"---\ntemplate: echo front\n---\n",
	"---\ndescription: d\n---\n```bash\necho skipped\n```\n```json\n{\"args\": [\"a\"], \"template\": [\"echo {a}\", \"cat\"]}\n```\n",
	"---\ndefaults:\n  - model: m\n  - n: 3\n---\n```recipe\n{\"template\": {\"parallel\": true, \"template\": [\"echo {model}\", \"echo {n}\"]}}\n```\n",
	"---\nimports:\n  p: subagent-prompt\n---\n```command-template\n{\"name\": \"p\"}\n```\n",
	"---\nvalues:\n  k: v\nasync: true\nactor_context: off\n---\n~~~template\n[\"echo a\"]\n~~~\n",
	"---\r\ndescription: crlf\r\n---\r\n```template\r\necho crlf\r\n```\r\n",
	"---\nmailbox:\n  accepts:\n    - control.kill\n    - type: chat.message\n---\n```template\necho m\n```\n",
	// broken
	"",
	"---",
	"---\n",
	"# no frontmatter\n",
	"---\ntemplate: echo\n",
	"---\ndescription: nothing\n---\n",
	"---\n: bad yaml [\n---\n```template\necho\n```\n",
	"---\n- a list\n---\n```template\necho\n```\n",
	"---\ndescription: d\n---\n```json\n{not json\n```\n",
	"---\ndescription: d\n---\n```template\n{\"template\": 3}\n```\n",
	"---\ndescription: d\n---\n```template\n",
	"---\nanchors: &a [*a]\n---\n```template\necho\n```\n",
	"---\ntemplate: {cmd} x\n---\n",
	"---\nretire_when: never\n---\n```template\necho\n```\n",
	"---\nimports:\n  \"bad alias\": x\n---\n```template\necho\n```\n",
	"---\nartifacts:\n  a: {kind: x}\n---\n```template\necho\n```\n",
	"---\ndisabled: \"yes\"\n---\n```template\necho\n```\n",
	"---\ntemplate: \"\"\n---\n",
	"---\ntemplate: []\n---\n",
	"---\n? complex key\n: value\ntemplate: echo\n---\n",
	"---\ndefaults:\n  - just a string\n  - k=v\n  - 7\n---\n```template\necho\n```\n",
	"---\n\xff\xfe\n---\n```template\necho\n```\n",
}

// FuzzMarkdown: Parse never panics; it returns a recipe with a template, or
// an error wrapping ErrInvalid. A recipe without imports also resolves and
// parses (or fails) without panicking.
func FuzzMarkdown(f *testing.F) {
	for _, s := range markdownSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := Parse(data, "x.md")
		if err != nil {
			if r != nil {
				t.Fatalf("both a recipe and an error: %v", err)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error does not wrap ErrInvalid: %v", err)
			}
			return
		}
		if r == nil {
			t.Fatal("nil recipe without an error")
		}
		if _, ok := r.Raw["template"]; !ok {
			t.Fatalf("recipe without template: %v", r.Raw)
		}
		if r.ID != "x" || r.Format != "md" {
			t.Fatalf("id/format = %q/%q", r.ID, r.Format)
		}
		if len(r.Imports) > 0 {
			return
		}
		rv := &Resolver{AgentDir: "/nonexistent-agent-dir", Home: "/nonexistent-home"}
		res, err := rv.Resolve(r)
		if err != nil {
			return
		}
		node, err := template.Parse(res.Graph)
		if err != nil {
			return
		}
		_ = node.Refs()
		_ = res.Bundle(nil)
	})
}
