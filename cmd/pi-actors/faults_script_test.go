package main

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
	"golang.org/x/sys/unix"
	_ "modernc.org/sqlite" // storeok

	"github.com/pi-actors/pi-actors/runs"
)

// The testscript commands of the fault cases (disk full, out of file
// descriptors): see TestScripts.

// scriptCondition adds [root] (the test runs as root: it may mount a
// tmpfs).
func scriptCondition(cond string) (bool, error) {
	if cond == "root" {
		return os.Geteuid() == 0, nil
	}
	return false, fmt.Errorf("unknown condition %q", cond)
}

// cmdMountTmpfs mounts a tmpfs of SIZE on DIR (made if needed). When the
// script ends, the kernels of agent roots directly under DIR and their
// runs are killed and DIR is unmounted.
func cmdMountTmpfs(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 2 || neg {
		ts.Fatalf("usage: mounttmpfs DIR SIZE")
	}
	dir := ts.MkAbs(args[0])
	ts.Check(os.MkdirAll(dir, 0o755))
	ts.Check(unix.Mount("tmpfs", dir, "tmpfs", 0, "size="+args[1]+",mode=0755"))
	ts.Defer(func() {
		ents, _ := os.ReadDir(dir)
		for _, e := range ents {
			stopAgent(filepath.Join(dir, e.Name()))
		}
		unix.Unmount(dir, unix.MNT_DETACH)
	})
}

// cmdFill writes FILE until the file system is full (ENOSPC) and prints
// how many bytes it took.
func cmdFill(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 || neg {
		ts.Fatalf("usage: fill FILE")
	}
	f, err := os.OpenFile(ts.MkAbs(args[0]), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	ts.Check(err)
	defer f.Close()
	buf := make([]byte, 4096)
	n := 0
	for {
		k, err := f.Write(buf)
		n += k
		if errors.Is(err, syscall.ENOSPC) {
			break
		}
		ts.Check(err)
	}
	// A last byte or two may still fit in a partly used page.
	for {
		if _, err := f.Write(buf[:1]); err != nil {
			break
		}
		n++
	}
	fmt.Fprintf(ts.Stdout(), "filled %d bytes\n", n)
}

// cmdIntact checks that nothing under the agent root DIR is half-written:
// every JSON state file parses, every JSONL line is whole JSON (no torn
// line), every run state directory has its run.json, and no temporary
// file of an atomic write is left (one still there after 2 s: a live
// run's supervisor may be between a temporary file and its rename). It
// prints what it checked.
func cmdIntact(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 || neg {
		ts.Fatalf("usage: intact AGENTDIR")
	}
	root := ts.MkAbs(args[0])
	var problems, temps []string
	jsonl, state, dirs := 0, 0, 0
	filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			problems = append(problems, err.Error())
			return nil
		}
		name := d.Name()
		switch {
		case d.IsDir():
			if filepath.Dir(p) == runs.Root(root) && !strings.HasPrefix(name, ".") && name != "archived" {
				dirs++
				if _, err := os.Stat(filepath.Join(p, runs.RunFile)); err != nil {
					problems = append(problems, "run dir without run.json: "+p)
				}
			}
		case strings.Contains(name, ".tmp-"):
			temps = append(temps, p)
		case strings.HasSuffix(name, ".jsonl"):
			jsonl++
			data, err := os.ReadFile(p)
			ts.Check(err)
			if len(data) > 0 && data[len(data)-1] != '\n' {
				problems = append(problems, "torn last line: "+p)
			}
			for i, l := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
				if len(bytes.TrimSpace(l)) > 0 && !json.Valid(l) {
					problems = append(problems, fmt.Sprintf("%s:%d: not JSON: %.80q", p, i+1, l))
				}
			}
		case strings.HasSuffix(name, ".json"):
			state++
			data, err := os.ReadFile(p)
			ts.Check(err)
			if !json.Valid(data) {
				problems = append(problems, "not JSON: "+p)
			}
		}
		return nil
	})
	for deadline := time.Now().Add(2 * time.Second); len(temps) > 0 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
		temps = slices.DeleteFunc(temps, func(p string) bool { _, err := os.Stat(p); return err != nil })
	}
	for _, p := range temps {
		problems = append(problems, "temporary file left: "+p)
	}
	if len(problems) > 0 {
		ts.Fatalf("half-written:\n%s", strings.Join(problems, "\n"))
	}
	fmt.Fprintf(ts.Stdout(), "intact: %d run dirs, %d JSON files, %d JSONL files\n", dirs, state, jsonl)
}

// cmdKernelFiles sets the soft open-file limit (RLIMIT_NOFILE)
// of the agent root's kernel (PI_CODING_AGENT_DIR): +N is N more than it
// has open now, a number is that limit. It prints the kernel's open files
// and the new limit.
func cmdKernelFiles(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 || neg {
		ts.Fatalf("usage: kernelfiles +N|N")
	}
	data, err := os.ReadFile(filepath.Join(ts.Getenv("PI_CODING_AGENT_DIR"), "tmp", "pi-actors", "kernel.json"))
	ts.Check(err)
	var info struct{ Pid int }
	ts.Check(json.Unmarshal(data, &info))
	fds, err := os.ReadDir("/proc/" + strconv.Itoa(info.Pid) + "/fd")
	ts.Check(err)
	n, err := strconv.Atoi(strings.TrimPrefix(args[0], "+"))
	ts.Check(err)
	if strings.HasPrefix(args[0], "+") {
		n += len(fds)
	}
	var lim unix.Rlimit
	ts.Check(unix.Prlimit(info.Pid, unix.RLIMIT_NOFILE, nil, &lim))
	lim.Cur = uint64(n) // the hard limit stays: raising it again needs no privilege
	ts.Check(unix.Prlimit(info.Pid, unix.RLIMIT_NOFILE, &lim, nil))
	fmt.Fprintf(ts.Stdout(), "kernel pid %d: %d open, limit %d\n", info.Pid, len(fds), n)
}

// cmdStoreOK runs SQLite's integrity check on a knowledge store (read
// only, beside the kernel) and prints "ok".
func cmdStoreOK(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 || neg {
		ts.Fatalf("usage: storeok FILE")
	}
	db, err := sql.Open("sqlite", "file:"+ts.MkAbs(args[0])+"?mode=ro")
	ts.Check(err)
	defer db.Close()
	var res string
	ts.Check(db.QueryRow(`PRAGMA integrity_check`).Scan(&res))
	if res != "ok" {
		ts.Fatalf("integrity_check %s: %s", args[0], res)
	}
	fmt.Fprintln(ts.Stdout(), res)
}
