package mcpserver

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"

	"github.com/pi-actors/pi-actors/recipes"
	"github.com/pi-actors/pi-actors/verbs"
)

// callIDs hands each tools/call's JSON-RPC id to its handler (the SDK
// does not give a handler its request's id): the guard notes the id of
// every tools/call line it passes on, under the tool's name and
// arguments, before the SDK reads the line; the handler takes the oldest
// id noted under the same name and arguments. Two identical calls in
// flight may swap ids — they are the same call.
type callIDs struct {
	mu sync.Mutex
	m  map[string][]string
}

// maxPending bounds the ids kept per tool call (calls the SDK refused
// before any handler ran leave theirs behind).
const maxPending = 64

// note records the id of a tools/call line.
func (c *callIDs) note(line []byte) {
	if c == nil || !bytes.Contains(line, []byte(`"tools/call"`)) {
		return
	}
	var msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Name      string          `json:"name"`
			Arguments json.RawMessage `json:"arguments"`
		} `json:"params"`
	}
	if json.Unmarshal(line, &msg) != nil || msg.Method != "tools/call" || len(msg.ID) == 0 {
		return
	}
	id := verbs.CauseID(strings.Trim(string(msg.ID), `"`))
	k := callKey(msg.Params.Name, msg.Params.Arguments)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string][]string{}
	}
	q := append(c.m[k], id)
	if len(q) > maxPending {
		q = q[len(q)-maxPending:]
	}
	c.m[k] = q
}

// take returns the id of a call of tool name with args ("" when none was
// noted).
func (c *callIDs) take(name string, args json.RawMessage) string {
	if c == nil {
		return ""
	}
	k := callKey(name, args)
	c.mu.Lock()
	defer c.mu.Unlock()
	q := c.m[k]
	if len(q) == 0 {
		return ""
	}
	id := q[0]
	if len(q) == 1 {
		delete(c.m, k)
	} else {
		c.m[k] = q[1:]
	}
	return id
}

func callKey(name string, args json.RawMessage) string {
	var b bytes.Buffer
	if len(bytes.TrimSpace(args)) == 0 || json.Compact(&b, args) != nil {
		b.Reset()
		b.WriteString("null")
	}
	// By the name's key: the call is noted under the spelling the client
	// sent and taken under the listed one (either spelling answers).
	return recipes.NameKey(name) + "\x00" + b.String()
}
