package actors

import (
	"encoding/json"

	"github.com/pi-actors/pi-actors/mailbox"
	"github.com/pi-actors/pi-actors/verbs/wire"
)

// batchGroups splits a batch into the groups the kernel may handle in
// parallel, each handled in order: the messages of a batch to one
// destination stay in the order they were given (a writer's messages
// reach an inbox or a room as it sent them); every other item is its own
// group.
func batchGroups(req wire.Request) [][]int {
	if req.Op != "message" {
		groups := make([][]int, len(req.Items))
		for i := range req.Items {
			groups[i] = []int{i}
		}
		return groups
	}
	var groups [][]int
	byTo := map[string]int{}
	for i, item := range req.Items {
		var m struct {
			To string `json:"to"`
		}
		key := ""
		if json.Unmarshal(item, &m) == nil {
			key = m.To
			if a, err := mailbox.Parse(m.To); err == nil {
				key = a.String()
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
