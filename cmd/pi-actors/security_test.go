package main

import (
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pi-actors/pi-actors/internal/testproc"
	"github.com/pi-actors/pi-actors/mailbox"
	"github.com/pi-actors/pi-actors/runs"
	"github.com/pi-actors/pi-actors/verbs/wire"
)

// otherUID is the user the security tests act as (nobody on most
// systems; no passwd entry is needed).
const otherUID = 65534

var other = &syscall.Credential{Uid: otherUID, Gid: otherUID, Groups: []uint32{}}

// probeMain is pa-probe, what the other user runs:
//
//	read PATH...         print "readable PATH" for each file it can read
//	                     and "listable PATH" for each directory it can list
//	dial SOCKET          connect and send a ping; print what came back
//	squat SOCKET LOG     listen on SOCKET (mode 0666), print "listening",
//	                     append whatever a client sends to LOG; until killed
func probeMain(args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, "usage: pa-probe read|dial|squat ...")
		return 2
	}
	switch args[0] {
	case "read":
		for _, p := range args[1:] {
			if ents, err := os.ReadDir(p); err == nil {
				fmt.Printf("listable %s (%d entries)\n", p, len(ents))
				continue
			}
			if f, err := os.Open(p); err == nil {
				var b [1]byte
				if _, err := f.Read(b[:]); err == nil || err == io.EOF {
					fmt.Println("readable", p)
				}
				f.Close()
			}
		}
		return 0
	case "dial":
		c, err := net.Dial("unix", args[1])
		if err != nil {
			fmt.Println("dial failed:", err)
			return 0
		}
		defer c.Close()
		c.Write([]byte(`{"id":1,"op":"ping"}` + "\n"))
		c.SetReadDeadline(time.Now().Add(10 * time.Second))
		b, _ := io.ReadAll(io.LimitReader(c, 4096))
		fmt.Printf("answer: %s\n", b)
		return 0
	case "squat":
		ln, err := net.Listen("unix", args[1])
		if err != nil {
			fmt.Println("listen failed:", err)
			return 1
		}
		os.Chmod(args[1], 0o666)
		fmt.Println("listening")
		for {
			c, err := ln.Accept()
			if err != nil {
				return 1
			}
			go func() {
				defer c.Close()
				c.SetReadDeadline(time.Now().Add(5 * time.Second))
				b := make([]byte, 4096)
				n, _ := c.Read(b)
				if f, err := os.OpenFile(args[2], os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644); err == nil {
					fmt.Fprintf(f, "connection: %d bytes: %s\n", n, b[:n])
					f.Close()
				}
			}()
		}
	}
	fmt.Fprintf(os.Stderr, "pa-probe: unknown probe %q\n", args[0])
	return 2
}

