package main

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/pi-actors/pi-actors/verbs"
)

// envelopeJSON writes what the encoder writes, or declines.
func TestEnvelopeJSONIsEncoder(t *testing.T) {
	ready := true
	text := "address=run:x <b>&\u2028 \xff"
	results := []any{
		nil,
		&verbs.SpawnResult{Address: "run:x", Pid: 3, Run: "x", StateDir: "/tmp/<a&b>", Status: "running"},
		&verbs.SpawnResult{Address: "run:x@n", DraftRecipe: "d", Pid: 1, Recipe: "r", Run: "x", StateDir: "s", Status: "s",
			Warnings: []string{"w <1>"}, Node: "n", Ready: &ready, ReadyAt: "t"},
		map[string]any{"verb": "spawn", "usage": "<u>", "available": true},
		verbs.SpawnResult{Address: "by value"},
		&struct{ A []any }{A: []any{"<", 1.5, nil}},
	}
	for i, res := range results {
		for _, txt := range []*string{nil, &text} {
			env := envelope{OK: true, Result: res, Text: txt}
			var want bytes.Buffer
			enc := json.NewEncoder(&want)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(env); err != nil {
				t.Fatal(err)
			}
			if got, ok := envelopeJSON(env); ok && string(got) != want.String() {
				t.Errorf("%d:\n got %s\nwant %s", i, got, want.String())
			} else if !ok && i < 3 {
				t.Errorf("%d: declined", i)
			}
		}
	}
	if _, ok := envelopeJSON(envelope{Error: &errorBody{Code: "x"}}); ok {
		t.Error("an error envelope went the fast way")
	}
}
