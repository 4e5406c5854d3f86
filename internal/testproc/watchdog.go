package testproc

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"syscall"
	"time"
)

// OwnerVar marks every process a test binary starts, through the
// environment they inherit: PA_TEST_OWNER=<mark>. A script's environment
// (testscript) is built afresh, so its Setup passes the variable on.
const OwnerVar = "PA_TEST_OWNER"

// watchdogVar turns a copy of the test binary into its watchdog.
const watchdogVar = "PA_TEST_WATCHDOG"

// watchdogPipe is held open for the test binary's whole life: the
// watchdog reads end of file once the binary is gone.
var watchdogPipe *os.File

// Watchdog makes sure nothing a test binary started outlives it, however
// it ends — a test's own clean-up does not run when go test kills the
// binary for its -timeout. Call it first in TestMain (after the helper
// dispatch): it marks this process's environment (OwnerVar) and starts a
// copy of the test binary, in a session of its own, that waits for this
// one to end and then kills every process carrying the mark (with its
// process group when it leads one). In that copy, Watchdog does the
// waiting and exits.
func Watchdog() {
	if mark := os.Getenv(watchdogVar); mark != "" {
		os.Exit(watch(mark))
	}
	if os.Getenv(OwnerVar) != "" {
		return // started by a test binary that already has one
	}
	mark := fmt.Sprintf("%d-%d", os.Getpid(), time.Now().UnixNano())
	r, w, err := os.Pipe()
	if err != nil {
		return
	}
	defer r.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), watchdogVar+"="+mark)
	cmd.Stdin = r // stdout and stderr: /dev/null, so go test waits for no pipe
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		w.Close()
		return
	}
	watchdogPipe = w
	os.Setenv(OwnerVar, mark)
}

// watch waits for the test binary to end (stdin at end of file), then
// kills what carries its mark until nothing does.
func watch(mark string) int {
	io.Copy(io.Discard, os.Stdin)
	for range 50 {
		pids := marked(mark)
		if len(pids) == 0 {
			return 0
		}
		for _, pid := range pids {
			if pgid, err := syscall.Getpgid(pid); err == nil && pgid == pid {
				syscall.Kill(-pid, syscall.SIGKILL)
			}
			syscall.Kill(pid, syscall.SIGKILL)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return 1
}

// marked lists the live processes (this one aside) whose environment
// holds OwnerVar=mark.
func marked(mark string) []int {
	want := []byte(OwnerVar + "=" + mark)
	return slices.DeleteFunc(withEnv(func(kv []byte) bool { return bytes.Equal(kv, want) }),
		func(pid int) bool { return !Alive(pid) })
}
