package mailbox

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestAppendRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "events.jsonl") // directory created on demand
	if lines, err := Read(path); err != nil || lines != nil {
		t.Fatalf("missing file: %v %v", lines, err)
	}
	if err := Append(path, map[string]any{"a": 1, "html": "<x>"}, map[string]any{"b": 2}); err != nil {
		t.Fatal(err)
	}
	if err := AppendSync(path, struct {
		C int `json:"c"`
	}{3}); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if string(data) != "{\"a\":1,\"html\":\"<x>\"}\n{\"b\":2}\n{\"c\":3}\n" {
		t.Fatalf("file:\n%s", data)
	}
	fi, _ := os.Stat(path)
	if fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", fi.Mode())
	}
	if _, err := os.Stat(LockPath(path)); err != nil {
		t.Fatalf("lock file: %v", err)
	}
	lines, err := Read(path)
	if err != nil || len(lines) != 3 {
		t.Fatalf("%d lines, %v", len(lines), err)
	}
	if lines[2].N != 3 || lines[2].Off != int64(len(data)-8) || lines[2].Value["c"].(fmt.Stringer).String() != "3" {
		t.Fatalf("line 3: %+v", lines[2])
	}
	for _, bad := range []any{"str", []int{1}, nil} {
		if err := Append(path, bad); err == nil {
			t.Errorf("Append(%v) accepted a non-object", bad)
		}
	}
}

func TestTornTailRepair(t *testing.T) {
	path := filepath.Join(t.TempDir(), "inbox.jsonl")
	// A crash in the middle of a write left half a record.
	if err := os.WriteFile(path, []byte("{\"ok\":1}\n{\"half\":"), 0o600); err != nil {
		t.Fatal(err)
	}
	lines, _ := Read(path)
	if len(lines) != 2 || !lines[1].Partial || !errors.Is(lines[1].Err, ErrMalformed) {
		t.Fatalf("before repair: %+v", lines)
	}
	if err := Append(path, map[string]any{"new": true}); err != nil {
		t.Fatal(err)
	}
	lines, _ = Read(path)
	if len(lines) != 3 {
		t.Fatalf("got %d lines", len(lines))
	}
	if string(lines[1].Raw) != `{"half":` || !errors.Is(lines[1].Err, ErrMalformed) || lines[1].Partial {
		t.Fatalf("fragment: %+v", lines[1])
	}
	if lines[2].Err != nil || lines[2].Value["new"] != true || lines[2].N != 3 {
		t.Fatalf("new record: %+v", lines[2])
	}
	// A complete record whose newline never landed becomes a record.
	path2 := filepath.Join(t.TempDir(), "x.jsonl")
	os.WriteFile(path2, []byte(`{"whole":1}`), 0o600)
	lines, _ = Read(path2)
	if len(lines) != 1 || lines[0].Err != nil || !lines[0].Partial {
		t.Fatalf("unterminated whole record: %+v", lines)
	}
	Append(path2, map[string]any{"b": 2})
	if data, _ := os.ReadFile(path2); string(data) != "{\"whole\":1}\n{\"b\":2}\n" {
		t.Fatalf("file: %q", data)
	}
}

func TestReadReportsMalformed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.jsonl")
	content := "{\"a\":1}\n\n   \nnot json\n[1,2]\n{\"a\":1} {\"b\":2}\n\"s\"\n{\"big\":12345678901234567890}\n"
	os.WriteFile(path, []byte(content), 0o600)
	lines, err := Read(path)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range lines {
		got = append(got, fmt.Sprintf("%d:%v", l.N, l.Err == nil))
	}
	if want := "1:true 4:false 5:false 6:false 7:false 8:true"; strings.Join(got, " ") != want {
		t.Fatalf("got %s, want %s", strings.Join(got, " "), want)
	}
	if s := fmt.Sprint(lines[5].Value["big"]); s != "12345678901234567890" {
		t.Fatalf("number lost precision: %s", s)
	}
}

func TestTailMatchesRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.jsonl")
	var b bytes.Buffer
	for i := range 3000 {
		switch {
		case i%97 == 0:
			b.WriteString("garbage line\n")
		case i%211 == 0:
			b.WriteString("\n")
		default:
			fmt.Fprintf(&b, "{\"i\":%d,\"pad\":%q}\n", i, strings.Repeat("p", i%300))
		}
	}
	b.WriteString(`{"torn":`)
	os.WriteFile(path, b.Bytes(), 0o600)
	all, _ := Read(path)
	for _, n := range []int{0, 1, 2, 7, 100, 1000, len(all) - 1, len(all), len(all) + 5} {
		tail, err := Tail(path, n)
		if err != nil {
			t.Fatal(err)
		}
		want := all[max(0, len(all)-n):]
		if n <= 0 {
			want = nil
		}
		if len(tail) != len(want) {
			t.Fatalf("Tail(%d): %d lines, want %d", n, len(tail), len(want))
		}
		for i := range tail {
			w := want[i]
			g := tail[i]
			if g.Off != w.Off || !bytes.Equal(g.Raw, w.Raw) || (g.Err == nil) != (w.Err == nil) || g.Partial != w.Partial || g.N != 0 {
				t.Fatalf("Tail(%d)[%d] = %+v, want %+v", n, i, g, w)
			}
		}
	}
	if l, err := Tail(filepath.Join(t.TempDir(), "none"), 5); l != nil || err != nil {
		t.Fatalf("missing file: %v %v", l, err)
	}
}

func TestRewriteKeepsMalformed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.jsonl")
	os.WriteFile(path, []byte("{\"b\":1,\"a\":2}\nbroken{\n{\"c\":3}\n{\"tail\""), 0o640)
	// Patch every record; malformed lines stay verbatim, the torn tail is
	// closed off, key order and value bytes survive.
	err := Rewrite(path, func(lines []Line) ([]Line, error) {
		for i := range lines {
			if lines[i].Err == nil {
				if err := lines[i].Set("seen", true); err != nil {
					return nil, err
				}
			}
		}
		return lines, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	want := "{\"b\":1,\"a\":2,\"seen\":true}\nbroken{\n{\"c\":3,\"seen\":true}\n{\"tail\"\n"
	if string(data) != want {
		t.Fatalf("got\n%s\nwant\n%s", data, want)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
		t.Fatalf("mode not kept: %v", fi.Mode())
	}
	// Dropping a malformed line is refused and nothing is written.
	err = Rewrite(path, func(lines []Line) ([]Line, error) {
		var out []Line
		for _, l := range lines {
			if l.Err == nil {
				out = append(out, l)
			}
		}
		return out, nil
	})
	if err == nil || !strings.Contains(err.Error(), "malformed") {
		t.Fatalf("drop malformed: %v", err)
	}
	if after, _ := os.ReadFile(path); string(after) != want {
		t.Fatalf("file changed after a refused rewrite:\n%s", after)
	}
	// Dropping records is allowed; an unchanged result writes nothing.
	err = Rewrite(path, func(lines []Line) ([]Line, error) {
		return lines[1:2], nil
	})
	if err == nil {
		t.Fatal("dropping the last malformed line must be refused")
	}
	fi0, _ := os.Stat(path)
	if err := Rewrite(path, func(lines []Line) ([]Line, error) { return lines, nil }); err != nil {
		t.Fatal(err)
	}
	if fi1, _ := os.Stat(path); !os.SameFile(fi0, fi1) {
		t.Fatal("an unchanged rewrite replaced the file")
	}
	err = Rewrite(path, func(lines []Line) ([]Line, error) {
		return []Line{lines[1], lines[3]}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if data, _ := os.ReadFile(path); string(data) != "broken{\n{\"tail\"\n" {
		t.Fatalf("got %q", data)
	}
}

func TestLineSetRefusesMalformed(t *testing.T) {
	l := Line{N: 3, Raw: []byte("nope"), Err: ErrMalformed}
	if err := l.Set("x", 1); !errors.Is(err, ErrMalformed) {
		t.Fatalf("got %v", err)
	}
	l = Line{Raw: []byte(`{"a":1,"a":2,"z":{"k":1.50}}`), Value: map[string]any{}}
	if err := l.Set("a", "x"); err != nil {
		t.Fatal(err)
	}
	if string(l.Raw) != `{"a":"x","z":{"k":1.50}}` {
		t.Fatalf("got %s", l.Raw)
	}
}

func TestRewriteMissingDirectory(t *testing.T) {
	path := filepath.Join(t.TempDir(), "a", "b", "x.jsonl")
	calls := 0
	if err := Rewrite(path, func(ls []Line) ([]Line, error) { calls++; return ls, nil }); err != nil || calls != 1 {
		t.Fatalf("%v, %d calls", err, calls)
	}
	if _, err := os.Stat(filepath.Dir(path)); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("an empty rewrite created the directory")
	}
	err := Rewrite(path, func(ls []Line) ([]Line, error) {
		return append(ls, Line{Raw: []byte(`{"new":1}`)}), nil
	})
	if data, _ := os.ReadFile(path); err != nil || string(data) != "{\"new\":1}\n" {
		t.Fatalf("%v %q", err, data)
	}
}
