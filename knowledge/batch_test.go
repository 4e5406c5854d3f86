package knowledge

import (
	"testing"

	"github.com/pi-actors/pi-actors/knowledge/api"
)

func TestBatchIsAllOrNothing(t *testing.T) {
	e := newEnv(t)
	s := e.layers.Project
	name, bad := "ok", "bad"
	mk := func(n *string, paths api.Patterns) *api.ManageGraph {
		return &api.ManageGraph{Operation: "create", EntityType: "atom", Name: n, Paths: paths}
	}
	_, err := s.Batch(t.Context(), e.caller, []*api.ManageGraph{mk(&name, api.Patterns{"a/**"}), mk(&bad, api.Patterns{})})
	ae, ok := api.AsError(err)
	if !ok || ae.Code != api.CodeInvariant || ae.Details["index"] != 1 || ae.Details["field"] != "paths" {
		t.Fatalf("batch error %v", err)
	}
	if st, _ := s.Status(t.Context()); st.Counts.Atoms != 0 || st.Counts.Deltas != 0 {
		t.Fatalf("a failed batch left rows: %+v", st.Counts)
	}
	vs, err := s.Batch(t.Context(), e.caller, []*api.ManageGraph{mk(&name, api.Patterns{"a/**"}), mk(&bad, api.Patterns{"b/**"})})
	if err != nil || len(vs) != 2 || vs[1].(*api.Atom).Name != "bad" {
		t.Fatalf("batch %v %v", vs, err)
	}
	got, _, _ := contextOf(e, `"b/x"`)
	if len(got["bad"]) != 1 {
		t.Fatalf("context after batch %v", got)
	}
	if v := e.ok("verify", `{}`).(*api.VerifyResult); !v.OK {
		t.Fatal("verify after batch")
	}
}
