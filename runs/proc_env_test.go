package runs_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"

	"github.com/pi-actors/pi-actors/runs"
)

// EnvMembers finds a run's processes by the state directory in their
// environment, one in a session of its own included, and not another
// run's (a state directory whose name extends this one's).
func TestEnvMembers(t *testing.T) {
	t.Parallel()
	dir := runs.Dir(filepath.Join(t.TempDir(), "r1"))
	start := func(stateDir string) *exec.Cmd {
		cmd := exec.Command("sleep", "60")
		cmd.Env = append(os.Environ(), "PI_ACTORS_STATE_DIR="+stateDir)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd
	}
	mine, other := start(string(dir)), start(string(dir)+"-2")
	got := runs.EnvMembers(dir)
	if !slices.Contains(got, mine.Process.Pid) {
		t.Errorf("EnvMembers = %v, lacks the run's process %d", got, mine.Process.Pid)
	}
	if slices.Contains(got, other.Process.Pid) {
		t.Errorf("EnvMembers = %v holds %d, another run's", got, other.Process.Pid)
	}
}
