package vector

import (
	"fmt"
	"strings"
	"testing"

	"github.com/pi-actors/pi-actors/knowledge/api/vectorop"
)

// A method asked for by its bare name is found among many nodes more like
// the query by similarity, through the member-name index, and ranked
// first: named exactly so (Pool.fill for fill) before names that only
// hold the query (cmdFill, fillBuffer). Its full name and any case find
// it too.
func TestSearchFindsMethodByItsName(t *testing.T) {
	e := newEnv(t)
	for i := range 400 {
		e.Node("code", "function", fmt.Sprintf("helper%d", i), fmt.Sprintf("fill the buffer: fill %d bytes, then fill again", i), "")
	}
	for _, n := range []string{"cmdFill", "fillBuffer", "prefill"} {
		e.Node("code", "function", n, "fill fill fill", "")
	}
	e.Node("code", "method", "Pool.fill", "starts waiting supervisors in the background until size are waiting", "")
	for _, q := range []string{"fill", "FILL", "Pool.fill", "pool.fill"} {
		r := e.OK("search", `{"query":"`+q+`","domain":"code","limit":5}`).(*vectorop.SearchResult)
		if len(r.Hits) == 0 || r.Hits[0].Name != "Pool.fill" {
			t.Errorf("search %q: %s", q, mustJSON(r))
		}
	}
	// The lookup is an index search, not a scan of the domain's nodes.
	var plan []string
	rows, err := e.s.r.Query(`EXPLAIN QUERY PLAN SELECT n.seq FROM vg_nodes n WHERE n.domain = ? AND instr(n.name, '.') > 0 AND lower(substr(n.name, instr(n.name, '.') + 1)) >= ? AND lower(substr(n.name, instr(n.name, '.') + 1)) < ?`, "code", "fill", "fill\U0010FFFF")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatal(err)
		}
		plan = append(plan, detail)
	}
	if p := strings.Join(plan, "; "); !strings.Contains(p, "vg_nodes_member") {
		t.Errorf("member lookup plan: %s", p)
	}
}
