package main

import (
	"context"
	"fmt"
	"io"

	"github.com/pi-actors/pi-actors/stage"
	"github.com/pi-actors/pi-actors/verbs"
)

// stageMain runs the hidden `stage` verb: the steps of the packaged
// pipeline recipes that need no LLM (package stage). Its arguments are
// its own (key=value words, then the command after --), and its stdin is
// the stage's input, so it bypasses the verbs' parameter parsing.
func stageMain(ctx context.Context, args []string, s streams) int {
	if len(args) == 0 || args[0] == "--help" || args[0] == "-h" || args[0] == "help" {
		w, code := s.err, exitUsage
		if len(args) > 0 {
			w, code = s.out, exitOK
		}
		io.WriteString(w, stage.Usage())
		return code
	}
	env, err := verbs.NewEnv()
	if err == nil {
		err = env.LoadConfig()
	}
	if err == nil {
		err = stage.Run(ctx, env, args[0], args[1:], stage.IO{In: s.in, Out: s.out, Err: s.err})
	}
	if err == nil {
		return exitOK
	}
	ce := verbs.Classify(err)
	fmt.Fprintf(s.err, "pi-actors %s\n", ce.Message)
	if ce.Hint != "" {
		fmt.Fprintf(s.err, "hint: %s\n", ce.Hint)
	}
	return ce.Exit
}
