package mailbox

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestParseAddress(t *testing.T) {
	ok := []struct {
		in   string
		want Address
		str  string
	}{
		{"coordinator", Address{Kind: KindCoordinator}, "coordinator"},
		{"  coordinator ", Address{Kind: KindCoordinator}, "coordinator"},
		{"knowledge", Address{Kind: KindKnowledge}, "knowledge"},
		{" knowledge ", Address{Kind: KindKnowledge}, "knowledge"},
		{"run:build-1", Address{Kind: KindRun, ID: "build-1"}, "run:build-1"},
		{"run: build_1.x ", Address{Kind: KindRun, ID: "build_1.x"}, "run:build_1.x"},
		{"session:abc", Address{Kind: KindSession, ID: "abc"}, "session:abc"},
		{"tool:lint", Address{Kind: KindTool, ID: "lint"}, "tool:lint"},
		{"branch:r1/b2", Address{Kind: KindBranch, ID: "r1", Branch: "b2"}, "branch:r1/b2"},
		{"branch: r1 / b2 ", Address{Kind: KindBranch, ID: "r1", Branch: "b2"}, "branch:r1/b2"},
		{"room:r1", Address{Kind: KindRoom, ID: "r1"}, "room:r1"},
		{"room:r1/main", Address{Kind: KindRoom, ID: "r1"}, "room:r1"},
		{"room:r1/ main", Address{Kind: KindRoom, ID: "r1"}, "room:r1"},
		{"run:...", Address{Kind: KindRun, ID: "..."}, "run:..."},
	}
	for _, c := range ok {
		got, err := Parse(c.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.in, err)
			continue
		}
		if got != c.want || got.String() != c.str {
			t.Errorf("Parse(%q) = %+v (%s), want %+v (%s)", c.in, got, got, c.want, c.str)
		}
		again, err := Parse(got.String())
		if err != nil || again != got {
			t.Errorf("round trip of %q: %+v, %v", got, again, err)
		}
	}

	bad := []struct{ in, want string }{
		{"", "must include kind"},
		{"   ", "must include kind"},
		{"build-1", "must include kind"},
		{":x", "must include kind"},
		{"file:/etc/passwd", `unsupported actor address kind "file"`},
		{"Run:x", `unsupported actor address kind "Run"`},
		{"coordinator:x", "coordinator address takes no id"},
		{"knowledge:x", "knowledge address takes no id; use knowledge"},
		{"knowledge:", "knowledge address takes no id"},
		{"Knowledge", "must include kind"},
		{"knowledges", "must include kind"},
		{"run:", "run address is required"},
		{"run:  ", "run address is required"},
		{"session:", "session address is required"}, // C18: kept
		{"tool:", "tool address is required"},
		{"run:a/b", `run id contains unsupported characters: "a/b"`},
		{"run:a b", `run id contains unsupported characters: "a b"`},
		{"run:..", `run id contains unsupported characters: ".."`},
		{"run:.", `run id contains unsupported characters: "."`},
		{"session:x$y", `session id contains unsupported characters`},
		{"tool:a:b", `tool id contains unsupported characters: "a:b"`},
		{"branch:", "branch run is required"},
		{"branch:/b", "branch run is required"},
		{"branch:r", "branch id is required"},
		{"branch:r/", "branch id is required"},
		{"branch:r/b/c", "branch address has too many parts"},
		{"branch:r!/b", `branch run contains unsupported characters: "r!"`},
		{"branch:r/..", `branch id contains unsupported characters: ".."`},
		{"room:", "room address is required"},
		{"room:r/other", "task rooms do not support named subrooms"},
		{"room:r/", "task rooms do not support named subrooms"},
		{"room:r/main/x", "room address has too many parts"},
		{"room:r*", `room run contains unsupported characters: "r*"`},
		// Ids become file and directory names: bounded like run ids.
		{"branch:r/" + strings.Repeat("x", 300), "branch id \"" + strings.Repeat("x", 32) + "\"… is 300 bytes, longer than 128"},
		{"run:" + strings.Repeat("y", 129), "run id \"" + strings.Repeat("y", 32) + "\"… is 129 bytes, longer than 128"},
		{"session:" + strings.Repeat("s", 200), "longer than 128"},
	}
	for _, c := range bad {
		_, err := Parse(c.in)
		var ae *AddressError
		if !errors.As(err, &ae) {
			t.Errorf("Parse(%q): got %v, want *AddressError", c.in, err)
			continue
		}
		if !errors.Is(err, ErrInvalid) {
			t.Errorf("Parse(%q): error does not match ErrInvalid", c.in)
		}
		if ae.Input != c.in || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Parse(%q) error %q, want it to contain %q", c.in, err, c.want)
		}
	}
}

func TestAddressText(t *testing.T) {
	var v struct{ A Address }
	if err := json.Unmarshal([]byte(`{"A":"room:x/main"}`), &v); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(v)
	if string(b) != `{"A":"room:x"}` {
		t.Fatalf("got %s", b)
	}
	if err := json.Unmarshal([]byte(`{"A":"nope"}`), &v); !errors.Is(err, ErrInvalid) {
		t.Fatalf("unmarshal of a bad address: %v", err)
	}
}

// TestKnowledgeEnvelope: a message to the knowledge actor is an envelope
// like any other (the kernel answers it itself).
func TestKnowledgeEnvelope(t *testing.T) {
	env, err := Normalize(map[string]any{"to": " knowledge", "type": "knowledge.query_graph", "body": map[string]any{"operation": "context"}})
	if err != nil {
		t.Fatalf("Normalize: %v", err)
	}
	if env.To != "knowledge" || env.Type != "knowledge.query_graph" {
		t.Fatalf("envelope = %+v", env)
	}
	if _, err := Normalize(map[string]any{"to": "knowledge:main", "type": "knowledge.query_graph"}); !errors.Is(err, ErrInvalid) {
		t.Fatalf("knowledge:main: %v, want ErrInvalid", err)
	}
}

// TestLongRecordIDs: only the ids inside addresses (they become names of
// files and directories) are bounded; a record's id is a line's field —
// the kernel's follow-up ids run past 128 bytes for a long run id, and a
// caller's message id may too.
func TestLongRecordIDs(t *testing.T) {
	long := strings.Repeat("r", 120) + ".1764216519000000000.node.integration-tests.3.failed"
	if _, _, err := NewInbox(t.TempDir() + "/inbox.jsonl").Append(map[string]any{"id": long, "type": "x.y"}); err != nil {
		t.Fatalf("a %d-byte record id: %v", len(long), err)
	}
	if _, err := (Envelope{To: "run:a", Type: "x.y", ID: long}).Normalized(); err != nil {
		t.Fatalf("a %d-byte message id: %v", len(long), err)
	}
}
