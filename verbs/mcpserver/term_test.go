package mcpserver_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A server told to stop (SIGTERM) while a call runs cancels the call, as
// a client's cancel does: its processes are stopped before the server
// exits. It waited for the call to end on its own, and a client's SIGKILL
// after its grace left the call's processes running.
func TestTermStopsCallsInFlight(t *testing.T) {
	agent := t.TempDir()
	if err := os.MkdirAll(filepath.Join(agent, "recipes"), 0o700); err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(t.TempDir(), "sleep.pid")
	recipe := `{"description":"sleeps","args":["p"],"template":"sh -c 'echo $$ > $0; exec sleep 60' {p}"}`
	if err := os.WriteFile(filepath.Join(agent, "recipes", "sleeper.json"), []byte(recipe), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(filepath.Join(bin, "pi-actors"), "mcp")
	cmd.Env = env(agent)
	cl := mcp.NewClient(&mcp.Implementation{Name: "term", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s, err := cl.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() {
		stop := exec.Command(filepath.Join(bin, "pi-actors"), "kernel", "stop")
		stop.Env = env(agent)
		stop.Run()
	})
	go s.CallTool(ctx, &mcp.CallToolParams{Name: "sleeper", Arguments: map[string]any{"p": pidFile}})
	var pid int
	for deadline := time.Now().Add(20 * time.Second); pid == 0; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the call's command did not start")
		}
		b, _ := os.ReadFile(pidFile)
		pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
	}
	defer syscall.Kill(pid, syscall.SIGKILL)
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { s.Wait(); close(exited) }()
	select {
	case <-exited:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("the server did not exit within 20 s of SIGTERM with a call in flight")
	}
	for deadline := time.Now().Add(10 * time.Second); syscall.Kill(pid, 0) == nil; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the call's command (pid %d) outlived the server's SIGTERM", pid)
		}
	}
}

// A recipe tool's run_id that is no string is refused, as the CLI's
// run_id:=5 is (it started a run under a generated id).
func TestRecipeToolRunIDMustBeAString(t *testing.T) {
	agent := t.TempDir()
	c := connect(t, agent)
	res := c.call("locker", map[string]any{"run_id": 5})
	if !res.IsError || !strings.Contains(text(res), "run_id must be a string, got 5") {
		t.Fatalf("locker run_id=5: error=%v %s", res.IsError, text(res))
	}
	if entries, _ := os.ReadDir(filepath.Join(agent, "tmp", "pi-actors", "runs")); len(entries) > 2 {
		t.Errorf("a refused call left runs: %v", entries)
	}
}

// A comma-separated list parameter's schema takes the comma form the
// docs show (search_all's domains said null or array only).
func TestStringListSchemaTakesCommas(t *testing.T) {
	c := connect(t, t.TempDir())
	for _, tool := range []string{"search_all", "smart_search"} {
		var schema struct {
			Properties map[string]struct {
				Type []string `json:"type"`
			} `json:"properties"`
		}
		s := c.inputSchema(tool)
		json.Unmarshal([]byte(s), &schema)
		if got := strings.Join(schema.Properties["domains"].Type, ","); got != "string,array" {
			t.Errorf("%s domains type %q, want string,array: %s", tool, got, s)
		}
	}
}
