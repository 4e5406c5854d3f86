package actors_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/pi-actors/pi-actors/actors"
	"github.com/pi-actors/pi-actors/internal/testproc"
	"github.com/pi-actors/pi-actors/knowledge/api/graphop"
	"github.com/pi-actors/pi-actors/knowledge/api/op"
	"github.com/pi-actors/pi-actors/verbs/wire"
)

// startKernelIdle runs a kernel whose knowledge stores close after idle.
func startKernelIdle(t *testing.T, agent string, idle time.Duration) *kernel {
	t.Helper()
	return startKernelConfig(t, actors.Config{AgentDir: agent, Settings: settings(nil), KnowledgeIdle: idle})
}

// knowledge runs one knowledge operation from cwd (as run runID when set).
func (k *kernel) knowledge(cwd, runID, op string, params map[string]any) *wire.Response {
	k.t.Helper()
	call := map[string]any{"op": op, "params": params}
	env := []string{testproc.EnvVar + "=1"}
	if runID != "" {
		env = append(env, "PI_ACTORS_RUN_ID="+runID)
	}
	return callConn(k.t, k.agent, wire.Request{Op: "knowledge", Cwd: cwd, Env: env, Params: rawParams(call)})
}

// knowledgeOK runs an operation that must succeed and returns its result.
func (k *kernel) knowledgeOK(cwd, op string, params map[string]any) map[string]any {
	k.t.Helper()
	resp := k.knowledge(cwd, "", op, params)
	if resp.Error != nil {
		k.t.Fatalf("knowledge %s %v: %+v", op, params, resp.Error)
	}
	return resultMap(k.t, resp)
}

// newRepo is a repository directory with a project store and a project.
func newRepo(t *testing.T, k *kernel) (dir, project string) {
	t.Helper()
	dir = filepath.Join(t.TempDir(), "repo")
	if err := os.MkdirAll(filepath.Join(dir, ".git"), 0o755); err != nil {
		t.Fatal(err)
	}
	res := k.knowledgeOK(dir, "init", nil)
	return dir, res["project"].(map[string]any)["id"].(string)
}

func createAtom(k *kernel, cwd, name string, paths ...string) map[string]any {
	k.t.Helper()
	return k.knowledgeOK(cwd, "manage_graph", map[string]any{"operation": "create", "entityType": "atom", "name": name,
		"paths": paths, "knowledge": name + " knowledge", "createdByTaskId": "t1"})
}

// An unused store's actor stops and closes the store after the idle
// timeout; the next use opens it again, with everything committed in it.
func TestKnowledgeStoreClosesWhenIdle(t *testing.T) {
	agent := newAgent(t)
	k := startKernelIdle(t, agent, 150*time.Millisecond)
	repo, _ := newRepo(t, k)
	a := createAtom(k, repo, "retry", "src/retry/**")
	logFile := filepath.Join(wire.TmpDir(agent), "kernel.log")
	eventually(t, 10*time.Second, "the idle stores close", func() bool {
		b, _ := os.ReadFile(logFile)
		return strings.Count(string(b), "knowledge store closed (idle)") >= 2
	})
	// Logged once closed: the last connection's close took the WAL in.
	for _, root := range []string{repo, agent} {
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && strings.HasSuffix(p, ".db-wal") {
				t.Errorf("%s still there after the store was logged closed", p)
			}
			return nil
		})
	}
	inspect := k.knowledgeOK(repo, "inspect", nil)
	if open := inspect["open"].([]any); len(open) != 2 {
		// inspect itself opened both again; they are listed idle.
		t.Fatalf("open stores after inspect: %v", open)
	}
	got := k.knowledgeOK(repo, "query_graph", map[string]any{"operation": "get", "entityType": "atom", "id": a["id"]})
	if got["name"] != "retry" || got["store"] != "project" {
		t.Fatalf("after reopening: %v", got)
	}
}

// Eight concurrent updates of one atom with the same version: the store's
// actor applies them one at a time, so exactly one wins and the others
// get CONFLICT with the current version.
func TestKnowledgeConcurrentUpdatesOneWins(t *testing.T) {
	agent := newAgent(t)
	k := startKernelIdle(t, agent, 0)
	repo, _ := newRepo(t, k)
	a := createAtom(k, repo, "cache", "src/cache/**")
	var wg sync.WaitGroup
	codes := make([]string, 8)
	for i := range codes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp := k.knowledge(repo, "", "manage_graph", map[string]any{"operation": "update", "entityType": "atom",
				"id": a["id"], "version": 1, "knowledge": "writer " + string(rune('a'+i)), "lastTaskId": "t2"})
			if resp.Error != nil {
				codes[i] = resp.Error.Code
				if d, _ := resp.Error.Details.(map[string]any); d["currentVersion"] != float64(2) || resp.Error.Exit != 75 {
					t.Errorf("conflict: %+v", resp.Error)
				}
				return
			}
			codes[i] = "ok"
		}()
	}
	wg.Wait()
	n := map[string]int{}
	for _, c := range codes {
		n[c]++
	}
	if n["ok"] != 1 || n[string(op.CodeConflict)] != 7 {
		t.Fatalf("outcomes %v, want 1 ok and 7 CONFLICT", n)
	}
}

