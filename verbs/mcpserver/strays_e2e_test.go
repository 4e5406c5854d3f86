package mcpserver_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// A foreground call in the MCP server leaves nothing behind, not even a
// process that left its leaf's group and session (setsid): it is stopped
// when the call ends, as the CLI's exec stops it. A run the call spawned
// and the kernel it started are not the call's: they keep running.
func TestMCPCallStopsSetsidStrays(t *testing.T) {
	agent := t.TempDir()
	c := connect(t, agent)
	work := t.TempDir()
	stray, run := filepath.Join(work, "stray.pid"), filepath.Join(agent, "tmp", "pi-actors", "runs", "kept", "run.json")
	script := filepath.Join(work, "leave.sh")
	// The leaf spawns a detached run, starts a process in a session of
	// its own, waits for its pid and ends.
	if err := os.WriteFile(script, []byte(`pi-actors spawn as=run:kept template='sleep 300' >/dev/null || exit 1
setsid sh -c 'echo $$ >"$1.tmp"; mv "$1.tmp" "$1"; exec sleep 300' stray "$1" </dev/null >/dev/null 2>&1 &
while [ ! -s "$1" ]; do sleep 0.01; done
echo left
`), 0o600); err != nil {
		t.Fatal(err)
	}
	recipe := filepath.Join(work, "leave.json")
	if err := os.WriteFile(recipe, []byte(`{"description":"leave a stray","template":"sh {script} {pidfile}"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	res := c.call("call", map[string]any{"recipe": recipe, "args": map[string]any{"script": script, "pidfile": stray}})
	if res.IsError || !strings.Contains(text(res), "left") {
		t.Fatalf("call: error=%v %s", res.IsError, text(res))
	}
	var meta struct {
		Pid   int    `json:"pid"`
		Owner string `json:"ownerId"`
	}
	data, err := os.ReadFile(run)
	if err != nil || json.Unmarshal(data, &meta) != nil || meta.Pid <= 0 {
		t.Fatalf("run:kept: %v %s", err, data)
	}
	defer c.cli(meta.Owner, "kill", "kept")
	pid := pidIn(t, stray)
	// Stopped before the call answered: no wait here.
	if alive(pid) {
		t.Errorf("the setsid process %d outlived the call", pid)
		syscallKill(pid)
	}
	if !alive(meta.Pid) {
		t.Errorf("run:kept's supervisor %d was stopped with the call", meta.Pid)
	}
	if out := c.cli(meta.Owner, "kernel", "status"); !strings.Contains(out, "running=true") {
		t.Errorf("the kernel was stopped with the call: %s", out)
	}
}

func pidIn(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	return pid
}

// alive: pid exists and is not a zombie.
func alive(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return i > 0 && i+2 < len(s) && s[i+2] != 'Z' && s[i+2] != 'X'
}

func syscallKill(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		p.Kill()
	}
	time.Sleep(10 * time.Millisecond)
}
