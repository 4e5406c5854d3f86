package runs

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

func TestManifest(t *testing.T) {
	dir := t.TempDir()
	report := filepath.Join(dir, "report.md")
	os.WriteFile(report, []byte("# ok\n"), 0o600)
	arts := map[string]any{
		"report":  map[string]any{"path": report, "kind": "report", "media_type": "text/markdown", "required": true},
		"missing": filepath.Join(dir, "nope.txt"),
		"folder":  dir,
		"rel":     "report.md", // from the run's working directory
	}
	in := &Info{Meta: &Meta{Cwd: dir, Artifacts: arts}}
	m := Manifest(in, true)
	sum := sha256.Sum256([]byte("# ok\n"))
	r := m["report"]
	if !r.Exists || r.Kind != "report" || r.MediaType != "text/markdown" || !r.Required || r.Size == nil || *r.Size != 5 || r.SHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("report: %+v", r)
	}
	if e := m["missing"]; e.Exists || e.Size != nil || e.SHA256 != "" || e.Path != filepath.Join(dir, "nope.txt") {
		t.Errorf("missing: %+v", e)
	}
	if e := m["folder"]; !e.Exists || e.Size != nil || e.SHA256 != "" {
		t.Errorf("a directory has no size or hash: %+v", e)
	}
	if e := m["rel"]; !e.Exists || e.Path != "report.md" || e.Size == nil || *e.Size != 5 {
		t.Errorf("a path relative to the run's cwd: %+v", e)
	}
	if e := Manifest(in, false)["report"]; e.SHA256 != "" || e.Size == nil {
		t.Errorf("without hashing: %+v", e)
	}
	b, _ := json.Marshal(m["missing"])
	if string(b) != `{"exists":false,"path":"`+filepath.Join(dir, "nope.txt")+`"}` {
		t.Errorf("json of a missing artifact: %s", b)
	}
	if got := ArtifactNames(arts); !reflect.DeepEqual(got, []string{"folder", "missing", "rel", "report"}) {
		t.Errorf("names: %v", got)
	}
}

func TestLastOutputAndActivity(t *testing.T) {
	d := Dir(t.TempDir())
	if s, l := LastOutput(d); s != "" || l != "" || !LastActivity(d).IsZero() {
		t.Fatalf("empty dir: %q %q %v", s, l, LastActivity(d))
	}
	os.WriteFile(d.Path(StdoutLog), []byte("one\ntwo\n\n  \n"), 0o600)
	old := time.Now().Add(-time.Hour)
	os.Chtimes(d.Path(StdoutLog), old, old)
	if s, l := LastOutput(d); s != "stdout" || l != "two" {
		t.Errorf("stdout only: %q %q", s, l)
	}
	os.WriteFile(d.Path(StderrLog), []byte("boom\n"), 0o600)
	if s, l := LastOutput(d); s != "stderr" || l != "boom" {
		t.Errorf("stderr written last: %q %q", s, l)
	}
	if a := LastActivity(d); time.Since(a) > time.Minute {
		t.Errorf("last activity %v is the stderr write", a)
	}
}

func TestTreeUsage(t *testing.T) {
	c := exec.Command("sleep", "30")
	if err := c.Start(); err != nil {
		t.Skip(err)
	}
	t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	u := TreeUsage(os.Getpid())
	if u.Pids < 2 || u.RSSBytes == 0 || u.CPUPercent < 0 {
		t.Errorf("usage of this test and its sleep child: %+v", u)
	}
	if u := TreeUsage(0); u != (Usage{}) {
		t.Errorf("pid 0: %+v", u)
	}
}

