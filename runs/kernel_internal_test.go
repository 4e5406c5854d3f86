package runs

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/pi-actors/pi-actors/internal/config"
	"github.com/pi-actors/pi-actors/verbs/wire"
)

// kernelInfoPath finds kernel.json where the kernel writes it: in the tmp
// dir of config.AgentDir's agent root, with and without
// $PI_CODING_AGENT_DIR.
func TestKernelInfoPath(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, env := range []string{"", filepath.Join(home, "agent"), "rel/agent", "~/agent", "~"} {
		t.Setenv("PI_CODING_AGENT_DIR", env)
		agent, err := config.AgentDir()
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(env, "~") && agent != filepath.Join(home, env[1:]) {
			t.Errorf("PI_CODING_AGENT_DIR=%q: agent root %q, want it under $HOME (%s)", env, agent, home)
		}
		got, ok := kernelInfoPath()
		if want := filepath.Join(wire.TmpDir(agent), "kernel.json"); !ok || got != want {
			t.Errorf("PI_CODING_AGENT_DIR=%q: %q, want %q", env, got, want)
		}
	}
}

// A process in the middle of an execve reads as having no environment for
// a moment: the scans for a call's mark and for a run's state dir still
// find it. The process here execs itself in a loop, without a pause: scans
// without the re-read missed it 55–61 times in 300; with it, a scan misses
// it only when it is in its next execve each time it is looked at (0–3 in
// 300 on a loaded machine).
func TestScansFindAProcessMidExec(t *testing.T) {
	dir := t.TempDir()
	loop := filepath.Join(dir, "loop.sh")
	if err := os.WriteFile(loop, []byte("exec /bin/sh "+loop+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	mark := "PI_ACTORS_CALL=test-" + filepath.Base(dir)
	cmd := exec.Command("/bin/sh", loop)
	cmd.Env = append(os.Environ(), mark, "PI_ACTORS_STATE_DIR="+dir)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	t.Cleanup(func() {
		syscall.Kill(-pid, syscall.SIGKILL)
		cmd.Wait()
	})
	missed := 0
	for i := range 300 {
		got := marked(mark)
		if i%2 == 1 {
			got = EnvMembers(Dir(dir))
		}
		if len(got) == 0 {
			missed++
		} else if !slices.Equal(got, []int{pid}) {
			t.Fatalf("marked = %v, want [%d]", got, pid)
		}
	}
	t.Logf("%d of 300 scans missed it", missed)
	if missed > 10 {
		t.Fatalf("%d of 300 scans missed the process in its execve loop", missed)
	}
}
