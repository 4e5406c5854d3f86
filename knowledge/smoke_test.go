package knowledge

import (
	"testing"

	"github.com/pi-actors/pi-actors/knowledge/api"
)

func TestSmoke(t *testing.T) {
	e := newEnv(t)
	m := e.molecule("Payments", `,"knowledge":"Stripe"`)
	a := e.atom("Webhooks", `["src/payments/**"]`, `,"moleculeId":"`+m.ID+`"`)
	if a.Store != "project" || a.Version != 1 || a.LastTaskID != "run:r1" {
		t.Fatalf("atom %+v", a)
	}
	c := e.ok("query_graph", `{"operation":"context","paths":"src/payments/x.ts, README.md"}`).(*api.Context)
	t.Log(mustJSON(c))
	if len(c.Molecules) != 1 || c.Molecules[0].Atoms[0].ID != a.ID || len(c.UnmatchedPaths) != 1 {
		t.Fatalf("context %s", mustJSON(c))
	}
	v := e.ok("verify", `{}`).(*api.VerifyResult)
	if !v.OK {
		t.Fatalf("verify %s", mustJSON(v))
	}
}
