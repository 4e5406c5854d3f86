package main

import (
	"encoding/json"
	"strings"
)

// The demo's memory step: the runs it started are recalled from the
// knowledge store, and an atom about one of its files is created and
// found by the file.

// demoRecall is what the memory step asks recall for: words service.sh
// printed, which its recorded runs hold (their last output lines).
const demoRecall = "service crashing on purpose"

func (d *demo) stepMemory() error {
	d.header("The memory.",
		"As each run ended, the kernel recorded it in the knowledge store's vector graph: what ran,",
		"how it ended, its last lines of output. recall finds the demo's own runs by what they",
		"printed:")
	// The kernel records a run after it has seen it end: wait until
	// run:service is in (a loaded machine may take a moment).
	if err := d.waitFor("the kernel to record run:service", d.serviceRecalled); err != nil {
		return err
	}
	if _, err := d.show("knowledge", "recall", "query="+demoRecall, "domain=history", "limit=2"); err != nil {
		return err
	}
	d.note("Knowledge about files lives in atoms, each owning path patterns. knowledge init makes")
	d.note("$DEMO a project; an atom for service.sh is then found by the file it owns:")
	if _, err := d.show("knowledge", "init"); err != nil {
		return err
	}
	if _, err := d.show("knowledge", "manage_graph", "operation=create", "entityType=atom", "name=Demo service",
		`paths:=["service.sh"]`, "knowledge=Crashes on its first start (exit 3); its restart policy brings it back.",
		"createdByTaskId=run:service"); err != nil {
		return err
	}
	_, err := d.show("knowledge", "query_graph", "operation=context", "paths=service.sh")
	return err
}

// serviceRecalled reports whether recall finds run:service.
func (d *demo) serviceRecalled() bool {
	out, code := d.capture("knowledge", "recall", "query="+demoRecall, "domain=history", "limit=10", "--json")
	if code != exitOK {
		return false
	}
	var env struct {
		Result struct {
			Hits []struct {
				Name string `json:"name"`
			} `json:"hits"`
		} `json:"result"`
	}
	if json.Unmarshal([]byte(out), &env) != nil {
		return false
	}
	for _, h := range env.Result.Hits {
		if strings.HasPrefix(h.Name, "run service ") {
			return true
		}
	}
	return false
}
