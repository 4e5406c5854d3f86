package stage

import (
	"context"
	"fmt"
	"strings"

	"github.com/pi-actors/pi-actors/recipes/template"
	"github.com/pi-actors/pi-actors/verbs"
)

// quorum passes a join through when at least min branches are done.
func quorum(_ context.Context, _ *verbs.Env, a *Args, io IO) error {
	const name = "quorum"
	min, err := a.Int(name, "min", 1)
	if err != nil {
		return err
	}
	in, err := readInput(name, io.In)
	if err != nil {
		return err
	}
	bs := template.JoinBranches(string(in))
	done := 0
	var failed []string
	for _, b := range bs {
		if b.Status == "done" {
			done++
		} else {
			failed = append(failed, b.Label+" ("+b.Status+")")
		}
	}
	fmt.Fprintf(io.Err, "stage quorum: %d of %d branches done (need %d)\n", done, len(bs), min)
	if done < min || len(bs) == 0 {
		msg := fmt.Sprintf("stage quorum: %d of %d branches done, need %d", done, len(bs), min)
		if len(failed) > 0 {
			msg += "; not done: " + strings.Join(failed, ", ")
		}
		if len(bs) == 0 {
			msg += "; stdin holds no parallel join (--- branch: <label> status: <status> --- lines)"
		}
		return &verbs.Error{Exit: verbs.ExitDataErr, Code: "no_quorum", Message: msg,
			Hint: "inspect the run's stderr.log for the failed branches' errors"}
	}
	_, err = io.Out.Write(in)
	return err
}
