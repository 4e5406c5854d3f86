package actors

import (
	"encoding/json"
	"path/filepath"
	"strings"

	"github.com/pi-actors/pi-actors/mailbox"
	"github.com/pi-actors/pi-actors/verbs/wire"
)

// batchGroups splits a batch into the groups the kernel may handle in
// parallel, each handled in order: the messages of a batch to one
// destination stay in the order they were given (a writer's messages
// reach an inbox or a room as it sent them), and so do the spawns of one
// run id (spawnKey); every other item is its own group.
func batchGroups(req wire.Request) [][]int {
	if req.Op != "message" && req.Op != "spawn" {
		groups := make([][]int, len(req.Items))
		for i := range req.Items {
			groups[i] = []int{i}
		}
		return groups
	}
	var groups [][]int
	byTo := map[string]int{}
	for i, item := range req.Items {
		key := ""
		if req.Op == "spawn" {
			key = spawnKey(item)
		} else {
			var m struct {
				To string `json:"to"`
			}
			if json.Unmarshal(item, &m) == nil {
				key = m.To
				if a, err := mailbox.Parse(m.To); err == nil {
					key = a.String()
				}
			}
		}
		g, ok := byTo[key]
		if !ok || key == "" {
			g = len(groups)
			groups = append(groups, nil)
			byTo[key] = g
		}
		groups[g] = append(groups[g], i)
	}
	return groups
}

// spawnKey is the run id a batch item of spawn would start (as, run_id,
// else the recipe's id), "" when the kernel makes a new one: items of one
// id start in batch order, so the first wins and the next is refused as
// already running (run in parallel, either one won).
func spawnKey(item json.RawMessage) string {
	var sp struct {
		As     string `json:"as"`
		RunID  string `json:"run_id"`
		Recipe string `json:"recipe"`
		File   string `json:"file"`
	}
	if json.Unmarshal(item, &sp) != nil {
		return ""
	}
	switch {
	case strings.TrimSpace(sp.As) != "":
		return "run:" + strings.TrimPrefix(strings.TrimSpace(sp.As), "run:")
	case strings.TrimSpace(sp.RunID) != "":
		return "run:" + strings.TrimSpace(sp.RunID)
	case strings.TrimSpace(sp.Recipe) != "":
		return "recipe:" + strings.TrimSpace(sp.Recipe)
	case strings.TrimSpace(sp.File) != "":
		return "file:" + filepath.Base(strings.TrimSpace(sp.File))
	}
	return ""
}
