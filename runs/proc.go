package runs

import (
	"bytes"
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"

	"github.com/pi-actors/pi-actors/internal/proc"
)

// ProcStat is what /proc/<pid>/stat says about a process (see
// internal/proc).
type ProcStat = proc.Stat

// Stat reads /proc/<pid>/stat.
func Stat(pid int) (ProcStat, error) { return proc.Read(pid) }

// StartTime returns a process's start time (clock ticks since boot), 0 if
// it does not exist.
func StartTime(pid int) uint64 {
	st, err := Stat(pid)
	if err != nil {
		return 0
	}
	return st.Start
}

// Alive reports whether pid is a live process that started at start: a pid
// alone could have been reused by an unrelated process.
func Alive(pid int, start uint64) bool {
	if pid <= 0 {
		return false
	}
	st, err := Stat(pid)
	if err != nil || st.State == "Z" || st.State == "X" {
		return false
	}
	return start == 0 || st.Start == start
}

// SessionMembers lists the live processes whose session id is sid (a
// supervisor is a session leader; its leaves and their children stay in
// its session even after it dies).
func SessionMembers(sid int) []int {
	return scanProc(func(_ int, st ProcStat) bool { return st.Sid == sid })
}

// OwnSession reports whether the session whose id is a run's supervisor
// pid is still the run's, so that its members may be killed: the pid is
// dead (its leftovers keep the session id, and Linux hands out no pid
// still in use as a session id) or alive with the recorded start time. A
// live pid with another start time (or none recorded) belongs to an
// unrelated process that reused it, and so does its session.
func OwnSession(pid int, start uint64) bool {
	if pid <= 0 {
		return false
	}
	st, err := Stat(pid)
	if err != nil || st.State == "Z" || st.State == "X" {
		return true
	}
	return start != 0 && st.Start == start
}

// GroupMembers lists the live processes of a process group.
func GroupMembers(pgid int) []int {
	return scanProc(func(_ int, st ProcStat) bool { return st.Pgrp == pgid })
}

// EnvMembers lists the live processes whose environment names the run of
// state directory dir (PI_ACTORS_STATE_DIR=<dir>, set for every run and
// inherited by all it starts): what a run left when its supervisor, the
// subreaper that kept them as descendants, is gone — a process that moved
// to a session of its own included. Only this user's processes are read
// (another's environ is not readable); one that cleared its environment
// is not found; one in the middle of an execve is read again
// (settledEnviron).
func EnvMembers(dir Dir) []int {
	want := []byte("PI_ACTORS_STATE_DIR=" + string(dir) + "\x00")
	self := os.Getpid()
	budget := environWait
	return scanProc(func(pid int, _ ProcStat) bool {
		if pid == self {
			return false
		}
		env, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/environ")
		if err == nil && len(env) == 0 {
			env = settledEnviron(pid, &budget)
		}
		return err == nil && (bytes.HasPrefix(env, want) || bytes.Contains(env, append([]byte{0}, want...)))
	})
}

func scanProc(match func(pid int, st ProcStat) bool) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, err := Stat(pid)
		if err != nil || st.State == "Z" || st.State == "X" {
			continue
		}
		if match(pid, st) {
			out = append(out, pid)
		}
	}
	return out
}

// KillAll sends sig to each pid, ignoring those already gone.
func KillAll(pids []int, sig syscall.Signal) {
	for _, p := range pids {
		if err := syscall.Kill(p, sig); err != nil && !errors.Is(err, syscall.ESRCH) {
			continue
		}
	}
}

// Children lists the direct children of pid (from every thread's
// /proc/<pid>/task/<tid>/children).
func Children(pid int) []int {
	tasks, _ := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	var out []int
	for _, t := range tasks {
		data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + t.Name() + "/children")
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(data)) {
			if c, err := strconv.Atoi(f); err == nil {
				out = append(out, c)
			}
		}
	}
	return out
}

// Descendants lists every live descendant of pid, depth first.
func Descendants(pid int) []int { return DescendantsBut(pid, 0) }
