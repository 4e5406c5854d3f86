package graph

import (
	"database/sql"
	"fmt"
	"strings"
	"testing"

	"github.com/pi-actors/pi-actors/knowledge/api/graphop"
	"github.com/pi-actors/pi-actors/knowledge/api/op"
)

func TestHistoryReconstructVerify(t *testing.T) {
	e := newEnv(t)
	m := e.Molecule("M", `,"knowledge":"mk"`)
	a := e.Atom("A", `["a/**"]`, `,"knowledge":"v1","moleculeId":"`+m.ID+`"`)
	for v := 1; v <= 3; v++ {
		e.OK("manage_graph", fmt.Sprintf(`{"operation":"update","entityType":"atom","id":%q,"version":%d,"knowledge":"v%d","lastTaskId":"T-%d"}`, a.ID, v, v+1, v+1))
	}
	e.OK("manage_graph", fmt.Sprintf(`{"operation":"update","entityType":"atom","id":%q,"version":4,"paths":["b/**","c/*.go"]}`, a.ID))
	h := e.OK("history", `{"id":"`+a.ID+`"}`).(*graphop.HistoryResult)
	if h.Total != 5 || h.Version != 5 || h.Deleted || h.EntityType != "atom" || h.Items[0].Version != 5 || h.Items[4].Op != "create" || h.Store != "project" {
		t.Fatalf("history %s", mustJSON(h))
	}
	if ch := h.Items[0].Changes; ch["paths"][1] == nil || ch["knowledge"] != [2]any{} || ch["lastTaskId"][1] != "run:r1" {
		t.Fatalf("changes of v5: %s", mustJSON(ch))
	}
	for i := 1; i < len(h.Items); i++ {
		if h.Items[i-1].ParentHash != h.Items[i].Hash {
			t.Fatalf("chain link %d", i)
		}
	}
	old := e.OK("history", `{"id":"`+a.ID+`","version":2}`).(*graphop.HistoryResult).State.(*graphop.Atom)
	if old.Knowledge != "v2" || old.LastTaskID != "T-2" || old.Version != 2 || *old.MoleculeID != m.ID || old.Paths[0] != "a/**" {
		t.Fatalf("v2 %s", mustJSON(old))
	}
	cur := e.OK("query_graph", `{"operation":"get","entityType":"atom","id":"`+a.ID+`","includeChangelog":false}`).(*graphop.Atom)
	rec := e.OK("history", `{"id":"`+a.ID+`","version":5}`).(*graphop.HistoryResult).State.(*graphop.Atom)
	if mustJSON(rec) != mustJSON(cur) {
		t.Fatalf("v5 rebuilt %s\nlive %s", mustJSON(rec), mustJSON(cur))
	}
	p := e.OK("history", `{"id":"`+a.ID+`","limit":2,"offset":1}`).(*graphop.HistoryResult)
	if len(p.Items) != 2 || p.Items[0].Version != 4 {
		t.Fatalf("paged history %s", mustJSON(p))
	}
	e.Fail(op.CodeValidation, "version", "history", `{"id":"`+a.ID+`","version":9}`)
	e.Fail(op.CodeNotFound, "id", "history", `{"id":"00000000-0000-4000-8000-000000000000"}`)

	// Deletes leave a tombstone; the deleted entity still verifies.
	e.OK("manage_graph", `{"operation":"delete","entityType":"molecule","id":"`+m.ID+`","version":1,"cascade":true}`)
	h = e.OK("history", `{"id":"`+a.ID+`"}`).(*graphop.HistoryResult)
	if !h.Deleted || h.Version != 6 || h.Items[0].Op != "delete" {
		t.Fatalf("tombstone %s", mustJSON(h.Items[0]))
	}
	e.Fail(op.CodeValidation, "version", "history", `{"id":"`+a.ID+`","version":6}`)
	if v := e.OK("verify", `{}`).(*graphop.VerifyResult); !v.OK || v.Stores[0].Entities != 2 || v.Stores[0].Deltas != 8 {
		t.Fatalf("verify %s", mustJSON(v))
	}
}

func TestVerifyDetectsTampering(t *testing.T) {
	tamper := []struct {
		name, sql, reason string
	}{
		{"live row edited", `UPDATE graph_atoms SET knowledge = 'forged' WHERE id = ?1`, "live row differs"},
		{"delta changes edited", `UPDATE graph_history SET changes = replace(changes, '"v2"', '"vX"') WHERE entity_id = ?1 AND version = 2`, "does not match"},
		{"delta removed", `DELETE FROM graph_history WHERE entity_id = ?1 AND version = 2`, "missing"},
		{"hash replaced", `UPDATE graph_history SET hash = 'abc' WHERE entity_id = ?1 AND version = 3`, "hash"},
		{"live row without history", `DELETE FROM graph_history WHERE entity_id = ?1`, "no history"},
		{"version bumped", `UPDATE graph_atoms SET version = 9 WHERE id = ?1`, "version 9"},
	}
	for _, tc := range tamper {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			a := e.Atom("A", `["a/**"]`, `,"knowledge":"v1"`)
			for v := 1; v <= 2; v++ {
				e.OK("manage_graph", fmt.Sprintf(`{"operation":"update","entityType":"atom","id":%q,"version":%d,"knowledge":"v%d"}`, a.ID, v, v+1))
			}
			db, err := sql.Open("sqlite", e.path)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := db.Exec(tc.sql, a.ID); err != nil {
				t.Fatal(err)
			}
			db.Close()
			v := e.OK("verify", `{}`).(*graphop.VerifyResult)
			if v.OK || len(v.Stores[0].Breaks) == 0 {
				t.Fatalf("tampering not detected: %s", mustJSON(v))
			}
			found := false
			for _, b := range v.Stores[0].Breaks {
				found = found || (b.EntityID == a.ID && strings.Contains(b.Reason, tc.reason))
			}
			if !found {
				t.Fatalf("breaks %s, want one saying %q", mustJSON(v.Stores[0].Breaks), tc.reason)
			}
		})
	}
}
