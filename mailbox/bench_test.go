package mailbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var benchEnv = Envelope{To: "run:bench", Type: "task.review", From: "run:lead",
	Body: map[string]any{"file": "internal/x.go", "note": strings.Repeat("n", 120)}}

// BenchmarkInboxAppend200 is the figure the mailbox layer is held to: one
// Inbox.Append to each of 200 different inboxes, as a fan-out from one
// sender does. Each iteration uses 200 fresh state directories (created
// untimed), so the figure includes creating each inbox and its lock file.
// The baseline is the same 200 appends as bare open(O_APPEND)+write+close,
// measured in the same iteration; x-raw is the ratio.
func BenchmarkInboxAppend200(b *testing.B) {
	root := b.TempDir()
	var inbox, raw time.Duration
	line, _ := marshal(benchEnv)
	line = append(line, '\n')
	for it := range b.N {
		dirs := make([]string, 200)
		for i := range dirs {
			dirs[i] = filepath.Join(root, fmt.Sprintf("%d-%d", it, i))
			os.MkdirAll(filepath.Join(dirs[i], "raw"), 0o700)
		}
		start := time.Now()
		for _, d := range dirs {
			f, err := os.OpenFile(filepath.Join(d, "raw", "inbox.jsonl"), os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
			if err != nil {
				b.Fatal(err)
			}
			f.Write(line)
			f.Close()
		}
		raw += time.Since(start)
		start = time.Now()
		for _, d := range dirs {
			if _, _, err := NewInbox(filepath.Join(d, "inbox.jsonl")).Append(benchEnv); err != nil {
				b.Fatal(err)
			}
		}
		inbox += time.Since(start)
	}
	b.ReportMetric(float64(inbox.Microseconds())/1000/float64(b.N), "ms/200-new-inboxes")
	b.ReportMetric(float64(raw.Microseconds())/1000/float64(b.N), "raw-ms/200")
	b.ReportMetric(float64(inbox)/float64(raw), "x-raw")
}

// BenchmarkInboxAppend200Existing: the same fan-out to 200 inboxes that
// already exist (the steady state).
func BenchmarkInboxAppend200Existing(b *testing.B) {
	root := b.TempDir()
	inboxes := make([]*Inbox, 200)
	for i := range inboxes {
		inboxes[i] = NewInbox(filepath.Join(root, fmt.Sprint(i), "inbox.jsonl"))
		inboxes[i].Append(benchEnv)
	}
	b.ResetTimer()
	for range b.N {
		for _, in := range inboxes {
			if _, _, err := in.Append(benchEnv); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/200")
}

// BenchmarkAppend: one JSONL line to an existing file, without and with
// fsync.
func BenchmarkAppend(b *testing.B) {
	rec := map[string]any{"event": "command.done", "code": 0, "command": "go test ./..."}
	for _, sync := range []bool{false, true} {
		b.Run(fmt.Sprintf("sync=%v", sync), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "events.jsonl")
			Append(path, rec)
			b.ResetTimer()
			for range b.N {
				var err error
				if sync {
					err = AppendSync(path, rec)
				} else {
					err = Append(path, rec)
				}
				if err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkInboxAppendCallerID: an idempotent append (caller id) scans the
// inbox for the id. The inbox holds 1000 records (reset untimed every 500
// appends); new: the id is new (a full scan), dup: a retry of a stored id.
func BenchmarkInboxAppendCallerID(b *testing.B) {
	for _, mode := range []string{"new", "dup"} {
		b.Run(mode, func(b *testing.B) {
			in := NewInbox(filepath.Join(b.TempDir(), "inbox.jsonl"))
			e := benchEnv
			for i := range 1000 {
				e.ID = fmt.Sprintf("old-%d", i)
				in.Append(e)
			}
			base, _ := os.ReadFile(in.Path)
			b.ResetTimer()
			for i := range b.N {
				if mode == "new" && i%500 == 499 {
					b.StopTimer()
					os.WriteFile(in.Path, base, 0o600)
					b.StartTimer()
				}
				e.ID = fmt.Sprintf("req-%d", i)
				if mode == "dup" {
					e.ID = fmt.Sprintf("old-%d", i%1000)
				}
				if _, dup, err := in.Append(e); err != nil || dup != (mode == "dup") {
					b.Fatal(dup, err)
				}
			}
		})
	}
}

// BenchmarkClaimDone: claim one record and mark it handled (two atomic
// rewrites, each with fsync) in an inbox of 100 records.
func BenchmarkClaimDone(b *testing.B) {
	in := NewInbox(filepath.Join(b.TempDir(), "inbox.jsonl"))
	for range 100 {
		in.Append(benchEnv)
	}
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		in.Append(benchEnv)
		b.StartTimer()
		r, err := in.Claim("bench")
		if err != nil || r == nil {
			b.Fatal(r, err)
		}
		if err := in.Done(r.ID(), StatusHandled, nil); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkTail: the last 40 lines of a 100 000-line file, against Read
// of the whole file as the baseline.
func BenchmarkTail(b *testing.B) {
	path := filepath.Join(b.TempDir(), "inbox.jsonl")
	var sb strings.Builder
	line, _ := marshal(benchEnv)
	for range 100_000 {
		sb.Write(line)
		sb.WriteByte('\n')
	}
	os.WriteFile(path, []byte(sb.String()), 0o600)
	b.Run("tail40", func(b *testing.B) {
		for range b.N {
			if l, err := Tail(path, 40); err != nil || len(l) != 40 {
				b.Fatal(len(l), err)
			}
		}
	})
	b.Run("read-all", func(b *testing.B) {
		for range b.N {
			if _, err := Read(path); err != nil {
				b.Fatal(err)
			}
		}
	})
}