// TestOtherUserDenied: another user (uid 65534) cannot read a run's state
// files, connect to the kernel socket, message, inspect or kill another
// user's runs, or read their knowledge stores — even when the agent root
// and the project are world-readable (0755, as pi creates ~/.pi/agent),
// and even when the socket's mode slips (the kernel checks the caller's
// uid). Runs as root; skipped otherwise.
func TestOtherUserDenied(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("note: not root, so this test cannot act as another user (it drops to uid 65534); run it as root to check the file modes and the socket's peer checks")
	}
	w := newWorld(t, "")
	for _, d := range []string{w.agent, filepath.Join(w.base, "repo", ".git"), filepath.Join(w.base, "repo", ".pi")} {
		if err := os.MkdirAll(d, 0o755); err != nil { // world-readable, as pi makes them
			t.Fatal(err)
		}
	}
	repo := filepath.Join(w.base, "repo")
	pidFile := filepath.Join(w.base, "victim.pid")
	w.must("spawn", "as=run:victim", "template=pa-helper sleep-forever {p}", `values:={"p":"`+pidFile+`"}`)
	waitFile(t, pidFile)
	w.must("message", "to=run:victim", "type=note.secret", "body=SECRET-inbox")
	w.must("message", "to=room:victim", "type=chat.message", "from=run:victim", "body=SECRET-room")
	if r := w.runAs(nil, repo, "pi-actors", "knowledge", "init"); r.code != 0 {
		t.Fatalf("knowledge init: %s", r)
	}
	if r := w.runAs(nil, repo, "pi-actors", "knowledge", "manage_graph", "operation=create", "entityType=atom", "name=secret",
		`paths:=["x/**"]`, "knowledge=SECRET-project", "createdByTaskId=t"); r.code != 0 {
		t.Fatalf("project atom: %s", r)
	}
	home := filepath.Join(w.base, "home")
	for _, args := range [][]string{
		{"knowledge", "project", "create", "name=notes", "root=" + home},
		{"knowledge", "manage_graph", "operation=create", "entityType=atom", "name=secret", `paths:=["x/**"]`, "knowledge=SECRET-personal", "createdByTaskId=t"},
	} {
		if r := w.runAs(nil, home, "pi-actors", args...); r.code != 0 || !strings.Contains(r.stdout, "personal") && args[1] == "project" {
			t.Fatalf("personal store: %v: %s", args, r)
		}
	}

	// Files and directories: nothing under the agent root's pi-actors
	// tree or the knowledge stores may be read or listed.
	var paths []string
	for _, root := range []string{wire.TmpDir(w.agent), filepath.Join(w.agent, "knowledge"), filepath.Join(repo, ".pi"), filepath.Join(w.agent, "recipes")} {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			// repo/.pi itself is pi's (made 0755 above); what is in it is ours.
			if err == nil && d.Type()&fs.ModeSocket == 0 && p != filepath.Join(repo, ".pi") {
				paths = append(paths, p)
			}
			return nil
		})
	}
	if len(paths) < 20 {
		t.Fatalf("only %d paths to probe: %v", len(paths), paths)
	}
	r := w.runAs(other, "", "pa-probe", append([]string{"read"}, paths...)...)
	if r.code != 0 || strings.TrimSpace(r.stdout) != "" {
		t.Errorf("uid %d could read %d of %d paths:\n%s%s", otherUID, strings.Count(r.stdout, "\n"), len(paths), r.stdout, r.stderr)
	}

	// The socket: connecting is refused.
	sock := wire.SocketPath(w.agent)
	if r := w.runAs(other, "", "pa-probe", "dial", sock); !strings.Contains(r.stdout, "permission denied") {
		t.Errorf("dial the kernel socket as uid %d: %s", otherUID, r)
	}

	// The verbs: each is denied (77) and shows nothing of the run.
	victim := runs.StateDirFor(w.agent, "victim")
	inbox := filepath.Join(string(victim), runs.InboxFile)
	before := lineCount(t, inbox)
	for _, args := range [][]string{
		{"message", "to=run:victim", "type=note.evil", "body=EVIL"},
		{"message", "to=room:victim", "type=chat.message", "from=run:victim", "body=EVIL"},
		{"inspect", "target=run:victim", "view=status"},
		{"inspect", "target=run:victim", "view=mailbox"},
		{"inspect", "target=session:all", "view=runs"},
		{"ps", "--all"},
		{"kill", "victim"},
		{"stop", "victim"},
		{"knowledge", "query_graph", "operation=search", "entityType=atom", "query=secret"},
		{"kernel", "status"}, // was 69 "not running"
		{"kernel", "stop"},   // was 0 "running=false"
	} {
		r := w.runAs(other, repo, "pi-actors", args...)
		if r.code != 77 || strings.Contains(r.stdout+r.stderr, "SECRET") {
			t.Errorf("pi-actors %s as uid %d: want exit 77 and nothing shown; %s", strings.Join(args, " "), otherUID, r)
		}
	}
	if !testproc.Alive(testproc.ReadPid(pidFile)) {
		t.Fatal("the victim run's process is gone")
	}
	if st := w.must("inspect", "target=run:victim", "view=status"); !strings.Contains(st, "status=running") {
		t.Fatalf("the victim run after the attempts: %s", st)
	}

	// A permission slip (the socket and its directory opened to everyone):
	// the kernel itself refuses another uid, and nothing reaches the run.
	for _, p := range []string{w.agent + "/tmp", wire.TmpDir(w.agent), sock} {
		st, _ := os.Stat(p)
		mode := st.Mode().Perm()
		if err := os.Chmod(p, 0o777); err != nil {
			t.Fatal(err)
		}
		defer os.Chmod(p, mode)
	}
	r = w.runAs(other, "", "pa-probe", "dial", sock)
	if !strings.Contains(r.stdout, `"code":"denied"`) || !strings.Contains(r.stdout, `"exit":77`) || strings.Contains(r.stdout, `"ok":true`) {
		t.Errorf("the kernel answered uid %d on an open socket: %s", otherUID, r)
	}
	// (The CLI does not even send it: the kernel is not its user's.)
	r = w.runAs(other, "", "pi-actors", "message", "to=run:victim", "type=note.evil", "body=EVIL")
	if r.code != 77 || !strings.Contains(r.stderr, "runs as uid 0, not as this user") {
		t.Errorf("message as uid %d through an open socket: %s", otherUID, r)
	}
	if n := lineCount(t, inbox); n != before {
		t.Errorf("the victim's inbox grew from %d to %d lines", before, n)
	}
}

