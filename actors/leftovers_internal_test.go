package actors

import (
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/pi-actors/pi-actors/runs"
)

// A run whose supervisor is gone: its session is killed only while the
// supervisor's pid is dead or still the supervisor (same start time). A
// live pid with another start time is an unrelated process that reused
// the pid — its session is its own and survives.
func TestKillLeftoversSkipsReusedSupervisorPid(t *testing.T) {
	start := func() *exec.Cmd {
		c := exec.Command("sleep", "60")
		c.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		if err := c.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Process.Kill(); c.Wait() })
		return c
	}
	k := &Kernel{}
	other := start()
	st := runs.StartTime(other.Process.Pid)
	if st == 0 {
		t.Fatal("no start time")
	}
	// A lost run's meta naming that pid with the old supervisor's start
	// time: the pid was reused.
	in := &runs.Info{Dir: runs.Dir(t.TempDir()), Meta: &runs.Meta{Run: "lost", Pid: other.Process.Pid, PidStart: st - 1}}
	in.Meta.StateDir = string(in.Dir)
	if n := k.killLeftovers(in); n != 0 {
		t.Errorf("killed %d processes of a session that reused the supervisor's pid", n)
	}
	time.Sleep(50 * time.Millisecond)
	if !runs.Alive(other.Process.Pid, st) {
		t.Fatal("the unrelated process whose pid reused the supervisor's was killed")
	}
	// The same pid with its own start time is the run's supervisor: its
	// session goes.
	in.Meta.PidStart = st
	if n := k.killLeftovers(in); n != 1 {
		t.Errorf("killed %d, want the session's 1 process", n)
	}
	done := make(chan error, 1)
	go func() { done <- other.Wait() }()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("the run's own session was not killed")
	}
}