// A task id run:<id> must name a run; PI_ACTORS_RUN_ID is the default
// task id.
func TestKnowledgeRunTaskIDs(t *testing.T) {
	agent := newAgent(t)
	k := startKernelIdle(t, agent, 0)
	repo, _ := newRepo(t, k)
	resp := k.knowledge(repo, "", "manage_graph", map[string]any{"operation": "create", "entityType": "molecule", "name": "m", "createdByTaskId": "run:nope"})
	if resp.Error == nil || resp.Error.Code != string(op.CodeNotFound) || resp.Error.Exit != 66 {
		t.Fatalf("run:nope: %+v", resp.Error)
	}
	resp = k.knowledge(repo, "ghost", "manage_graph", map[string]any{"operation": "create", "entityType": "molecule", "name": "m"})
	if resp.Error == nil || resp.Error.Code != string(op.CodeNotFound) {
		t.Fatalf("PI_ACTORS_RUN_ID=ghost: %+v", resp.Error)
	}
	k.spawn("s1", "builder", "exit 0", nil)
	resp = k.knowledge(repo, "builder", "manage_graph", map[string]any{"operation": "create", "entityType": "molecule", "name": "m"})
	if resp.Error != nil {
		t.Fatalf("inside run:builder: %+v", resp.Error)
	}
	if m := resultMap(t, resp); m["createdByTaskId"] != "run:builder" || m["lastTaskId"] != "run:builder" {
		t.Fatalf("task ids: %v", m)
	}
}

// A run that ends in a project with atoms gets the spec's graph hints on
// its terminal follow-up; a run elsewhere does not.
func TestKnowledgeGraphHintsOnTerminalFollowup(t *testing.T) {
	agent := newAgent(t)
	k := startKernelIdle(t, agent, 0)
	repo, _ := newRepo(t, k)
	createAtom(k, repo, "pages", "src/pages/**")
	for _, c := range []struct{ id, cwd string }{{"inrepo", filepath.Join(repo, "src")}, {"elsewhere", agent}} {
		os.MkdirAll(c.cwd, 0o755)
		resp := callConn(t, agent, wire.Request{Op: "spawn", Session: "s1", Cwd: c.cwd, Env: append(os.Environ(), testproc.EnvVar+"=1"),
			Params: rawParams(spawnParams(c.id, "exit 0", nil))})
		if resp.Error != nil {
			t.Fatalf("spawn %s: %+v", c.id, resp.Error)
		}
	}
	got := map[string]actors.Followup{}
	eventually(t, 15*time.Second, "both terminal follow-ups", func() bool {
		for _, f := range k.followups("s1") {
			if f.Kind == "transition" {
				got[f.Run] = f
			}
		}
		return len(got) == 2
	})
	in, out := got["inrepo"], got["elsewhere"]
	if out.GraphHints != nil {
		t.Errorf("run outside any project got hints: %v", out.GraphHints)
	}
	b, _ := json.Marshal(in.GraphHints)
	var h graphop.GraphHints
	if err := json.Unmarshal(b, &h); err != nil || h.Message != "Task completed. Consider updating the knowledge graph." || len(h.SuggestedActions) != 3 {
		t.Fatalf("graphHints = %s (%v)", b, err)
	}
	if !strings.Contains(in.Text, "Knowledge graph:") {
		t.Errorf("follow-up text lacks the hint: %s", in.Text)
	}
}

// endIn runs template as run:<id> of session s1 in cwd and returns its
// terminal follow-up.
func endIn(k *kernel, id, cwd, template string) actors.Followup {
	k.t.Helper()
	resp := callConn(k.t, k.agent, wire.Request{Op: "spawn", Session: "s1", Cwd: cwd, Env: append(os.Environ(), testproc.EnvVar+"=1"),
		Params: rawParams(map[string]any{"as": "run:" + id, "template": template})})
	if resp.Error != nil {
		k.t.Fatalf("spawn %s: %+v", id, resp.Error)
	}
	var got actors.Followup
	eventually(k.t, 15*time.Second, "the terminal follow-up of "+id, func() bool {
		for _, f := range k.followups("s1") {
			if f.Kind == "transition" && f.Run == id {
				got = f
				return true
			}
		}
		return false
	})
	return got
}

