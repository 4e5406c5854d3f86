package main

import (
	"fmt"
	"strings"

	"github.com/pi-actors/pi-actors/verbs"
)

// localParams documents the parameters of the CLI's own verbs for the
// generated table (the verb layer's come from their request types).
var localParams = map[string]string{
	"demo":      "`keep`",
	"help":      "a verb name (first word)",
	"version":   "",
	"mcp":       "",
	"schema":    "",
	"knowledge": "`<operation>` then its parameters",
	"top":       "`session`; `--once`, `--cluster`, `--no-color`",
	"install":   "the target (first word); mcp: `--client=`, `--config=`, `--write`",
	"uninstall": "the target (first word); mcp: `--client=`, `--config=`",
	"cluster":   "`ca` or `cert` (first word), then its parameters (pi-actors help cluster)",
}

// verbTable is docs/cli.md's verb table, generated from the verbs: a
// test fails when the file drifts from it.
func verbTable() string {
	var b strings.Builder
	b.WriteString("| verb | parameters | does |\n|---|---|---|\n")
	for _, v := range listed() {
		name, summary := v[0], v[1]
		params := localParams[name]
		if s := verbs.Find(name); s != nil {
			var ps []string
			for _, p := range s.Params() {
				switch p {
				case s.Word:
					ps = append(ps, fmt.Sprintf("`%s` (or the %s)", p, map[bool]string{false: "first word", true: "words"}[s.Words]))
				case s.Rest:
					ps = append(ps, fmt.Sprintf("`%s` (or any other `k=v`)", p))
				default:
					ps = append(ps, "`"+p+"`")
				}
			}
			params = strings.Join(ps, ", ")
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", name, params, summary)
	}
	return b.String()
}
