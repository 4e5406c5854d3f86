package piext

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pi-actors/pi-actors/extensions/pi/pitest"
)

// TestRealPiExitStopsRecipeCalls: pi ends — SIGTERM (a terminal closing,
// a supervisor stopping it) or SIGKILL — while a recipe tool call runs
// through the bridge. The call's command does not outlive pi: the bridge
// stops it (TERM, grace, KILL) and only then exits.
func TestRealPiExitStopsRecipeCalls(t *testing.T) {
	for i, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGKILL} {
		t.Run(sig.String(), func(t *testing.T) {
			secs := strconv.Itoa(317 + i) // an argv no other test's process has
			r := newRealPi(t, call("slowtool", map[string]any{"secs": secs}).On("^sleep please$"))
			if err := os.MkdirAll(filepath.Join(r.agent, "recipes"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(r.agent, "recipes", "slowtool.json"), []byte(`{"description":"sleeps","args":["secs=300"],"template":"sleep {secs}"}`), 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(r.node, pitest.Args(r.modules, "sleep please")...)
			cmd.Dir, cmd.Env = r.work, r.env
			cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			defer syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			deadline := time.Now().Add(60 * time.Second)
			for len(pidsOf("sleep", secs)) == 0 {
				if time.Now().After(deadline) {
					t.Fatalf("the recipe never started\n%s\nlog:%s", out.Bytes(), r.extLog())
				}
				time.Sleep(20 * time.Millisecond)
			}
			leaf := pidsOf("sleep", secs)
			t.Cleanup(func() {
				for _, p := range pidsOf("sleep", secs) {
					syscall.Kill(p, syscall.SIGKILL)
				}
			})
			// pi alone gets the signal (its bridge is in pi's group, the
			// recipe's leaf in a group of its own).
			cmd.Process.Signal(sig)
			cmd.Wait()
			deadline = time.Now().Add(20 * time.Second)
			for len(pidsOf("sleep", secs)) > 0 {
				if time.Now().After(deadline) {
					t.Fatalf("pi ended (%v) 20 s ago; the recipe call's command (pids %v) still runs", sig, leaf)
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}

// pidsOf lists the live processes (not zombies) whose argv is exactly argv.
func pidsOf(argv ...string) []int {
	want := strings.Join(argv, "\x00") + "\x00"
	var out []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || string(b) != want {
			continue
		}
		if st, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); err == nil && !strings.Contains(string(st), ") Z ") {
			out = append(out, pid)
		}
	}
	return out
}
