package verbs_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/pi-actors/pi-actors/knowledge/api"
	"github.com/pi-actors/pi-actors/verbs"
)

// message to=knowledge type=knowledge.task_context carries the operation's
// parameters as its body; task_context accepts a text of up to 1 MiB
// (graphop.MaxTaskText), whose JSON (quotes, escapes) is larger: a
// knowledge operation is not a stored message, and the message size
// limit does not apply to it (it refused the documented route).
func TestKnowledgeMessageNotBoundByMessageSize(t *testing.T) {
	line := "- [ ] step: edit \"file.go\"\tand run `go test`\n" // 45 bytes, 4 escapes
	text := strings.Repeat(line, 1_000_000/len(line))           // ~1,000,000 bytes < 1 MiB
	body, _ := json.Marshal(map[string]any{"text": text})
	if _, err := api.Decode("task_context", body); err != nil {
		t.Fatalf("task_context refuses the text itself: %v", err)
	}
	m := &verbs.Message{To: "knowledge", Type: "knowledge.task_context", Body: body}
	if err := m.Validate(); err != nil {
		t.Errorf("text of %d bytes (within task_context's 1 MiB) refused as a message (JSON body %d bytes): %v", len(text), len(body), err)
	}
	// A stored message of that size is refused.
	if err := (&verbs.Message{To: "run:x", Type: "note.x", Body: body}).Validate(); err == nil {
		t.Errorf("a %d-byte body to run:x was accepted", len(body))
	}
}
