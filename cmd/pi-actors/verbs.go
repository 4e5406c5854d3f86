package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/pi-actors/pi-actors/internal/config"
	"github.com/pi-actors/pi-actors/verbs"
)

// specFlags lists the flags a verb of package verbs accepts besides the
// common ones.
func specFlags(s *verbs.Spec) []string {
	flags := slices.Sorted(maps.Keys(s.Flags))
	return append(flags, "--text")
}

// env builds the verb layer's environment for one request; ctx ending
// (Ctrl-C) stops a wait for the kernel's answer.
func (a *app) env(ctx context.Context, spec *verbs.Spec, r *request) (*verbs.Env, error) {
	env, err := verbs.NewEnv()
	if err != nil {
		return nil, err
	}
	if err := env.LoadConfig(); err != nil {
		if !lenientConfig[spec.Name] {
			return nil, err
		}
		env.Config, env.ConfigErr = config.Defaults(), err
	}
	a.agentDir, a.cfg = env.AgentDir, &env.Config
	env.Stdin, env.Stderr, env.JSON, env.Version = a.io.in, a.io.err, r.json, Version
	env.CallerPid = os.Getppid() // the script that ran pi-actors
	env.Reaper = true            // one verb per process
	if !r.json {
		env.Stream = a.io.out
		if isTerminal(a.io.err) {
			env.Progress = a.io.err
		}
	}
	env.Width = a.width()
	env.Interrupt = ctx
	return env, nil
}

// lenientConfig verbs only read state, or stop the kernel: a broken
// pi-actors.toml does not stop them (they use the defaults; kernel start
// still refuses it, and a running kernel's status names it).
var lenientConfig = map[string]bool{"inspect": true, "mailbox": true, "kernel": true, "ps": true, "logs": true}

