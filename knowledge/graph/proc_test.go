package graph

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/pi-actors/pi-actors/knowledge/api/graphop"
	"github.com/pi-actors/pi-actors/knowledge/api/op"
	"github.com/pi-actors/pi-actors/knowledge/knowledgetest"
	"github.com/pi-actors/pi-actors/knowledge/store"
)

// Two processes update the same atom with the same version: exactly one
// wins, the other gets CONFLICT with the current version.
func TestConcurrentUpdatesFromTwoProcesses(t *testing.T) {
	e := newEnv(t)
	path := e.path
	a := e.Atom("Contended", `["c/**"]`, "")
	for round := 1; round <= 4; round++ {
		type proc struct {
			in  io.WriteCloser
			out *bufio.Reader
		}
		var ps []proc
		for range 2 {
			_, in, out := knowledgetest.Helper(t, "update", path, a.ID, fmt.Sprint(round))
			if got := knowledgetest.ReadLine(t, out); got != "ready" {
				t.Fatalf("helper said %q", got)
			}
			ps = append(ps, proc{in, out})
		}
		for _, p := range ps {
			io.WriteString(p.in, "go\n")
		}
		oks, conflicts := 0, 0
		for _, p := range ps {
			line := knowledgetest.ReadLine(t, p.out)
			if line == "ok" {
				oks++
				continue
			}
			var ae op.Error
			if err := json.Unmarshal([]byte(line), &ae); err != nil || ae.Code != op.CodeConflict {
				t.Fatalf("round %d: helper said %q", round, line)
			}
			if cv, _ := ae.Details["currentVersion"].(float64); int(cv) != round+1 {
				t.Fatalf("round %d: currentVersion %v", round, ae.Details["currentVersion"])
			}
			conflicts++
		}
		if oks != 1 || conflicts != 1 {
			t.Fatalf("round %d: %d ok, %d conflicts", round, oks, conflicts)
		}
	}
	got := e.OK("query_graph", `{"operation":"get","entityType":"atom","id":"`+a.ID+`"}`).(*graphop.Atom)
	if got.Version != 5 || !strings.HasPrefix(got.Knowledge, "from pid ") {
		t.Fatalf("final atom %+v", got)
	}
	if v := e.OK("verify", `{}`).(*graphop.VerifyResult); !v.OK {
		t.Fatalf("verify %s", mustJSON(v))
	}
}

// A writer killed with SIGKILL in the middle of a burst of creates leaves
// a store that opens clean and holds every create it reported committed.
func TestKillDuringWriteBurst(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "k.db")
	s, closeDB, err := openFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := s.CreateProject(t.Context(), store.Caller{}, &graphop.ProjectCreate{Name: "p", Root: dir})
	if err != nil {
		t.Fatal(err)
	}
	closeDB()
	cmd, _, out := knowledgetest.Helper(t, "burst", path, p.ID)
	var ids []string
	for len(ids) < 200 {
		ids = append(ids, knowledgetest.ReadLine(t, out))
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	// Lines written before the kill are committed too.
	rest, _ := io.ReadAll(out)
	for _, l := range strings.Fields(string(rest)) {
		ids = append(ids, l)
	}
	cmd.Wait()

	s2 := openGraph(t, path, store.Options{})
	for _, id := range ids {
		if !op.IsID(id) {
			continue // a torn last line
		}
		if _, err := load(t.Context(), s2.r, atoms, "id", id); err != nil {
			t.Fatalf("committed atom %s lost: %v", id, err)
		}
	}
	rep, err := s2.Verify(t.Context())
	if err != nil || !rep.OK {
		t.Fatalf("verify after kill: %v %s", err, mustJSON(rep))
	}
	var integrity string
	s2.r.QueryRow(`PRAGMA integrity_check`).Scan(&integrity)
	if integrity != "ok" {
		t.Fatalf("integrity_check: %s", integrity)
	}
	if c, _ := s2.Counts(t.Context()); c == nil || c.Atoms < 200 {
		t.Fatalf("atoms %+v", c)
	}
}

// helperMain runs a helper process (see TestMain):
//
//	update DB ATOM VERSION   update the atom once with the version; print
//	                         "ok" or the error code
//	burst DB PROJECT         create atoms forever, printing each id after
//	                         its commit
func helperMain(args []string) int {
	if len(args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: update DB ATOM VERSION | burst DB PROJECT")
		return 2
	}
	s, closeDB, err := openFile(args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer closeDB()
	ctx, c := context.Background(), store.Caller{RunID: "helper"}
	switch args[0] {
	case "update":
		v, _ := strconv.Atoi(args[3])
		k := fmt.Sprintf("from pid %d", os.Getpid())
		req := &graphop.ManageGraph{Operation: "update", EntityType: "atom", ID: args[2], Version: &v, Knowledge: &k}
		if e := req.Validate(); e != nil {
			fmt.Println(e.Code)
			return 0
		}
		fmt.Fprintln(os.Stdout, "ready")
		// Wait for the go signal so both processes race.
		var line string
		fmt.Fscanln(os.Stdin, &line)
		_, err := s.ManageGraph(ctx, c, req)
		if ae, ok := op.AsError(err); ok {
			b, _ := json.Marshal(ae)
			fmt.Println(string(b))
			return 0
		}
		if err != nil {
			fmt.Println("error", err)
			return 1
		}
		fmt.Println("ok")
	case "burst":
		for i := 0; ; i++ {
			name := fmt.Sprintf("burst %d", i)
			req := &graphop.ManageGraph{Operation: "create", EntityType: "atom", ProjectID: args[2], Name: &name,
				Paths: graphop.Patterns{fmt.Sprintf("burst/%d/**", i)}}
			a, err := s.ManageGraph(ctx, c, req)
			if err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
			fmt.Println(a.(*graphop.Atom).ID)
		}
	}
	return 0
}
