package wire

import (
	"encoding/json"
	"reflect"
	"testing"
)

var codecRequests = []Request{
	{},
	{ID: 7, Op: "spawn", Session: "s1", Cwd: "/tmp/a b", Env: []string{"A=1", "B=<&>", "C=\u2028\u2029", "D=\x00\x1f\t\n\r\b\f\"\\", "E=\xff\xfeok", "F=ünï€😀"},
		Params: json.RawMessage(`{ "as" : "run:x", "template":"sleep 30", "html":"<a&b>" }`)},
	{ID: -3, Op: "message", Items: []json.RawMessage{json.RawMessage(`{"to":"run:a"}`), nil, json.RawMessage(" [1, 2] ")}, Node: "n1", From: "n2", Home: "n3"},
	{Op: "watch", Cause: &Cause{}, Ack: true},
	{Op: "spawn", Cause: &Cause{Session: "s", Run: "r", Message: "m", ToolCall: "t", MCPRequest: "q", Node: "n"}},
	{Op: "spawn", Cause: &Cause{Node: "only"}, Env: []string{}},
	{Op: "x", Params: json.RawMessage(`"\u2028 <"`)},
}

func TestAppendRequestIsMarshal(t *testing.T) {
	for i, req := range codecRequests {
		want, err := json.Marshal(req)
		if err != nil {
			t.Fatal(err)
		}
		got, err := appendRequest(nil, &req)
		if err != nil {
			t.Fatalf("%d: %v", i, err)
		}
		if string(got) != string(want) {
			t.Errorf("%d:\n got %s\nwant %s", i, got, want)
		}
	}
	bad := Request{Op: "x", Params: json.RawMessage(`{"a":`)}
	if _, err := json.Marshal(bad); err == nil {
		t.Fatal("json.Marshal took invalid params")
	}
	if _, err := appendRequest(nil, &bad); err == nil {
		t.Error("appendRequest took invalid params")
	}
}

var codecResponses = []string{
	`{"id":1,"ok":true,"result":{"address":"run:x","pid":12,"status":"running"}}`,
	` { "id" : 2 , "ok" : false , "error" : {"code":"usage","message":"m <x>","hint":"h","exit":64,"details":{"a":[1,"}"]}} } `,
	`{"id":3,"ok":true,"results":[{"id":3,"ok":true,"result":"a\"}"},{"id":3,"error":{"code":"c","message":"m","exit":70}}]}`,
	`{"id":4,"ok":true,"results":[]}`,
	`{"id":5,"ok":null,"result":null,"error":null,"results":null}`,
	`{"ID":6,"Ok":true}`,
	`{"id":7,"ok":true,"extra":1}`,
	`{"id":8,"id":9}`,
	`{"id":1e1}`,
	`{"id":1.5}`,
	`{"id":"1"}`,
	`{"ok":"yes"}`,
	`{"error":{"exit":"x"}}`,
	`{"results":[null]}`,
	`{"results":{}}`,
	`{"id":99999999999999999999}`,
	`{"id":1,"ok":true} x`,
	`{"id":1,`,
	`[]`,
	`null`,
	`{"a\u0062":1}`,
	`{}`,
	`{"result":[{"x":"]"}],"id":-0}`,
}

func TestDecodeResponseIsUnmarshal(t *testing.T) {
	for _, line := range codecResponses {
		checkDecodeResponse(t, []byte(line))
	}
}

func checkDecodeResponse(t *testing.T, line []byte) {
	t.Helper()
	var want, got Response
	wantErr := json.Unmarshal(line, &want)
	gotErr := decodeResponse(append([]byte(nil), line...), &got)
	if (wantErr == nil) != (gotErr == nil) {
		t.Fatalf("%s: error %v, json.Unmarshal's %v", line, gotErr, wantErr)
	}
	if wantErr == nil && !reflect.DeepEqual(got, want) {
		t.Fatalf("%s:\n got %#v\nwant %#v", line, got, want)
	}
}

func FuzzDecodeResponse(f *testing.F) {
	for _, line := range codecResponses {
		f.Add([]byte(line))
	}
	f.Fuzz(func(t *testing.T, line []byte) { checkDecodeResponse(t, line) })
}

func FuzzAppendRequest(f *testing.F) {
	f.Add("spawn", "s", "/tmp", "A=<b>", []byte(`{"a":1}`), "n")
	f.Fuzz(func(t *testing.T, op, session, cwd, env string, params []byte, node string) {
		req := Request{Op: op, Session: session, Cwd: cwd, Env: []string{env}, Params: params, Cause: &Cause{Node: node}}
		want, wantErr := json.Marshal(req)
		got, gotErr := appendRequest(nil, &req)
		if (wantErr == nil) != (gotErr == nil) {
			t.Fatalf("error %v, json.Marshal's %v", gotErr, wantErr)
		}
		if wantErr == nil && string(got) != string(want) {
			t.Fatalf("\n got %s\nwant %s", got, want)
		}
	})
}