// decode turns one parsed invocation into the verb's typed request. The
// common parameter session= names the caller's session, cause= the
// message the call answers (the trace records it); verbs that take any
// parameter as a value, or a parameter of that name of their own, keep it.
func decode(spec *verbs.Spec, r *request, env *verbs.Env) (verbs.Request, error) {
	params := maps.Clone(r.params)
	for _, name := range []string{"session", "cause"} {
		s, ok := params[name]
		if !ok || spec.Rest != "" || slices.Contains(spec.Params(), name) {
			continue
		}
		str, isStr := s.(string)
		if !isStr {
			return nil, verbs.Invalidf("%s must be a string", name)
		}
		if name == "session" {
			env.Session = str
		} else {
			env.Cause.Message = strings.TrimSpace(str)
		}
		delete(params, name)
	}
	if err := verbs.CheckCaller(env.Session, &env.Cause); err != nil {
		return nil, err
	}
	if r.verbose && slices.Contains(spec.Params(), "verbose") {
		if _, given := params["verbose"]; given {
			return nil, usagef("parameter verbose is given twice (-v and verbose=); give it once")
		}
		params["verbose"] = true
	}
	for flag, param := range spec.Flags {
		if !r.flags[flag] {
			continue
		}
		if _, given := params[param]; given {
			return nil, usagef("parameter %s is given twice (%s and %s=); give it once", param, flag, param)
		}
		params[param] = true
	}
	req, err := spec.DecodeCLI(r.words, params)
	if err != nil {
		return nil, err
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	return req, nil
}

// runSpec runs a verb of package verbs: one request, a batch sent to the
// kernel whole (spawn, message), or a batch run one item at a time.
func (a *app) runSpec(ctx context.Context, spec *verbs.Spec, r *request) int {
	if len(r.batch) > 0 {
		return a.runBatch(ctx, spec, r)
	}
	env, err := a.env(ctx, spec, r)
	if err != nil {
		return a.fail(r, err)
	}
	if spec.Name == "watch" {
		return a.watch(ctx, env, spec, r)
	}
	listingGC(spec.Name)
	req, err := decode(spec, r, env)
	if err != nil {
		return a.fail(r, err)
	}
	out, err := spec.Run(ctx, env, req)
	if err != nil {
		return a.fail(r, err)
	}
	return a.print(r, out)
}

func (a *app) runBatch(ctx context.Context, spec *verbs.Spec, r *request) int {
	items := r.single()
	if !spec.Batch {
		code := exitOK
		for _, item := range items {
			if c := a.runSpec(ctx, spec, item); c != exitOK && code == exitOK {
				code = c
			}
		}
		return code
	}
	env, err := a.env(ctx, spec, r)
	if err != nil {
		return a.fail(r, err)
	}
	// Items that do not decode fail on their own; the rest go to the
	// kernel in one request. Results print in order.
	reqs := make([]verbs.Request, 0, len(items))
	errs := make([]error, len(items))
	var pos []int
	for i, item := range items {
		e := *env
		req, err := decode(spec, item, &e)
		if err == nil && e.Session != env.Session {
			err = verbs.Usagef("a batch runs in one session: session= may not differ between items")
		}
		if err != nil {
			errs[i] = err
			continue
		}
		reqs = append(reqs, req)
		pos = append(pos, i)
	}
	outs := make([]*verbs.Outcome, len(items))
	if len(reqs) > 0 {
		o, e, err := verbs.RunBatchShowing(env, spec, reqs)
		if err != nil {
			return a.fail(r, err)
		}
		for j, i := range pos {
			outs[i], errs[i] = o[j], e[j]
		}
	}
	code := exitOK
	for i, item := range items {
		c := exitOK
		if errs[i] != nil {
			c = a.fail(item, errs[i])
		} else {
			c = a.print(item, outs[i])
		}
		if c != exitOK && code == exitOK {
			code = c
		}
	}
	return code
}

// print writes an outcome: the JSON envelope or the compact text; a
// streamed outcome was written already.
func (a *app) print(r *request, out *verbs.Outcome) int {
	if out.Streamed {
		return out.Exit
	}
	if out.Fail != nil {
		if r.json {
			env := envelope{Error: &errorBody{Code: out.Fail.Code, Message: out.Fail.Message, Hint: out.Fail.Hint, Details: out.Fail.Details}}
			if r.text {
				env.Text = &out.Text
			}
			a.writeJSON(env)
		} else if out.ErrText != "" {
			// What failed goes to stderr, as a single failure's error does.
			if out.OutText != "" {
				a.ok(r, out.OutText, nil)
			}
			fmt.Fprintln(a.io.err, out.ErrText)
		} else {
			a.ok(r, out.Text, nil)
		}
		return a.printed(r, out, out.Exit)
	}
	a.ok(r, out.Text, out.Result)
	return a.printed(r, out, out.Exit)
}

// printed settles an outcome once it was written (view=followups: its
// follow-ups are delivered only now, and go back to the queue when
// stdout failed) and turns a failed write into 74.
func (a *app) printed(r *request, out *verbs.Outcome, code int) int {
	verbs.SettleOutcome(out, a.outErr == nil)
	if a.outErr == nil {
		return code
	}
	return a.fail(r, outputError(a.outErr))
}

// outputError is a failed write to stdout.
func outputError(err error) error {
	return &verbs.Error{Exit: verbs.ExitIOErr, Code: "output_failed", Message: fmt.Sprintf("writing the answer to stdout: %v", err),
		Hint: "stdout did not take the whole answer (a full disk, a closed reader): run it again once it can; follow-ups it could not write stay queued for the next reader (view=followups, watch)"}
}

// watch streams the session's follow-ups as JSON lines until Ctrl-C.
func (a *app) watch(ctx context.Context, env *verbs.Env, spec *verbs.Spec, r *request) int {
	req, err := decode(spec, r, env)
	if err != nil {
		return a.fail(r, err)
	}
	// A watcher started by a program (the pi extension, a script) ends with
	// it: SIGTERM when the parent dies, so no orphan keeps draining the
	// session's queue.
	ppid := os.Getppid()
	unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(syscall.SIGTERM), 0, 0, 0)
	if os.Getppid() != ppid {
		return exitOK
	}
	w := req.(*verbs.Watch)
	if w.IsRoom() {
		err = verbs.WatchRoom(ctx, env, w, func(e json.RawMessage) error {
			if err := a.writeJSON(e); err != nil {
				return outputError(err) // a reader gone: the watch ends (74)
			}
			return nil
		})
	} else {
		// A follow-up is acknowledged once written (one stdout did not
		// take ends the watch and stays queued), or with acks=stdin when
		// the reader writes its id back.
		var acks <-chan string
		if w.Acks == "stdin" {
			acks = readAcks(a.io.in)
		}
		err = verbs.WatchFollowups(ctx, env, func(_ verbs.Followup, line json.RawMessage) error {
			if err := a.writeJSON(line); err != nil {
				return outputError(err)
			}
			return nil
		}, acks)
	}
	if err != nil && !errors.Is(err, context.Canceled) {
		return a.fail(r, err)
	}
	return exitOK
}

func findSpec(name string) *verbs.Spec { return verbs.Find(name) }

// readAcks hands on the follow-up ids a watch's reader writes on stdin,
// one per line (watch acks=stdin), until stdin ends.
func readAcks(in io.Reader) <-chan string {
	ch := make(chan string)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(in)
		for sc.Scan() {
			if id := strings.TrimSpace(sc.Text()); id != "" {
				ch <- id
			}
		}
	}()
	return ch
}
