package mailbox

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// FuzzReadJSONL feeds arbitrary file contents through the reader, the
// tail reader, torn-tail repair and a rewrite. None may panic; every
// complete line must be reported byte for byte; an append must land intact
// after whatever was there; a rewrite must keep every malformed line.
func FuzzReadJSONL(f *testing.F) {
	for _, seed := range []string{
		"",
		"{}\n",
		"{\"a\":1}\n{\"b\":\n",
		"{\"a\":1}\n{\"b\":",
		"not json\n\n  \n{\"x\":[1,2,{\"y\":null}]}\n",
		"{\"a\":1} {\"b\":2}\n[1]\n\"s\"\nnull\n",
		"{\"id\":\"x\",\"status\":\"queued\"}\r\n{\"dup\":1,\"dup\":2}\n",
		"{\"bad\":\"\xff\xfe\"}\n",
		"{\"n\":12345678901234567890,\"f\":1.50e3}\n{",
		"\n\n\n",
		"{\"a\":\"\\u2028\"}",
		"\u00a0\n\v\n\f\n\u0085",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(fuzzDir(t), "f.jsonl")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		lines, err := Read(path)
		if err != nil {
			t.Fatal(err)
		}
		want := expectedLines(data)
		if len(lines) != len(want) {
			t.Fatalf("Read: %d lines, want %d", len(lines), len(want))
		}
		for i, l := range lines {
			if !bytes.Equal(l.Raw, want[i].raw) || l.Off != want[i].off || l.Partial != want[i].partial {
				t.Fatalf("line %d: got %q@%d partial=%v, want %q@%d", i, l.Raw, l.Off, l.Partial, want[i].raw, want[i].off)
			}
			if (l.Err == nil) == (l.Value == nil) {
				t.Fatalf("line %d: Err %v with Value %v", i, l.Err, l.Value)
			}
		}
		for _, n := range []int{1, 2, len(lines)} {
			tail, err := Tail(path, n)
			if err != nil {
				t.Fatal(err)
			}
			suffix := lines[max(0, len(lines)-n):]
			if n == 0 {
				suffix = nil
			}
			if len(tail) != len(suffix) {
				t.Fatalf("Tail(%d): %d lines, want %d", n, len(tail), len(suffix))
			}
			for i := range tail {
				if !bytes.Equal(tail[i].Raw, suffix[i].Raw) || tail[i].Off != suffix[i].Off || (tail[i].Err == nil) != (suffix[i].Err == nil) {
					t.Fatalf("Tail(%d)[%d] differs from Read", n, i)
				}
			}
		}

		// Torn-tail repair: the old lines stay, the new record is intact.
		if err := Append(path, map[string]any{"fuzz": "appended"}); err != nil {
			t.Fatal(err)
		}
		after, err := Read(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(after) != len(lines)+1 {
			t.Fatalf("after append: %d lines, want %d", len(after), len(lines)+1)
		}
		for i := range lines {
			if !bytes.Equal(after[i].Raw, lines[i].Raw) || after[i].Partial {
				t.Fatalf("append changed line %d: %q -> %q", i, lines[i].Raw, after[i].Raw)
			}
		}
		last := after[len(after)-1]
		if last.Err != nil || last.Value["fuzz"] != "appended" || last.Partial {
			t.Fatalf("appended record damaged: %q %v", last.Raw, last.Err)
		}

		// A rewrite that touches every record keeps every malformed line.
		err = Rewrite(path, func(ls []Line) ([]Line, error) {
			for i := range ls {
				if ls[i].Err == nil {
					if err := ls[i].Set("seen", true); err != nil {
						return nil, err
					}
				}
			}
			return ls, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		final, err := Read(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(final) != len(after) {
			t.Fatalf("after rewrite: %d lines, want %d", len(final), len(after))
		}
		for i := range after {
			if after[i].Err != nil {
				if !bytes.Equal(final[i].Raw, after[i].Raw) || final[i].Err == nil {
					t.Fatalf("malformed line %d changed: %q -> %q", i, after[i].Raw, final[i].Raw)
				}
			} else if final[i].Err != nil || final[i].Value["seen"] != true {
				t.Fatalf("record %d after rewrite: %q %v", i, final[i].Raw, final[i].Err)
			}
		}
	})
}

// fuzzDir is a fresh directory for one input of a fuzz target, on a
// memory file system when there is one (/dev/shm): there fsync returns at
// once, so an input's run never waits on the disk. The fuzzing engine
// gives each input 10 s; a worker past that panics ("deadlocked!"), and
// in the baseline-coverage pass over the cached corpus the failure names
// the entry but writes no input to testdata. FuzzReadJSONL's rewrite
// fsyncs a file and its directory, which a busy shared disk can stall:
// that is how a 40-second run on a loaded machine once failed without an
// input (the target found nothing in 106,000 inputs since).
func fuzzDir(t *testing.T) string {
	if fi, err := os.Stat("/dev/shm"); err == nil && fi.IsDir() {
		if d, err := os.MkdirTemp("/dev/shm", "pa-fuzz-"); err == nil {
			t.Cleanup(func() { os.RemoveAll(d) })
			return d
		}
	}
	return t.TempDir()
}

type wantLine struct {
	raw     []byte
	off     int64
	partial bool
}

// expectedLines is the reference splitter: non-blank "\n"-separated
// segments, the last one partial when the data does not end in "\n".
func expectedLines(data []byte) []wantLine {
	var out []wantLine
	segs := bytes.Split(data, []byte("\n"))
	off := int64(0)
	for i, s := range segs {
		partial := i == len(segs)-1
		if len(bytes.Trim(s, " \t\r")) > 0 { // only JSON whitespace is blank
			out = append(out, wantLine{s, off, partial})
		}
		off += int64(len(s)) + 1
	}
	return out
}

// FuzzPeek: whenever Peek answers and the line decodes, the answer is the
// decoded field; a queued record's status always peeks or decodes to
// queued.
func FuzzPeek(f *testing.F) {
	for _, seed := range []string{
		`{"id":"a","status":"queued"}`,
		`{"status":"handled","body":{"status":"queued"}}`,
		`{"body":"{\"status\":\"x\"}","status":"claimed"}`,
		`{"status":"queued","status":"failed"}`,
		`{"st\u0061tus":"failed"}`,
		`{"status":"qu\u0065ued"}`,
		`{"status":1}`,
		`{"id":"a","status":""}`,
		`{"a":[1,{"b":"]"}],"status" : "sent" }`,
		`{"a":tru,"status":"x"}`,
		`{"status":"x"`,
		`{}`,
		`[1]`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		l := Line{Raw: raw}
		got, ok := l.Peek("status")
		l.Decode()
		if ok && l.Err == nil && Record(l.Value).Status() == StatusQueued && got != "" && got != StatusQueued {
			t.Fatalf("Peek(%q) = %q skips a record Status() calls queued", raw, got)
		}
		if !ok || l.Err != nil {
			return
		}
		if v, isStr := l.Value["status"].(string); !isStr || v != got {
			t.Fatalf("Peek(%q) = %q, Decode gives %#v", raw, got, l.Value["status"])
		}
	})
}
