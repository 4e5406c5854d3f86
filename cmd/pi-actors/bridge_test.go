package main

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pi-actors/pi-actors/verbs/wire"
)

// TestBridgeTimeout: a kernel that accepts a call and never answers (a
// stopped one) costs a bridge call its timeout_ms, not forever; at stdin's
// EOF the bridge ends although that call never finished.
func TestBridgeTimeout(t *testing.T) {
	defer func(d time.Duration) { bridgeDrain = d }(bridgeDrain)
	bridgeDrain = 300 * time.Millisecond
	agent := filepath.Join(t.TempDir(), "a")
	t.Setenv("PI_CODING_AGENT_DIR", agent)
	t.Setenv("PI_ACTORS_PI_TOOLS", "")
	if err := os.MkdirAll(wire.TmpDir(agent), 0o755); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", wire.SocketPath(agent))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() { // accepts, reads, never answers
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go io.Copy(io.Discard, c)
		}
	}()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- run(context.Background(), []string{"bridge"}, streams{in: inR, out: outW, err: io.Discard})
	}()
	lines := bufio.NewScanner(outR)
	next := func() bridgeReply {
		t.Helper()
		if !lines.Scan() {
			t.Fatalf("bridge output ended: %v", lines.Err())
		}
		var r bridgeReply
		if err := json.Unmarshal(lines.Bytes(), &r); err != nil {
			t.Fatalf("%v: %s", err, lines.Bytes())
		}
		return r
	}
	if h := next(); h.ID != 0 || !h.OK {
		t.Fatalf("hello: %+v", h)
	}
	start := time.Now()
	io.WriteString(inW, `{"id":7,"verb":"recall","params":{"query":"retry"},"timeout_ms":150}`+"\n")
	r := next()
	if took := time.Since(start); r.ID != 7 || r.OK || r.Error == nil || r.Error.Code != "timeout" || !strings.Contains(r.Error.Message, "no answer within 150 ms") || took > 5*time.Second {
		t.Fatalf("after %s: %+v %+v", took, r, r.Error)
	}
	// One more call without a timeout hangs; EOF still ends the bridge
	// (after bridgeDrain at the latest).
	io.WriteString(inW, `{"id":8,"verb":"recall","params":{"query":"retry"}}`+"\n")
	inW.Close()
	select {
	case code := <-done:
		if code != 0 {
			t.Fatalf("bridge exit %d", code)
		}
	case <-time.After(bridgeDrain + 10*time.Second):
		t.Fatal("the bridge did not end at EOF")
	}
}

// TestBridgeCancel: a cancel op stops a call in flight — its command's
// process group is gone and the call answers at once.
func TestBridgeCancel(t *testing.T) {
	t.Setenv("PI_CODING_AGENT_DIR", t.TempDir())
	t.Setenv("PI_ACTORS_PI_TOOLS", "")
	marker := filepath.Join(t.TempDir(), "started")
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan int, 1)
	go func() {
		done <- run(context.Background(), []string{"bridge"}, streams{in: inR, out: outW, err: io.Discard})
	}()
	replies := make(chan bridgeReply, 8)
	go func() {
		sc := bufio.NewScanner(outR)
		for sc.Scan() {
			var r bridgeReply
			if json.Unmarshal(sc.Bytes(), &r) == nil {
				replies <- r
			}
		}
		close(replies)
	}()
	<-replies // hello
	pid := startSleeper(t, inW, marker)
	deadline := time.Now().Add(30 * time.Second)
	start := time.Now()
	io.WriteString(inW, `{"id":2,"op":"cancel","target":1}`+"\n")
	got := map[int]bridgeReply{}
	for len(got) < 2 {
		select {
		case r := <-replies:
			got[r.ID] = r
		case <-time.After(30 * time.Second):
			t.Fatalf("replies so far: %+v", got)
		}
	}
	if c := got[2]; !c.OK || !strings.Contains(string(mustJSON(c.Result)), `"cancelled":true`) {
		t.Fatalf("cancel reply: %+v", c)
	}
	if r := got[1]; r.OK || time.Since(start) > 20*time.Second {
		t.Fatalf("the cancelled call answered %+v after %s", r, time.Since(start))
	}
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("the command (pid %s) survived the cancel", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
	inW.Close()
	<-done
}

// startSleeper sends the bridge call 1: exec of a shell that writes its
// pid to marker and becomes sleep 60; it returns that pid once written.
func startSleeper(t *testing.T, in io.Writer, marker string) string {
	t.Helper()
	req, _ := json.Marshal(map[string]any{"id": 1, "verb": "exec", "params": map[string]any{
		"template": "sh -c {s}", "values": map[string]string{"s": "echo $$ >" + marker + "; exec sleep 60"}}})
	io.WriteString(in, string(req)+"\n")
	deadline := time.Now().Add(30 * time.Second)
	for {
		if b, err := os.ReadFile(marker); err == nil && strings.HasSuffix(string(b), "\n") {
			return strings.TrimSpace(string(b))
		}
		if time.Now().After(deadline) {
			t.Fatal("the command never started")
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}

// alive reports whether pid runs (a zombie does not).
func alive(pid string) bool {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return false
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	return len(f) > 0 && f[0] != "Z"
}

// TestBridgeEndStopsCommands: when its input closes (pi exited, even by
// SIGKILL) or it is signalled, the bridge stops the commands its calls
// run and ends only after they are gone — none is left orphaned, also
// when nobody reads its answers any more.
func TestBridgeEndStopsCommands(t *testing.T) {
	for _, how := range []string{"eof", "signal"} {
		t.Run(how, func(t *testing.T) {
			t.Setenv("PI_CODING_AGENT_DIR", t.TempDir())
			t.Setenv("PI_ACTORS_PI_TOOLS", "")
			marker := filepath.Join(t.TempDir(), "started")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			done := make(chan int, 1)
			go func() {
				done <- run(ctx, []string{"bridge"}, streams{in: inR, out: outW, err: io.Discard})
			}()
			sc := bufio.NewScanner(outR)
			sc.Scan() // hello
			pid := startSleeper(t, inW, marker)
			defer func() {
				if n, err := strconv.Atoi(pid); err == nil && alive(pid) {
					syscall.Kill(n, syscall.SIGKILL)
				}
			}()
			outR.Close() // the reader is gone: answers cannot be written
			if how == "eof" {
				inW.Close()
			} else {
				cancel()
			}
			select {
			case <-done:
			case <-time.After(30 * time.Second):
				t.Fatal("the bridge did not end")
			}
			if alive(pid) {
				t.Fatalf("the bridge ended (%s) and left its call's command (pid %s) running", how, pid)
			}
		})
	}
}
