package top

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pi-actors/pi-actors/runs"
)

// The real thing under tmux: both binaries built, a kernel, runs, and
// top in an 80×24 pane driven with send-keys and read with
// capture-pane.
func TestTopUnderTmux(t *testing.T) {
	if testing.Short() {
		t.Skip("builds both binaries and drives tmux")
	}
	tmux, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux is not installed (apt-get install tmux): the end-to-end test of top is skipped")
	}
	bin := t.TempDir()
	build := exec.Command("go", "build", "-o", bin+"/", "../../cmd/pi-actors", "../../cmd/pi-actors-kernel", "../../cmd/pi-actors-front", "../../cmd/pi-actors-supervise")
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	agent, err := os.MkdirTemp("", "patop") // short: the kernel's socket path is limited
	if err != nil {
		t.Fatal(err)
	}
	env := []string{"PI_CODING_AGENT_DIR=" + agent, "PATH=" + bin + ":" + os.Getenv("PATH"), "HOME=" + agent, "TERM=xterm-256color",
		"PI_ACTORS_SESSION=", "PI_ACTORS_RUN_ID=", "PI_ACTORS_KERNEL_BIN=", "PI_ACTORS_BIN="}
	pa := func(args ...string) string {
		t.Helper()
		c := exec.Command(filepath.Join(bin, "pi-actors"), args...)
		c.Env = append(os.Environ(), env...)
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("pi-actors %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	sock := fmt.Sprintf("patop%d", os.Getpid())
	tm := func(args ...string) (string, error) {
		out, err := exec.Command(tmux, append([]string{"-L", sock}, args...)...).CombinedOutput()
		return string(out), err
	}
	t.Cleanup(func() {
		tm("kill-server")
		stopAll(agent)
		os.RemoveAll(agent)
	})

	pa("spawn", "as=run:ticker", "template=sh -c {s}", `values:={"s":"i=0; while true; do i=$((i+1)); echo tick-$i; sleep 0.2; done"}`)
	pa("spawn", "as=run:sleeper", "template=sleep 300")

	cmd := fmt.Sprintf("env %s %s top", strings.Join(env, " "), filepath.Join(bin, "pi-actors"))
	if out, err := tm("new-session", "-d", "-s", "top", "-x", "80", "-y", "24", cmd); err != nil {
		t.Fatalf("tmux new-session: %v\n%s", err, out)
	}
	screen := func() string {
		out, _ := tm("capture-pane", "-p", "-t", "top")
		return out
	}
	waitFor := func(what string, cond func(string) bool) string {
		t.Helper()
		deadline := time.Now().Add(15 * time.Second)
		for {
			s := screen()
			if cond(s) {
				return s
			}
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s; the screen:\n%s", what, s)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	keys := func(k ...string) {
		t.Helper()
		if out, err := tm(append([]string{"send-keys", "-t", "top"}, k...)...); err != nil {
			t.Fatalf("send-keys %v: %v\n%s", k, err, out)
		}
	}

	s := waitFor("both runs listed", func(s string) bool {
		return strings.Contains(s, "ticker") && strings.Contains(s, "sleeper") && strings.Contains(s, "2 live")
	})
	for i, l := range strings.Split(strings.TrimRight(s, "\n"), "\n") {
		if w := len([]rune(l)); w > 80 {
			t.Errorf("line %d wider than 80: %q", i+1, l)
		}
	}
	waitFor("the ticker's output line", func(s string) bool { return strings.Contains(s, "tick-") })

	keys("Enter") // detail pane of the first run (ticker)
	waitFor("the detail pane", func(s string) bool {
		return strings.Contains(s, "── run:ticker") && strings.Contains(s, "stdout │ tick-")
	})
	keys("l")
	waitFor("the log view", func(s string) bool { return strings.Contains(s, "run:ticker stdout · following") })
	keys("Escape")
	waitFor("back to the list", func(s string) bool { return strings.Contains(s, "RUN ") })

	keys("/", "s", "l", "e", "e", "p", "Enter")
	waitFor("the filtered list", func(s string) bool { return strings.Contains(s, `filter "sleep"`) && !strings.Contains(s, "ticker ") })
	keys("K")
	waitFor("the kill question", func(s string) bool { return strings.Contains(s, "kill run:sleeper? y") })
	keys("y")
	waitFor("run:sleeper killed", func(s string) bool {
		return strings.Contains(s, "kill: to=run:sleeper") && strings.Contains(s, "killed")
	})

	keys("q")
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := tm("has-session", "-t", "top"); err != nil {
			break // top quit, its pane and session closed
		}
		if time.Now().After(deadline) {
			t.Fatalf("top did not quit on q; the screen:\n%s", screen())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// stopAll stops the kernel and kills every run of the agent root.
func stopAll(agent string) {
	filepath.WalkDir(runs.Root(agent), func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() != runs.RunFile {
			return nil
		}
		if m, err := runs.Dir(filepath.Dir(p)).Meta(); err == nil && m.Pid > 0 && runs.Alive(m.Pid, m.PidStart) {
			runs.KillAll(runs.SessionMembers(m.Pid), syscall.SIGKILL)
		}
		return nil
	})
	data, err := os.ReadFile(filepath.Join(agent, "tmp", "pi-actors", "kernel.json"))
	if err != nil {
		return
	}
	var info struct {
		Pid      int    `json:"pid"`
		PidStart uint64 `json:"pid_start_time"`
	}
	if json.Unmarshal(data, &info) == nil && runs.Alive(info.Pid, info.PidStart) {
		syscall.Kill(info.Pid, syscall.SIGKILL)
	}
}
