package verbs

import (
	"maps"

	"github.com/pi-actors/pi-actors/recipes/template"
)

// cliBinary is the pi-actors CLI a foreground exec or call gives its
// template as {pi_actors} (packaged utility recipes run
// `{pi_actors=pi-actors} stage …`). It is found as the kernel finds the one
// it gives every run (actors' supervisorCommand): $PI_ACTORS_BIN, this
// binary when it is pi-actors, the pi-actors next to this binary, then
// PATH. When none is found it is "pi-actors", and the leaf fails with 127
// naming it.
func cliBinary() string {
	bin, err := findBinary("pi-actors", "PI_ACTORS_BIN")
	if err != nil {
		return "pi-actors"
	}
	return bin
}

// withCLI is vals with {pi_actors} set to cliBinary, unless the caller
// (or the recipe's own values) gave pi_actors. A run's other injected
// values (run_id, state_dir, actor_address, default_room,
// communication_file) name a run; a foreground call has none, so a
// template that needs them fails as a missing placeholder, naming it.
func withCLI(vals template.Values) template.Values {
	if _, ok := vals["pi_actors"]; ok {
		return vals
	}
	out := make(template.Values, len(vals)+1)
	maps.Copy(out, vals)
	out["pi_actors"] = cliBinary()
	return out
}