func TestLiveLeaves(t *testing.T) {
	me, start := os.Getpid(), StartTime(os.Getpid())
	c := exec.Command("sleep", "30")
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Process.Kill(); c.Wait() })
	child := c.Process.Pid
	d := Dir(t.TempDir())
	// progress.json knows this process (and a reused pid that is not it);
	// events.jsonl adds the child started since, and a leaf that is done.
	in := &Info{Dir: d, Progress: &Progress{Leaves: []Leaf{{Pid: me, Start: start, Command: "me"}, {Pid: me + 1, Start: 1, Command: "reused pid"}}}}
	events := fmt.Sprintf(`{"event":"command.start","pid":%d,"start":%d,"command":"sleep 30"}
{"event":"command.start","pid":%d,"start":%d,"command":"gone"}
{"event":"command.done","pid":%d,"code":0}
not json
`, child, StartTime(child), me, start, me)
	if err := os.WriteFile(d.Path(EventsFile), []byte(events), 0o600); err != nil {
		t.Fatal(err)
	}
	got := LiveLeaves(in)
	if len(got) != 1 || got[0].Pid != child || got[0].Command != "sleep 30" {
		t.Errorf("live leaves: %+v (want only the child: the done event removes %d)", got, me)
	}
	// Without events, progress.json alone.
	os.Remove(d.Path(EventsFile))
	got = LiveLeaves(in)
	if len(got) != 1 || got[0].Command != "me" {
		t.Errorf("live leaves from progress.json: %+v", got)
	}
	if got := LiveLeaves(&Info{Dir: d}); got != nil {
		t.Errorf("no progress, no events: %+v", got)
	}
}

// decodeEntry must agree with encoding/json on every line it accepts.
var entryLines = []string{
	`{"run":"a","state_dir":"/x/a","status":"done","ownerId":"s1","recipe":"r","tool":"t","updated_at":"2026-01-02T03:04:05.123456789Z"}`,
	`{"run":"a","state_dir":"/x/a","status":"archived","updated_at":"2026-01-02T03:04:05Z","removed":true}`,
	`{"updated_at":"2026-01-02T03:04:05+02:00","status":"running","state_dir":"/x/b","run":"b"}`,
	`{"run":"a","state_dir":"/x/a","removed":false,"extra":"ignored"}`,
	`{"run":"a\"b","state_dir":"/x"}`,
	`{"run":"a","state_dir":"/x","n":1}`,
	`{"run":"a", "state_dir":"/x"}`,
	`{"run":"a","state_dir":"/x",}`,
	`{"run":true,"state_dir":"/x"}`,
	`{"removed":"yes","state_dir":"/x"}`,
	`{"run":"a","state_dir":"/x","updated_at":"yesterday"}`,
	`{"run":"a","state_dir":"/x"`,
	`{"run":"a","state_dir":"/x"}}`,
	`{}`,
	`{"`,
	`[]`,
	``,
}

func TestDecodeEntryAgreesWithJSON(t *testing.T) {
	for _, line := range entryLines {
		checkDecodeEntry(t, []byte(line))
	}
}

func FuzzDecodeEntry(f *testing.F) {
	for _, line := range entryLines {
		f.Add([]byte(line))
	}
	f.Fuzz(func(t *testing.T, b []byte) { checkDecodeEntry(t, b) })
}

func checkDecodeEntry(t *testing.T, b []byte) {
	var fast, slow Entry
	if !decodeEntry(b, &fast) {
		return
	}
	if err := json.Unmarshal(b, &slow); err != nil {
		t.Fatalf("decodeEntry accepted %q, encoding/json refuses it: %v", b, err)
	}
	if !fast.UpdatedAt.Equal(slow.UpdatedAt) {
		t.Fatalf("%q: updated_at %v, encoding/json %v", b, fast.UpdatedAt, slow.UpdatedAt)
	}
	fast.UpdatedAt, slow.UpdatedAt = time.Time{}, time.Time{}
	if fast != slow {
		t.Fatalf("%q:\n fast %+v\n json %+v", b, fast, slow)
	}
}

func TestIndexReadsFastAndSlowLines(t *testing.T) {
	x := &Index{Root: t.TempDir()}
	lines := `{"run":"a","state_dir":"/x/a","status":"done","updated_at":"2026-01-02T03:04:05Z"}
{"run":"b","state_dir":"/x/b", "status":"failed","ownerId":"s\u0031","updated_at":"2026-01-02T03:04:06Z"}
torn{"run
{"run":"c","state_dir":"/x/c","status":"done","updated_at":"2026-01-02T03:04:07Z"}
{"run":"c","state_dir":"/x/c","removed":true}
`
	os.WriteFile(filepath.Join(x.Root, IndexFile), []byte(lines), 0o600)
	got, err := x.Entries()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Run != "b" || got[0].OwnerID != "s1" || got[1].Run != "a" {
		t.Errorf("entries: %+v", got)
	}
}