// TestSquattedSocketGetsNothing: the socket of an agent root with a long
// path lives at a fixed name in /tmp, where another user can listen first.
// The CLI refuses to talk to a kernel socket served by another uid (77,
// naming it) and sends it nothing; the kernel refuses to start there.
func TestSquattedSocketGetsNothing(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("note: not root, so this test cannot act as another user (it drops to uid 65534 to plant a socket)")
	}
	long := filepath.Join(os.TempDir(), "pa-squat-"+strconv.Itoa(os.Getpid()), strings.Repeat("d", 100), "agent")
	t.Cleanup(func() { os.RemoveAll(filepath.Dir(filepath.Dir(long))) })
	w := newWorld(t, long)
	sock := wire.SocketPath(long)
	if !strings.HasPrefix(sock, "/tmp/") {
		t.Fatalf("socket path %s: want the /tmp fallback", sock)
	}
	os.Remove(sock)
	t.Cleanup(func() { os.Remove(sock) })
	mine := filepath.Join(w.base, "other") // the other user's
	if err := os.Mkdir(mine, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(mine, otherUID, otherUID); err != nil {
		t.Fatal(err)
	}
	log := filepath.Join(mine, "squat.log")
	squat := w.startAs(other, "pa-probe", "squat", sock, log)
	waitFile(t, sock)
	r := w.run("message", "to=run:x", "type=note.x", "body=SECRET")
	if r.code != 77 || !strings.Contains(r.stderr, "uid "+strconv.Itoa(otherUID)) {
		t.Errorf("inspect with a squatted socket: %s", r)
	}
	r = w.run("kernel", "start")
	if r.code == 0 || !strings.Contains(r.stderr+r.stdout, "uid "+strconv.Itoa(otherUID)) {
		t.Errorf("kernel start with a squatted socket: %s", r)
	}
	time.Sleep(200 * time.Millisecond) // the squatter logs what it got
	if b, _ := os.ReadFile(log); strings.Contains(string(b), "bytes: {") {
		t.Errorf("the squatter received a request:\n%s", b)
	}
	squat.Process.Kill()
	squat.Wait()
}

// lineCount counts the JSONL lines of path (0 if missing).
func lineCount(t *testing.T, path string) int {
	t.Helper()
	lines, err := mailbox.Read(path)
	if err != nil {
		t.Fatal(err)
	}
	return len(lines)
}
