package verbs

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/pi-actors/pi-actors/verbs/wire"
)

// flatValues are what a CLI parameter holds (a string, or what key:=JSON
// and a stdin object decode to), some of them not of the field's type.
var flatValues = []any{
	"", "run:x", "a<b>&\u2028\xff", "sleep 30", "3", "on-failure", "1.5G", "a,b", "true",
	json.Number("3"), json.Number("1.5"), json.Number("-2"), true, false, nil,
	map[string]any{"a": json.Number("1"), "b": []any{"x", nil, true}, "c": map[string]any{}},
	map[string]any{"policy": "on-failure", "backoff_ms": json.Number("100")},
	[]any{"a", "b"}, []any{json.Number("1"), map[string]any{"k": "v"}}, []any{}, []string{"web", "worker"},
	map[string]any{"workflow": "w", "instance": "i", "node": "n", "attempt": json.Number("2")},
}

// DecodeCLI decodes every verb's parameters as it did through one JSON
// object, and wire.Request.Encode writes json.Marshal's bytes.
func TestDecodeFieldsIsDecode(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, s := range All() {
		if s.Decode != nil {
			continue
		}
		names := make([]string, 0)
		for _, f := range fields(reflect.TypeOf(s.New())) {
			names = append(names, f.name)
		}
		if !plainRequest(reflect.TypeOf(s.New()).Elem()) {
			t.Logf("%s: not plain (decoded whole)", s.Name)
		}
		for range 300 {
			params := map[string]any{}
			for range rng.IntN(4) {
				params[names[rng.IntN(len(names))]] = flatValues[rng.IntN(len(flatValues))]
			}
			b, err := json.Marshal(params)
			if err != nil {
				t.Fatal(err)
			}
			want, wantErr := s.decode(b)
			got, ok := s.decodeFields(params)
			if !ok {
				continue
			}
			if wantErr != nil {
				t.Fatalf("%s %s: decoded field by field, whole: %v", s.Name, b, wantErr)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s %s:\n got %#v\nwant %#v", s.Name, b, got, want)
			}
			var req wire.Request
			if err := req.Encode(got); err != nil {
				t.Fatal(err)
			}
			wantB, err := json.Marshal(got)
			if err != nil {
				t.Fatal(err)
			}
			if string(req.Params) != string(wantB) {
				t.Fatalf("%s: Encode\n got %s\nwant %s", s.Name, req.Params, wantB)
			}
		}
	}
}

// The spawn path decodes field by field (a request type that stops being
// plain would cost a spawn its speed, not its meaning).
func TestSpawnIsPlain(t *testing.T) {
	req, ok := Find("spawn").decodeFields(map[string]any{"as": "run:x", "template": "sleep 30", "values": map[string]any{"a": json.Number("1")}})
	if !ok {
		t.Fatal("spawn's request is not decoded field by field")
	}
	sp := req.(*Spawn)
	if sp.As != "run:x" || sp.Template != "sleep 30" || sp.Values["a"] != json.Number("1") {
		t.Fatalf("decoded %#v", sp)
	}
}
