package fsutil

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/pi-actors/pi-actors/internal/testproc"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// helperEnv selects a helper process in this test binary (TestMain).
const helperEnv = "PI_ACTORS_FSUTIL_HELPER"

// TestMain doubles as the helper processes: with helperEnv set the binary
// runs the named helper instead of the tests.
func TestMain(m *testing.M) {
	if name := os.Getenv(helperEnv); name != "" {
		os.Exit(helper(name, os.Args[1:]))
	}
	testproc.Watchdog()
	os.Exit(m.Run())
}

// fsizeLimit is the RLIMIT_FSIZE the full-disk helper runs under: any
// write past this offset fails with EFBIG, as a full disk fails with
// ENOSPC part way through a file.
const fsizeLimit = 4096

// helper runs a helper process and returns its exit status.
//
//	write-json-limited PATH N  under RLIMIT_FSIZE=fsizeLimit (SIGXFSZ
//	                           ignored), WriteJSON a document of N strings
//	                           to PATH; print the error, exit 3 if any
func helper(name string, args []string) int {
	switch name {
	case "write-json-limited":
		if len(args) != 2 {
			fmt.Fprintln(os.Stderr, "usage: write-json-limited PATH N")
			return 2
		}
		var n int
		fmt.Sscan(args[1], &n)
		// Without this the kernel kills the process at the first write past
		// the limit instead of failing the write.
		signal.Ignore(syscall.SIGXFSZ)
		lim := syscall.Rlimit{Cur: fsizeLimit, Max: fsizeLimit}
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
			fmt.Fprintln(os.Stderr, "setrlimit:", err)
			return 2
		}
		doc := map[string]any{"items": bigItems(n)}
		if err := WriteJSON(args[0], doc, 0o600); err != nil {
			fmt.Println(err)
			return 3
		}
		fmt.Println("ok")
		return 0
	}
	fmt.Fprintf(os.Stderr, "unknown helper %q\n", name)
	return 2
}

func bigItems(n int) []string {
	items := make([]string, n)
	for i := range items {
		items[i] = strings.Repeat("x", 60) + fmt.Sprint(i)
	}
	return items
}

// runHelper runs a helper process and returns its combined output and
// exit status.
func runHelper(t *testing.T, name string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), helperEnv+"="+name)
	out, err := cmd.CombinedOutput()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("run helper %s: %v", name, err)
		}
		code = ee.ExitCode()
	}
	return string(out), code
}

// A full disk (here: the file size limit) part way through a state file
// must fail the write with an error naming the file, leave the previous
// document intact and leave no temporary file behind.
func TestWriteJSONFullDiskKeepsOldContent(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "progress.json")
	if err := WriteJSON(path, map[string]any{"phase": "running", "completed": 1}, 0o600); err != nil {
		t.Fatal(err)
	}
	old, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}

	// ~70 bytes per item: well past the 4 KiB limit.
	out, code := runHelper(t, "write-json-limited", path, "1000")
	if code != 3 {
		t.Fatalf("helper exit %d, want 3 (WriteJSON error); output:\n%s", code, out)
	}
	t.Logf("WriteJSON under a full disk: %s", strings.TrimSpace(out))
	if !strings.Contains(out, path) {
		t.Errorf("error does not name the file %s: %s", path, out)
	}
	if !strings.Contains(out, "file too large") {
		t.Errorf("error does not say what went wrong (EFBIG): %s", out)
	}

	now, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("the old file is gone: %v", err)
	}
	if !bytes.Equal(now, old) {
		t.Fatalf("old content changed:\nbefore %q\nafter  %q", old, now)
	}
	var v map[string]any
	if err := json.Unmarshal(now, &v); err != nil {
		t.Fatalf("file is no longer valid JSON: %v", err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 1 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Fatalf("files left in %s: %v (want only progress.json: no temp file)", dir, names)
	}
}

// The same limit with a document that fits: the helper really writes
// (the failure above is the limit, not the helper).
func TestWriteJSONUnderLimitSucceeds(t *testing.T) {
	path := filepath.Join(t.TempDir(), "run.json")
	out, code := runHelper(t, "write-json-limited", path, "10")
	if code != 0 {
		t.Fatalf("helper exit %d: %s", code, out)
	}
	var v struct{ Items []string }
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &v); err != nil || len(v.Items) != 10 {
		t.Fatalf("written document: %v, %d items", err, len(v.Items))
	}
}

// A failing write of a brand-new file leaves nothing behind either: no
// half-written file under the final name.
func TestWriteJSONFullDiskNewFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "result.json")
	out, code := runHelper(t, "write-json-limited", path, "1000")
	if code != 3 {
		t.Fatalf("helper exit %d, want 3; output:\n%s", code, out)
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 0 {
		t.Fatalf("%d file(s) left after a failed first write (%s)", len(ents), ents[0].Name())
	}
}
