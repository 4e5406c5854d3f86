package mcpserver

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-actors/pi-actors/internal/config"
	"github.com/pi-actors/pi-actors/verbs"
)

// Two recipes whose tool names are one (a.b and a_b are both a_b): the
// name is the recipe's whose id it is (it ran whichever sorted first,
// a.b); a name only other spellings share is nobody's. A long
// description is cut and says where the whole is.
func TestRecipeToolNamesAndDescriptions(t *testing.T) {
	agent := t.TempDir()
	dir := filepath.Join(agent, "recipes")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	write := func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("a.b.json", `{"template": "echo DOT"}`)
	write("a_b.json", `{"template": "echo UNDERSCORE"}`)
	write("c.d.json", `{"template": "echo one"}`)
	write("c+d.json", `{"template": "echo two"}`)
	write("big.json", `{"description": "`+strings.Repeat("d", 5000)+`", "template": "echo big"}`)
	tools, err := RecipeTools(&verbs.Env{AgentDir: agent, Config: config.Defaults()})
	if err != nil {
		t.Fatal(err)
	}
	byName := map[string]ToolDef{}
	for _, tl := range tools {
		byName[tl.Name] = tl
	}
	if got := byName["a_b"].Recipe; got != "a_b" {
		t.Errorf("tool a_b runs recipe %q, want a_b", got)
	}
	if tl, ok := byName["c_d"]; ok {
		t.Errorf("tool c_d is listed for recipe %s although c.d and c+d both spell it", tl.Recipe)
	}
	big := byName["big"].Description
	if len(big) > maxToolDescription+200 || !strings.Contains(big, "(cut; the whole description: ") || !strings.Contains(big, "big.json") {
		t.Errorf("big's description is %d bytes: %.80q…", len(big), big[len(big)-min(len(big), 80):])
	}
}
