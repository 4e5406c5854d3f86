package main

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

const modulePath = "github.com/pi-actors/pi-actors"

// layerRow matches a row of AGENTS.md's layer table: the packages in
// backticks, the floor, what they own.
var layerRow = regexp.MustCompile("^\\| ((?:`[^`]+`(?:, )?)+) \\| (\\d+) \\| ")

// TestAgentsLayerTable holds AGENTS.md's layer table to the module: every
// package has exactly one row, no row names a package that does not exist,
// and a package imports only packages on a lower floor.
func TestAgentsLayerTable(t *testing.T) {
	doc, err := os.ReadFile("../../AGENTS.md")
	if err != nil {
		t.Fatal(err)
	}
	floors := map[string]int{}
	for _, line := range strings.Split(string(doc), "\n") {
		m := layerRow.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		floor, _ := strconv.Atoi(m[2])
		for _, name := range strings.Split(m[1], ", ") {
			name = strings.Trim(name, "`")
			if _, dup := floors[name]; dup {
				t.Errorf("AGENTS.md: %s has more than one row in the layer table", name)
			}
			floors[name] = floor
		}
	}
	if len(floors) == 0 {
		t.Fatal("AGENTS.md: no layer table rows found (| `pkg` | floor | owns |)")
	}

	cmd := exec.Command("go", "list", "-json=ImportPath,Imports", "./...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	listed := map[string]bool{}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p struct {
			ImportPath string
			Imports    []string
		}
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(p.ImportPath, modulePath+"/")
		listed[name] = true
		floor, ok := floors[name]
		if !ok {
			t.Errorf("AGENTS.md: package %s has no row in the layer table", name)
			continue
		}
		for _, imp := range p.Imports {
			dep, ours := strings.CutPrefix(imp, modulePath+"/")
			if !ours {
				continue
			}
			if f, ok := floors[dep]; ok && f >= floor {
				t.Errorf("%s (floor %d) imports %s (floor %d): move one of them, or fix the floors in AGENTS.md", name, floor, dep, f)
			}
		}
	}
	for name := range floors {
		if !listed[name] {
			t.Errorf("AGENTS.md: the layer table lists %s, which is not a package (go list ./...)", name)
		}
	}
}
