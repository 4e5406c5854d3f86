package verbs

import (
	"testing"
)

// FuzzDecodeJSON feeds every verb's JSON decoding (what the kernel and MCP
// clients send) and validation: no panic, and a rejection is always a
// usage or data error.
func FuzzDecodeJSON(f *testing.F) {
	for _, seed := range []string{
		`{"as":"run:x","template":"echo"}`, `{"to":"run:x","type":"a.b","body":null}`,
		`{"target":"run:x","view":"status","lines":"3"}`, `{"template":["a","b"],"values":{"x":1}}`,
		`{"recipe":"r","args":{"a":[1]}}`, `{"name":"t","template":null}`, `{"action":"claim","wait":"1s"}`,
		`[]`, `null`, `{"lines":{}}`, `{"ttl_ms":-1,"to":"run:x","type":"a"}`, `{"deadline":"yesterday","to":"coordinator","type":"a"}`,
	} {
		for i := range All() {
			f.Add(i, seed)
		}
	}
	f.Fuzz(func(t *testing.T, i int, raw string) {
		all := All()
		if i < 0 || i >= len(all) {
			return
		}
		req, err := all[i].DecodeJSON([]byte(raw))
		if err == nil {
			err = req.Validate()
		}
		if err != nil {
			if e := Classify(err); e.Exit != ExitUsage && e.Exit != ExitDataErr {
				t.Fatalf("%s %s: rejection is exit %d (%s): %v", all[i].Name, raw, e.Exit, e.Code, err)
			}
		}
	})
}
