package recipes

import (
	"reflect"
	"testing"

	"github.com/pi-actors/pi-actors/internal/fsutil"
	"github.com/pi-actors/pi-actors/recipes/template"
)

func TestOrderedRoundTrip(t *testing.T) {
	in := `{"z": 1.50, "a": {"y": [1, {"k": null}], "b": true}, "e": {}, "l": [], "s": "<&> é \u2028", "z2": -0}`
	v, err := decodeOrdered([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	got, err := marshalOrdered(v)
	if err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"z\": 1.50,\n  \"a\": {\n    \"y\": [\n      1,\n      {\n        \"k\": null\n      }\n    ],\n    \"b\": true\n  },\n  \"e\": {},\n  \"l\": [],\n  \"s\": \"<&> é \\u2028\",\n  \"z2\": -0\n}\n"
	if string(got) != want {
		t.Errorf("round trip:\n%s\nwant:\n%s", got, want)
	}
	// The plain form matches what the template engine decodes.
	plain, _ := template.DecodeJSON([]byte(in))
	if !reflect.DeepEqual(toPlain(v), plain) {
		t.Errorf("toPlain = %v, want %v", toPlain(v), plain)
	}
	// Plain maps render exactly as fsutil.MarshalIndent renders them.
	ref, _ := fsutil.MarshalIndent(plain)
	mine, _ := marshalOrdered(plain)
	if string(ref) != string(mine) {
		t.Errorf("plain map:\n%s\nfsutil:\n%s", mine, ref)
	}
}

func TestOrderedDuplicateKeysAndErrors(t *testing.T) {
	v, err := decodeOrdered([]byte(`{"a": 1, "b": 2, "a": 3}`))
	if err != nil {
		t.Fatal(err)
	}
	o := v.(*jsonObject)
	if !reflect.DeepEqual(o.keys, []string{"a", "b"}) || o.vals["a"] != toPlain(v).(map[string]any)["a"] {
		t.Errorf("duplicate keys: %v %v", o.keys, o.vals)
	}
	o.del("a")
	o.set("c", "x")
	if !reflect.DeepEqual(o.keys, []string{"b", "c"}) {
		t.Errorf("keys after del/set: %v", o.keys)
	}
	for _, bad := range []string{``, `{`, `{"a": }`, `{} {}`, `[1,]`, `{"a": 1} x`} {
		if _, err := decodeOrdered([]byte(bad)); err == nil {
			t.Errorf("decodeOrdered(%q) accepted", bad)
		}
	}
}
