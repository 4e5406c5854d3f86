package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/pi-actors/pi-actors/runs"
	"github.com/pi-actors/pi-actors/verbs/wire"
)

// Ending the demo: nothing it started is left behind.

// cleanup stops every run of the private root, then its kernel, checks
// that no process of the demo is left, and removes the root (unless keep).
// shown prints the kernel stop as the last step of the tour.
func (d *demo) cleanup(keep, shown bool) error {
	ctx := d.ctx
	d.ctx = context.Background()
	defer func() { d.ctx = ctx }()
	deadline := time.Now().Add(demoCleanup)
	var problems []string

	// Every live run: control.kill through the kernel, else by hand.
	dirs, _ := filepath.Glob(filepath.Join(runs.Root(d.root), "*", runs.RunFile))
	for _, f := range dirs {
		dir := runs.Dir(filepath.Dir(f))
		in, err := runs.Load(dir)
		if err != nil || runs.Terminal(in.Status) {
			continue
		}
		d.capture("message", "to=run:"+in.Meta.Run, "type=control.kill")
		if in, err = runs.Load(dir); err == nil && !runs.Terminal(in.Status) {
			killRunByHand(in)
		}
	}
	if shown {
		d.header("Clean up.", "Stop the kernel (every run has ended) and remove the private root.")
		if _, err := d.show("kernel", "stop"); err != nil {
			problems = append(problems, err.Error())
		}
	} else {
		d.capture("kernel", "stop")
	}
	// A kernel that did not stop is killed.
	var k wire.Info
	if data, err := os.ReadFile(filepath.Join(wire.TmpDir(d.root), "kernel.json")); err == nil && json.Unmarshal(data, &k) == nil && k.Pid > 0 {
		for runs.Alive(k.Pid, k.PidStart) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if runs.Alive(k.Pid, k.PidStart) && processMentions(k.Pid, d.root) {
			syscall.Kill(k.Pid, syscall.SIGKILL)
			problems = append(problems, fmt.Sprintf("the kernel (pid %d) did not stop and was killed", k.Pid))
		}
	}
	// Nothing that mentions the private root may be left running.
	var left []int
	for {
		left = demoLeftovers(d.root)
		if len(left) == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(left) > 0 {
		runs.KillAll(left, syscall.SIGKILL)
		problems = append(problems, fmt.Sprintf("processes %v were still running and were killed", left))
	} else if shown {
		d.note("checked: no process of the demo is left.")
	}
	// Leave the private root before it goes.
	d.restoreWd()
	if keep {
		if shown {
			d.note("kept $DEMO (keep=true).")
		}
	} else if err := os.RemoveAll(d.root); err != nil {
		problems = append(problems, "remove "+d.root+": "+err.Error())
	} else if shown {
		d.note("removed $DEMO.")
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	if !shown {
		what := "removed " + d.root
		if keep {
			what = "kept " + d.root
		}
		d.printf("stopped every run and the kernel; %s.\n", what)
	}
	return nil
}

// killRunByHand SIGKILLs what is left of a run whose supervisor did not
// apply control.kill: its session and its recorded leaf groups.
func killRunByHand(in *runs.Info) {
	if m := in.Meta; m.Pid > 0 && runs.Alive(m.Pid, m.PidStart) {
		runs.KillAll(runs.SessionMembers(m.Pid), syscall.SIGKILL)
	}
	if in.Progress != nil {
		for _, l := range in.Progress.Leaves {
			if runs.Alive(l.Pid, l.Start) {
				syscall.Kill(-l.Pid, syscall.SIGKILL)
			}
		}
	}
}

// demoLeftovers lists the live processes (other than this one) that
// mention the private root (processMentions).
func demoLeftovers(root string) []int {
	ents, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() || !runs.Alive(pid, 0) {
			continue
		}
		if processMentions(pid, root) {
			out = append(out, pid)
		}
	}
	return out
}

// processMentions reports whether a process's command line or environment
// names root: as a path prefix or a whole word (so another demo's root,
// which root may be a prefix of, does not count).
func processMentions(pid int, root string) bool {
	for _, f := range []string{"cmdline", "environ"} {
		data, err := os.ReadFile(fmt.Sprintf("/proc/%d/%s", pid, f))
		if err != nil {
			continue
		}
		for _, end := range []string{"/", "\x00", " ", "'", `"`} {
			if bytes.Contains(data, []byte(root+end)) {
				return true
			}
		}
		if bytes.HasSuffix(data, []byte(root)) {
			return true
		}
	}
	return false
}
