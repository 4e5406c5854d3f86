package actors

import (
	"github.com/pi-actors/pi-actors/recipes/template"
	"github.com/pi-actors/pi-actors/runs"
	"github.com/pi-actors/pi-actors/verbs"
)

// spawnHealth reads a spawn's service parameters (probes, max_rss,
// watch; nil when none was given) and checks that exec probes resolve
// with the run's values. A run whose health checks restart it (liveness,
// max_rss) and that names no restart policy gets on-failure.
func (k *Kernel) spawnHealth(p *verbs.Spawn, spec *runs.Spec, values template.Values, cwd string) (*runs.Health, error) {
	h, err := p.HealthSpec()
	if err != nil {
		return nil, err
	}
	if err := h.CheckValues(values, cwd); err != nil {
		return nil, invalidErr("spawn: %v", err)
	}
	if spec.Restart == nil && h.WantsRestart() {
		r := runs.DefaultRestart()
		r.Policy = "on-failure"
		spec.Restart = &r
	}
	return h, nil
}
