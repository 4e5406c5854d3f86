package wire

import (
	"bytes"
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

type ptrMarshal struct{ n int }

func (p *ptrMarshal) MarshalJSON() ([]byte, error) { return json.Marshal(p.n * 2) }

type valMarshal string

func (v valMarshal) MarshalJSON() ([]byte, error) { return json.Marshal("<" + string(v) + ">") }

type zeroer struct{ A int }

func (z zeroer) IsZero() bool { return z.A == 1 }

type inner struct {
	X int    `json:"x"`
	Y string `json:"y,omitempty"`
}

type flatAll struct {
	S        string            `json:"s,omitempty"`
	T        string            `json:"t"`
	NoTag    int               //
	Skip     string            `json:"-"`
	unexp    string            //nolint:unused
	Any      any               `json:"any,omitempty"`
	Map      map[string]any    `json:"map,omitempty"`
	Slice    []string          `json:"slice,omitempty"`
	Ptr      *inner            `json:"ptr,omitempty"`
	Inner    inner             `json:"inner,omitempty"`
	Zero     int               `json:"zero,omitzero"`
	PM       ptrMarshal        `json:"pm"`
	VM       valMarshal        `json:"vm,omitempty"`
	Raw      json.RawMessage   `json:"raw,omitempty"`
	F        float64           `json:"f,omitempty"`
	B        bool              `json:"b,omitempty"`
	Arr      [2]int            `json:"arr"`
	M2       map[string]string `json:"m2"`
	NameOnly string            `json:",omitempty"`
}

type notFlat1 struct {
	inner
	Z int `json:"z"`
}

type notFlat2 struct {
	N int `json:"n,string"`
}

type ptrZeroer struct{ A int }

func (z *ptrZeroer) IsZero() bool { return z.A == 5 }

type notFlat3 struct {
	Z *zeroer `json:"z,omitzero"`
}

type zeroers struct {
	Z  zeroer    `json:"z,omitzero"`
	PZ ptrZeroer `json:"pz,omitzero"`
}

type notFlat4 struct {
	A int `json:"a b"`
}

type selfMarshal struct{ A int }

func (selfMarshal) MarshalJSON() ([]byte, error) { return []byte(`"self"`), nil }

func TestMarshalFlatIsMarshal(t *testing.T) {
	values := []any{
		&flatAll{},
		&flatAll{S: "a<b>&\u2028\xff", T: "t", NoTag: 3, Skip: "x", unexp: "u", Any: map[string]any{"z": 1, "a": []any{"<", nil}},
			Map: map[string]any{}, Slice: []string{"x"}, Ptr: &inner{X: 1}, Inner: inner{Y: "y"}, Zero: 2, PM: ptrMarshal{4}, VM: "v",
			Raw: json.RawMessage(` { "a" : 1 } `), F: 1.5, B: true, Arr: [2]int{1, 2}, NameOnly: "n"},
		&flatAll{Any: json.Number("12"), Map: map[string]any{"k": "v"}, Slice: []string{}},
		&zeroers{}, &zeroers{Z: zeroer{1}, PZ: ptrZeroer{5}}, &zeroers{Z: zeroer{0}, PZ: ptrZeroer{0}},
	}
	for i, v := range values {
		want, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := marshalFlat(v)
		if !ok {
			t.Fatalf("%d: not flat", i)
		}
		if string(got) != string(want) {
			t.Errorf("%d:\n got %s\nwant %s", i, got, want)
		}
	}
	for i, v := range []any{&notFlat1{}, &notFlat2{}, &notFlat3{}, &notFlat4{}, &selfMarshal{}, flatAll{}, (*flatAll)(nil), 3, map[string]any{},
		&flatAll{Raw: json.RawMessage(`{`)}} {
		if _, ok := marshalFlat(v); ok {
			t.Errorf("%d: %T taken as flat", i, v)
		}
	}
}

type result struct {
	Address string   `json:"address"`
	Pid     int      `json:"pid"`
	Warn    []string `json:"warnings,omitempty"`
	Ready   *bool    `json:"ready,omitempty"`
	Run     string   `json:"run"`
	RunAlso string   `json:"Run"`
	Details any      `json:"details,omitempty"`
	M       map[string]int
	PM      ptrMarshal `json:"pm"`
}

type selfUnmarshal struct{ A int }

func (s *selfUnmarshal) UnmarshalJSON([]byte) error { s.A = 9; return nil }

var flatResults = []string{
	`{"address":"run:x","pid":12,"run":"x","warnings":["a"],"ready":true}`,
	` { "ADDRESS" : "r" , "Pid":1, "RUN":"folded", "Run":"exact", "run":"lower", "unknown":{"a":[1]}, "details":{"n":1.5}, "M":{"a":1}, "m":{"b":2} } `,
	`{"pid":"x"}`,
	`{"pid":1.5,"run":"y"}`,
	`{"ready":null,"warnings":null,"address":null}`,
	`{"\u0061ddress":"escaped"}`,
	`{"ſun":"non-ascii"}`,
	`{"addreſs":"non-ascii fold"}`,
	`{"run":"a","run":"b"}`,
	`{"M":{"a":1},"M":{"b":2}}`,
	`[]`, `null`, `"s"`, `{`, `{}`, `{"pm":3}`,
}

func TestUnmarshalFlatIsUnmarshal(t *testing.T) {
	for _, data := range flatResults {
		checkUnmarshalFlat(t, []byte(data))
	}
	var s selfUnmarshal
	if unmarshalFlat([]byte(`{"A":1}`), &s) {
		t.Error("a type with UnmarshalJSON decoded field by field")
	}
}

func checkUnmarshalFlat(t *testing.T, data []byte) {
	t.Helper()
	for _, seed := range []func() *result{
		func() *result { return &result{} },
		func() *result { return &result{Address: "before", M: map[string]int{"z": 1}} },
	} {
		checkUnmarshalFlatInto(t, data, seed)
	}
}

func checkUnmarshalFlatInto(t *testing.T, data []byte, seed func() *result) {
	t.Helper()
	want, got := seed(), seed()
	wantErr := json.Unmarshal(data, want)
	if unmarshalFlat(data, got) {
		if wantErr != nil {
			t.Fatalf("%s: decoded field by field; json.Unmarshal: %v", data, wantErr)
		}
	} else {
		if !reflect.DeepEqual(got, seed()) {
			t.Fatalf("%s: refused but changed to %#v", data, got)
		}
		return
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\n got %#v\nwant %#v", data, got, want)
	}
}

func FuzzUnmarshalFlat(f *testing.F) {
	for _, data := range flatResults {
		f.Add([]byte(data))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkUnmarshalFlat(t, data) })
}

func TestMarshalFlatNoEscape(t *testing.T) {
	v := &flatAll{S: "<a&b>\u2028", Any: map[string]any{"h": "<>"}, VM: "x", Raw: json.RawMessage(`"<&>"`)}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	got, ok := MarshalFlat(v, false)
	if !ok || string(got)+"\n" != buf.String() {
		t.Fatalf("got %s (%v)\nwant %s", got, ok, buf.String())
	}
}

// A large result goes to json.Unmarshal whole.
func TestUnmarshalFlatLeavesLargeResults(t *testing.T) {
	big := []byte(`{"address":"` + strings.Repeat("a", flatDecodeMax) + `"}`)
	var r result
	if unmarshalFlat(big, &r) {
		t.Fatal("a large result decoded field by field")
	}
	resp := Response{OK: true, Result: big}
	if err := resp.Decode(&r); err != nil || len(r.Address) != flatDecodeMax {
		t.Fatalf("Decode: %v, %d bytes", err, len(r.Address))
	}
}