// kernelWithRepo starts a kernel and gives it a project store in a new
// repository; src is the repository's src directory.
func kernelWithRepo(t *testing.T) (k *kernel, repo, src string) {
	t.Helper()
	k = startKernelIdle(t, newAgent(t), 0)
	repo, _ = newRepo(t, k)
	src = filepath.Join(repo, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	return k, repo, src
}

// storeOpens counts the knowledge stores the agent's kernels opened.
func storeOpens(agent string) int {
	return strings.Count(kernelLog(agent), "knowledge store opened")
}

// keptRoots reports whether a file in the hints dir is about the store.
func keptRoots(dir, store string) bool {
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		if b, _ := os.ReadFile(filepath.Join(dir, e.Name())); bytes.Contains(b, []byte(`"store":"`+store+`"`)) {
			return true
		}
	}
	return false
}

// kernelLog is what the agent's kernels logged.
func kernelLog(agent string) string {
	b, _ := os.ReadFile(filepath.Join(wire.TmpDir(agent), "kernel.log"))
	return string(b)
}

// A run's graph hints come from the project roots the kernel keeps per
// store while the store's files are unchanged: a restarted kernel answers
// them without opening a store; a store another agent's kernel wrote is
// read again.
func TestGraphHintsKeptPerStore(t *testing.T) {
	k, repo, src := kernelWithRepo(t)
	agent := k.agent
	// Another agent's kernel opens the project store too (opening
	// checkpoints its WAL).
	other := startKernelIdle(t, newAgent(t), 0)
	other.knowledgeOK(repo, "inspect", nil)
	if f := endIn(k, "no-atoms", src, "true"); f.GraphHints != nil {
		t.Fatalf("a project without atoms gave hints: %v", f.GraphHints)
	}
	// It gives the project an atom, which stays in the WAL while it keeps
	// the store open.
	createAtom(other, repo, "pages", "src/pages/**")
	if f := endIn(k, "one-atom", src, "true"); f.GraphHints == nil {
		t.Fatal("no hints after another kernel added an atom")
	}
	other.shutdown()
	k.shutdown()

	opens := storeOpens(agent)
	k = startKernelIdle(t, agent, 0)
	if f := endIn(k, "restarted", src, "true"); f.GraphHints == nil || !strings.Contains(f.Text, "Knowledge graph:") {
		t.Fatalf("no hints after a restart: %+v", f)
	}
	if f := endIn(k, "outside", agent, "true"); f.GraphHints != nil {
		t.Fatalf("a run outside the project got hints: %v", f.GraphHints)
	}
	if n := storeOpens(agent); n != opens {
		b, _ := os.ReadFile(filepath.Join(wire.TmpDir(agent), "kernel.log"))
		t.Fatalf("the restarted kernel opened %d store(s) for graph hints:\n%s", n-opens, b)
	}
}

// A project store that does not open (damaged) is tried once for graph
// hints, not at every run's end, until its file changes.
func TestGraphHintsSkipAnUnreadableStore(t *testing.T) {
	k := startKernelIdle(t, newAgent(t), 100*time.Millisecond)
	repo, _ := newRepo(t, k)
	src := filepath.Join(repo, "src")
	os.MkdirAll(src, 0o755)
	var db string
	filepath.WalkDir(repo, func(p string, d fs.DirEntry, err error) error {
		if err == nil && filepath.Ext(p) == ".db" {
			db = p
		}
		return err
	})
	if db == "" {
		t.Fatal("no project store in the repo")
	}
	// The kernel closes it (idle) and keeps its roots stamped after the
	// close (the hints file); then it is overwritten.
	hints := filepath.Join(wire.TmpDir(k.agent), "hints")
	eventually(t, 10*time.Second, "the store closed and its roots kept", func() bool {
		return strings.Contains(kernelLog(k.agent), "knowledge store closed") && keptRoots(hints, db)
	})
	damage := func(s string) {
		os.Remove(db + "-wal")
		os.Remove(db + "-shm")
		if err := os.WriteFile(db, []byte(strings.Repeat(s, 4096)), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	damage("x")
	unreadable := func() int { return strings.Count(kernelLog(k.agent), "knowledge store unreadable") }
	// A lookup may outlast its follow-up (it waits at most hintsWait):
	// the first attempt is waited for in the log.
	if f := endIn(k, "r0", src, "true"); f.GraphHints != nil {
		t.Fatalf("hints from a damaged store: %v", f.GraphHints)
	}
	eventually(t, 10*time.Second, "the damaged store tried", func() bool { return unreadable() >= 1 })
	for i := 1; i <= 2; i++ {
		if f := endIn(k, fmt.Sprintf("r%d", i), src, "true"); f.GraphHints != nil {
			t.Fatalf("hints from a damaged store: %v", f.GraphHints)
		}
	}
	if n := unreadable(); n != 1 {
		t.Fatalf("the damaged store was tried %d times for 3 run ends, want 1", n)
	}
	damage("y") // changed: tried again
	endIn(k, "r3", src, "true")
	eventually(t, 10*time.Second, "the changed store tried again", func() bool { return unreadable() >= 2 })
	if n := unreadable(); n != 2 {
		t.Fatalf("tried %d times in all after it changed, want 2", n)
	}
}
