package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/pi-actors/pi-actors/internal/config"
	"github.com/pi-actors/pi-actors/verbs"
)

// Main serves MCP over stdio (`pi-actors mcp`, exec'd into the full
// binary): stdout carries the protocol only, logs go to stderr. It returns
// the exit code.
func Main(version string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn})).With("component", "mcp")
	env, err := verbs.NewEnv()
	if err == nil {
		err = env.LoadConfig()
	}
	if err == nil {
		// $PI_ACTORS_SESSION names the connection's session: a value no
		// request would accept is refused before serving any.
		err = verbs.CheckCaller(env.Session, nil)
	}
	if err != nil {
		if e := verbs.Classify(err); e.Hint != "" {
			fmt.Fprintln(os.Stderr, "pi-actors mcp:", e.Message)
			fmt.Fprintln(os.Stderr, "hint:", e.Hint)
			return e.Exit
		}
		fmt.Fprintln(os.Stderr, "pi-actors mcp:", err)
		return verbs.Classify(err).Exit
	}
	env.Version = version
	s, err := New(Options{Env: env, Version: version, Log: log})
	if err != nil {
		fmt.Fprintln(os.Stderr, "pi-actors mcp:", err)
		return verbs.ExitSoftware
	}
	log.Info("serving", "session", s.Session())
	if err := s.Run(ctx, Guarded(os.Stdin, os.Stdout)); err != nil && ctx.Err() == nil {
		fmt.Fprintln(os.Stderr, "pi-actors mcp:", err)
		return verbs.ExitSoftware
	}
	return verbs.ExitOK
}

// SchemaMain prints the tool catalogue (`pi-actors schema --json`): the
// core verbs and every recipe tool, with their input schemas, as one
// {"ok":true,"result":{"tools":[…]}} object; without --json, one line per
// tool.
func SchemaMain(args []string, out io.Writer) int {
	asJSON := false
	for _, a := range args {
		switch a {
		case "--json":
			asJSON = true
		case "--text":
		default:
			fmt.Fprintf(os.Stderr, "pi-actors schema: unknown argument %s (usage: pi-actors schema [--json])\n", a)
			return verbs.ExitUsage
		}
	}
	env, err := verbs.NewEnv()
	if err == nil && env.LoadConfig() != nil {
		// The catalogue does not read pi-actors.toml: a broken one (the
		// clients report it from their own calls) leaves it whole.
		env.Config = config.Defaults()
	}
	var tools []ToolDef
	if err == nil {
		tools, err = Catalog(env)
	}
	if err != nil {
		e := verbs.Classify(err)
		if asJSON {
			json.NewEncoder(out).Encode(map[string]any{"ok": false, "error": map[string]any{"code": e.Code, "message": e.Message, "hint": e.Hint}})
		} else {
			fmt.Fprintln(os.Stderr, "pi-actors schema:", e.Message)
		}
		return e.Exit
	}
	var werr error
	if asJSON {
		enc := json.NewEncoder(out)
		enc.SetEscapeHTML(false)
		werr = enc.Encode(map[string]any{"ok": true, "result": map[string]any{"tools": tools}})
	} else {
		for _, t := range tools {
			kind := "verb"
			if t.Recipe != "" {
				kind = "recipe=" + t.Recipe
			}
			if _, err := fmt.Fprintf(out, "tool=%s %s read_only=%v destructive=%v\n", t.Name, kind, t.Annotations.ReadOnly, t.Annotations.Destructive); err != nil {
				werr = err
				break
			}
		}
	}
	if werr != nil {
		// A catalogue cut short does not pass for the whole one (74).
		fmt.Fprintf(os.Stderr, "pi-actors schema: writing the answer to stdout: %v\n", werr)
		return verbs.ExitIOErr
	}
	return verbs.ExitOK
}
