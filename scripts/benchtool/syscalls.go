package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// syscallSettle is how long syscalls keeps counting after the leaf started:
// a supervisor writes its first progress.json about a second after the
// start, and that write belongs to the spawn's cost.
const syscallSettle = 1500 * time.Millisecond

// tracedCalls are the system calls syscalls counts, by what they cost the
// file system: syncs, opens (creating or not), new directories, renames.
var tracedCalls = []string{"openat", "open", "creat", "mkdir", "mkdirat", "rename", "renameat", "renameat2",
	"unlink", "unlinkat", "fsync", "fdatasync", "syncfs", "sync_file_range", "execve"}

// syscalls counts the file system calls of one `spawn as=run:ID
// template='sleep 30'` on a warm kernel: strace -f follows the kernel's
// threads and the supervisor it starts from before the CLI starts until
// syscallSettle after the leaf started. Calls are attributed by thread
// to the kernel or the supervisor; the leaf's own calls (after its
// execve) are not counted. It prints key=value lines: fsync_, open_,
// create_ (opens with O_CREAT), mkdir_, rename_ and unlink_ for kernel and
// supervisor, or strace=missing.
func syscalls(bin, agent, id string) {
	strace, err := exec.LookPath("strace")
	if err != nil {
		fmt.Println("strace=missing")
		return
	}
	kpid := kernelPid(agent)
	if kpid <= 0 {
		fatalf("syscalls: no kernel in %s", agent)
	}
	dir, err := os.MkdirTemp("", "benchtool-strace")
	if err != nil {
		fatalf("syscalls: %v", err)
	}
	defer os.RemoveAll(dir)
	// The kernel keeps a supervisor started ahead of the next spawn
	// (pi-actors-supervise -): it is this spawn's, so it is traced too.
	args := []string{"-f", "-ff", "-qq", "-o", filepath.Join(dir, "t"), "-e", "trace=" + strings.Join(tracedCalls, ","), "-p", strconv.Itoa(kpid)}
	for _, w := range waitingSupervisors(kpid) {
		args = append(args, "-p", strconv.Itoa(w))
	}
	st := exec.Command(strace, args...)
	st.Stderr = os.Stderr
	if err := st.Start(); err != nil {
		fatalf("syscalls: strace: %v", err)
	}
	stop := func() {
		st.Process.Signal(syscall.SIGINT)
		st.Wait()
	}
	if !waitTraced(kpid, 5*time.Second) {
		stop()
		fatalf("syscalls: strace did not attach to the kernel (pid %d)", kpid)
	}
	for _, w := range waitingSupervisors(kpid) {
		waitTraced(w, 5*time.Second)
	}
	kernelTids := tids(kpid)
	t0 := time.Now()
	out, _, err := runCmd([]string{bin, "spawn", "as=run:" + id, "template=sleep 30", "--json"}, nil, nil)
	if err != nil {
		stop()
		fatalf("syscalls: %v", err)
	}
	rs := parseResults(out)
	if len(rs) != 1 || rs[0].Result.Pid <= 0 {
		stop()
		fatalf("syscalls: unexpected answer %s", out)
	}
	sup := rs[0].Result.Pid
	runDir := filepath.Join(runsRoot(agent), id)
	var leaf proc
	for deadline := t0.Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		if l, alive := leafOf(runDir); alive {
			leaf = l
			break
		}
	}
	time.Sleep(syscallSettle)
	for t := range tids(kpid) {
		kernelTids[t] = true
	}
	supTids := tids(sup)
	supTids[sup] = true
	stop()
	counts := map[string]map[string]int{"kernel": {}, "supervisor": {}, "other": {}}
	files, _ := filepath.Glob(filepath.Join(dir, "t.*"))
	for _, f := range files {
		tid, _ := strconv.Atoi(strings.TrimPrefix(filepath.Ext(f), "."))
		who := "other"
		switch {
		case tid == leaf.pid:
			continue // the leaf: its calls are not the spawn's
		case kernelTids[tid]:
			who = "kernel"
		case supTids[tid]:
			who = "supervisor"
		}
		countCalls(f, counts[who])
	}
	fmt.Printf("strace=ok\nsupervisor_pid=%d\nwindow_ms=%s\n", sup, ms(time.Since(t0)))
	for _, who := range []string{"kernel", "supervisor", "other"} {
		c := counts[who]
		fmt.Printf("fsync_%s=%d\nopen_%s=%d\ncreate_%s=%d\nmkdir_%s=%d\nrename_%s=%d\nunlink_%s=%d\n",
			who, c["fsync"]+c["fdatasync"]+c["syncfs"]+c["sync_file_range"], who, c["open"], who, c["create"],
			who, c["mkdir"], who, c["rename"], who, c["unlink"])
	}
}

// countCalls adds the calls in one strace -ff output file (one thread) to
// c: open (every openat/open/creat), create (those with O_CREAT or creat),
// mkdir, rename, unlink and each sync call by name. Counting stops at an
// execve that is not the supervisor's own (the thread became something
// else).
func countCalls(path string, c map[string]int) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "<...") || strings.HasPrefix(line, "+++") || strings.HasPrefix(line, "---") {
			continue
		}
		name, _, ok := strings.Cut(line, "(")
		if !ok {
			continue
		}
		switch name {
		case "execve":
			if !strings.Contains(line, "supervise") {
				return
			}
			// A supervisor started during the window: counted (a waiting
			// one started for the next spawn is the next spawn's, but one
			// is started per spawn, so the count per spawn holds).
		case "openat", "open":
			c["open"]++
			if strings.Contains(line, "O_CREAT") {
				c["create"]++
			}
		case "creat":
			c["open"]++
			c["create"]++
		case "mkdir", "mkdirat":
			c["mkdir"]++
		case "rename", "renameat", "renameat2":
			c["rename"]++
		case "unlink", "unlinkat":
			c["unlink"]++
		default:
			c[name]++
		}
	}
}

// waitingSupervisors lists the kernel's children that wait for a run: a
// supervisor whose last argument is "-" and that holds no run yet (the
// supervisors of runs started just before would otherwise be traced, and
// their first progress.json writes counted as this spawn's).
func waitingSupervisors(kpid int) []int {
	var out []int
	for _, c := range children(kpid) {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(c) + "/cmdline")
		if err != nil || !strings.HasSuffix(string(b), "\x00-\x00") {
			continue
		}
		// A pooled supervisor keeps its command line once it took a run;
		// it has the run's stderr.log as its fd 2 from then on.
		if fd2, err := os.Readlink("/proc/" + strconv.Itoa(c) + "/fd/2"); err == nil && strings.HasSuffix(fd2, "/stderr.log") {
			continue
		}
		out = append(out, c)
	}
	return out
}

// waitTraced waits until a tracer is attached to pid.
func waitTraced(pid int, limit time.Duration) bool {
	for deadline := time.Now().Add(limit); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
		if err != nil {
			return false
		}
		for _, l := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(l, "TracerPid:"); ok && strings.TrimSpace(v) != "0" {
				// Every thread is attached a moment after the first.
				time.Sleep(50 * time.Millisecond)
				return true
			}
		}
	}
	return false
}

// tids is the set of pid's threads.
func tids(pid int) map[int]bool {
	out := map[int]bool{}
	ents, _ := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	for _, e := range ents {
		if t, err := strconv.Atoi(e.Name()); err == nil {
			out[t] = true
		}
	}
	return out
}
