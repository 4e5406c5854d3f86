package actors

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pi-actors/pi-actors/internal/fsutil"
	"github.com/pi-actors/pi-actors/mailbox"
	"github.com/pi-actors/pi-actors/recipes"
	"github.com/pi-actors/pi-actors/recipes/template"
	"github.com/pi-actors/pi-actors/rooms"
	"github.com/pi-actors/pi-actors/runs"
	"github.com/pi-actors/pi-actors/verbs"
	"github.com/pi-actors/pi-actors/verbs/wire"
)

// spawn starts a detached run: everything is checked first (recipe,
// template, values, limits), so bad input never creates a state directory
// or starts a process; then the supervisor is started and a run actor
// attached before the answer goes back. dirs, in a batch, takes the new
// state directory's parent for one fsync after the batch (runs.Spec.Dirs).
func (k *Kernel) spawn(req wire.Request, p *verbs.Spawn, dirs *fsutil.DirSyncs) (*verbs.SpawnResult, error) {
	if err := verbs.CheckOwner("session", req.Session); err != nil {
		return nil, err
	}
	if k.held(req.Session) {
		return nil, &wire.Error{Code: "session_suspended", Exit: 75, Message: fmt.Sprintf("session %s is suspended: it starts no run until it is resumed", req.Session),
			Hint: "pi-actors session resume session=" + req.Session}
	}
	if p.WorkflowNode != nil {
		done, release, err := k.nodeSpawn(req, p)
		if done != nil || err != nil {
			return done, err
		}
		defer release()
	}
	spec, src, err := k.prepare(req, p)
	if err != nil {
		return nil, err
	}
	// A slot of the session's live runs once the request is known good,
	// before a draft recipe is captured: the spawns of a batch run at once.
	slot, err := k.reserveLive(req.Session)
	if err != nil {
		return nil, err
	}
	defer k.releaseLive(slot) // a run that did not start

	var notes []string
	dropDraft := func() {}
	if src != nil {
		notes, dropDraft = k.recordLaunch(&spec, *src)
	}
	k.settle(spec)
	spec.Dirs = dirs
	if spec.Home = k.homeFor(req); spec.Home != "" && spec.Owner != "" {
		// Before the run can raise anything: its follow-ups are
		// delivered to its session's node.
		k.setHome(homeKey(spec.Owner, spec.Home), spec.Owner, spec.Home)
	}
	spec.Cause = spawnCause(req, p)
	// A new state directory gets its default room before it is published;
	// a reused one (a restart of an ended run id) joins it after.
	seeded := false
	spec.Seed = func(stage string) error {
		seeded = true
		return rooms.SeedDefaultRoom(stage, spec.ID)
	}
	// Indexed as soon as its supervisor has it: ps with no kernel finds a
	// run a kernel that died in a batch had started.
	spec.Published = func(m *runs.Meta) {
		if err := k.index.Record(runs.Entry{Run: m.Run, StateDir: m.StateDir, Status: runs.StatusRunning, OwnerID: m.OwnerID, Recipe: m.Recipe, Tool: m.Tool}); err != nil {
			k.log.Warn("index", "err", err)
		}
	}
	meta, proc, err := runs.Start(k.cfg.AgentDir, spec)
	if err != nil {
		dropDraft() // a spawn that failed leaves no draft of a run that never ran
		k.indexFailedStart(spec)
		return nil, err
	}
	k.traceSpawn(req, meta)
	dir := runs.Dir(meta.StateDir)
	if spec.Workflow != nil {
		if err := saveWorkflowEnv(dir, spec.Env); err != nil {
			notes = append(notes, "environment not kept for a resume: "+err.Error())
		}
	}
	fut := k.system.Root.RequestFuture(k.runs, &attachRun{dir: dir, meta: meta, proc: proc, slot: slot}, 5*time.Second)
	if _, err := fut.Result(); err != nil {
		k.log.Warn("attach run actor", "run", meta.Run, "err", err)
	}
	// The run joins its own room (never failing the spawn: the run is up).
	if !seeded {
		if _, err := rooms.EnsureDefaultRoom(meta.StateDir, meta.Run); err != nil {
			k.log.Warn("default room", "run", meta.Run, "err", err)
		}
	}
	k.log.Info("run started", "run", meta.Run, "pid", meta.Pid, "owner", meta.OwnerID, "from", req.From)
	res := &verbs.SpawnResult{Address: meta.Address, Run: meta.Run, Status: runs.StatusRunning, Pid: meta.Pid, StateDir: meta.StateDir,
		Recipe: meta.Recipe, DraftRecipe: meta.DraftRecipe, Warnings: notes, Node: k.nodeName()}
	if req.From != "" {
		// Spawned from another node: the caller addresses the run with
		// this node's name.
		res.Address += "@" + res.Node
	}
	return res, nil
}

// indexFailedStart lists a start that failed after its state dir was
// published (its run.json and a start_failed result.json are there, e.g.
// out of file descriptors): ps and inspect session views read the index,
// which otherwise learned of it only at the next kernel's rebuild.
func (k *Kernel) indexFailedStart(spec runs.Spec) {
	d := runs.StateDirFor(k.cfg.AgentDir, spec.ID)
	if spec.StateDir != "" {
		d = runs.Dir(spec.StateDir)
	}
	in, err := runs.Load(d)
	if err != nil || in.Meta.Run != spec.ID || !runs.Terminal(in.Status) {
		return
	}
	if err := k.index.Record(runs.Entry{Run: in.Meta.Run, StateDir: string(in.Dir), Status: in.Status, OwnerID: in.Meta.OwnerID,
		Recipe: in.Meta.Recipe, Tool: in.Meta.Tool}); err != nil {
		k.log.Warn("index", "err", err)
	}
}

// prepare builds and checks the run spec of a spawn request; src is what
// a plain (not workflow) run runs, for recordLaunch.
func (k *Kernel) prepare(req wire.Request, p *verbs.Spawn) (runs.Spec, *spawnSource, error) {
	if req.From != "" && strings.TrimSpace(p.StateDir) != "" {
		// A path on this machine is not another member's to choose.
		return runs.Spec{}, nil, &wire.Error{Code: "usage", Exit: 64,
			Message: "spawn state_dir= is not served to other nodes (a state directory is a path on the node that supervises the run)",
			Hint:    "leave state_dir out: the run gets <agent>/tmp/pi-actors/runs/<id> on node " + k.nodeName()}
	}
	if err := k.checkCwd(req); err != nil {
		return runs.Spec{}, nil, err
	}
	if p.Workflow != nil {
		spec, err := k.prepareWorkflow(req, p, nil)
		return spec, nil, err
	}
	spec, src, err := k.prepareSpec(req, p)
	if err != nil {
		return spec, nil, err
	}
	if src.rec != nil && src.rec.Workflow != nil && p.Template == nil {
		spec, err := k.prepareWorkflow(req, p, src.rec)
		return spec, nil, err
	}
	return spec, &src, nil
}

// prepareSpec builds and checks the run spec of a spawn request without
// recording anything (no draft, no usage).
func (k *Kernel) prepareSpec(req wire.Request, p *verbs.Spawn) (runs.Spec, spawnSource, error) {
	var spec runs.Spec
	src, err := k.spawnSource(req, p, &spec)
	if err != nil {
		return spec, src, err
	}
	rec := src.rec
	// Run id and state directory.
	id, err := k.runID(p, rec)
	if err != nil {
		return spec, src, err
	}
	spec.ID = id
	if sd := p.StateDir; sd != "" {
		spec.StateDir = absFrom(req.Cwd, sd)
	} else if spec.StateDir != "" {
		spec.StateDir = absFrom(req.Cwd, strings.ReplaceAll(spec.StateDir, "{agent}", k.cfg.AgentDir))
	}
	dir := runs.StateDirFor(k.cfg.AgentDir, id)
	if spec.StateDir != "" {
		dir = runs.Dir(spec.StateDir)
	}
	if rec != nil && rec.Workflow != nil && p.Template == nil && p.WorkflowNode != nil {
		// A node is one run: its scheduler would wait on a workflow's
		// start that waits on the scheduler's kernel (and a kill on both).
		return spec, src, &wire.Error{Code: "invalid_data", Exit: 65,
			Message: fmt.Sprintf("recipe %s is a workflow, and a workflow node runs one run: workflows do not nest", rec.ID),
			Hint:    "put its nodes in this workflow, or give the node a template that spawns it (pi-actors spawn recipe=" + rec.ID + ")"}
	}
	if err := p.CheckRecipeValues(src.rec, src.tool); err != nil {
		return spec, src, err
	}
	// Values: the recipe's, the caller's, then the injected ones.
	values := template.Values{}
	if rec != nil {
		for k2, v := range rec.Values {
			values[k2] = v
		}
	}
	for k2, val := range p.Values {
		values[k2] = val
	}
	for k2, v := range injected(id, dir, k.cliBinary()) {
		values[k2] = v
	}
	node, err := template.Parse(src.graph)
	if err != nil {
		return spec, src, err
	}
	cfg := k.conf()
	if _, err := template.NewPlan(node, values, template.Options{Dir: req.Cwd, MaxParallel: cfg.Exec.MaxParallelBranches, MaxLeaves: cfg.Exec.MaxLeaves, Types: src.types, NoLookup: true}); err != nil {
		return spec, src, spawnValueErr(err)
	}
	// Artifacts resolve once, at start.
	arts := map[string]any{}
	if rec != nil {
		for name, a := range rec.Artifacts {
			arts[name] = map[string]any{"path": a.Path, "kind": a.Kind, "media_type": a.MediaType, "required": a.Required}
		}
	}
	for name, a := range p.Artifacts {
		arts[name] = a
	}
	resolved, err := resolveArtifacts(arts, values, src.defaults)
	if err != nil {
		return spec, src, err
	}
	// Restart policy.
	restartRaw := p.Restart
	if restartRaw == nil && rec != nil && rec.Restart != nil {
		restartRaw = rec.Restart
	}
	if spec.Restart, err = runs.ParseRestart(restartRaw); err != nil {
		return spec, src, invalidErr("spawn: %v", err)
	}
	if spec.Health, err = k.spawnHealth(p, &spec, values, req.Cwd); err != nil {
		return spec, src, err
	}
	depth, err := k.spawnLimits(req, id, spec.StateDir)
	if err != nil {
		return spec, src, err
	}
	spec.Cwd, spec.Owner, spec.Depth, spec.Env = req.Cwd, req.Session, depth, k.runEnv(req.Env)
	spec.Parent = envString(req.Env, "PI_ACTORS_RUN_ID")
	spec.Template, spec.Values, spec.Artifacts = src.graph, values, resolved
	spec.LaunchSource = p.LaunchSource
	if spec.LaunchSource == "" {
		spec.LaunchSource = "spawn"
	}
	spec.Tool = p.Tool
	spec.WorkflowNode = p.WorkflowNode
	spec.Supervisor, spec.Pool = k.cfg.Supervisor, k.pool
	spec.Limits = runs.Limits{MaxParallel: cfg.Exec.MaxParallelBranches, MaxLeaves: cfg.Exec.MaxLeaves, KillGraceMS: cfg.Exec.KillGraceMS,
		LogMaxBytes: cfg.Runs.LogMaxBytes, LogKeep: cfg.Runs.LogKeep}
	return spec, src, nil
}

// spawnSource is what a spawn runs: the recipe (with its discovery entry)
// and the template graph, with the recipe's defaults and argument types.
type spawnSource struct {
	rec      *recipes.Recipe
	entry    *recipes.Entry
	tool     *recipes.Tool // the recipe as a tool (nil for an inline template)
	graph    any
	defaults map[string]any
	types    map[string]template.Type
}

// spawnSource resolves file=/recipe= and template=: a recipe's graph, an
// inline template (its controls merged in), or an inline template that
// replaces a recipe's (the recipe's metadata stays). It fills the spec's
// recipe fields.
func (k *Kernel) spawnSource(req wire.Request, p *verbs.Spawn, spec *runs.Spec) (spawnSource, error) {
	var src spawnSource
	rv := &recipes.Resolver{AgentDir: k.cfg.AgentDir, Home: home()}
	ref := p.File
	if ref == "" {
		ref = p.Recipe
	}
	if ref != "" {
		var err error
		if src.rec, src.entry, err = verbs.FindRecipe(k.cfg.AgentDir, req.Cwd, ref); err != nil {
			return src, err
		}
	}
	rec := src.rec
	hasInline := p.Template != nil
	if rec == nil && !hasInline {
		return src, usageErr("spawn needs file=<recipe>, recipe=<name> or template=<template>")
	}
	if rec != nil {
		tool, err := rv.Tool(rec)
		if err != nil {
			return src, err
		}
		src.tool, src.graph, src.types = tool, tool.Resolved.Graph, tool.Types()
		src.defaults = asMap(rec.Raw["defaults"])
		spec.Recipe, spec.ActorContext = rec.ID, rec.ActorContext
		spec.RecipeFile = rec.Path
		spec.ContextRecords = recordsJSON(tool.Resolved.Records)
		spec.Mailbox, spec.RetireWhen, spec.StateDir = rec.Mailbox, rec.RetireWhen, rec.StateDir
	}
	if hasInline {
		node := p.InlineGraph()
		if obj, ok := src.graph.(map[string]any); ok && rec != nil {
			if marker, ok := obj["actorRecipeContext"]; ok {
				node["actorRecipeContext"] = marker
			}
		}
		src.graph = node
	}
	return src, nil
}

// spawnLimits checks nesting depth, the id, a custom state directory
// (runs.CheckStateDirUse: new, empty or the run's own) and that no live run
// uses the state directory (the session's live runs: reserveLive); it
// returns the new run's depth.
func (k *Kernel) spawnLimits(req wire.Request, id, stateDir string) (int, error) {
	cfg := k.conf()
	depth := envInt(req.Env, "PI_ACTORS_DEPTH") + 1
	if depth > cfg.Runs.MaxDepth {
		return 0, &wire.Error{Code: "limit_exceeded", Exit: 65, Message: fmt.Sprintf("spawn depth %d exceeds runs.max_depth %d (a run spawning runs spawning runs…)", depth, cfg.Runs.MaxDepth), Hint: "raise runs.max_depth in <agent>/pi-actors.toml if the nesting is intended"}
	}
	if err := runs.ValidID(id); err != nil {
		return 0, err
	}
	dir := runs.StateDirFor(k.cfg.AgentDir, id)
	if stateDir != "" {
		// Whose it is; whether it can be made was checked before the
		// spawn (the CLI, a workflow's nodes up front), and runs.Start
		// makes it: no trial directory beside it here, where a workflow
		// node's spawn runs after its workflow's answer.
		if err := runs.CheckStateDirUse(k.cfg.AgentDir, id, stateDir); err != nil {
			return 0, err
		}
		dir = runs.Dir(stateDir)
	}
	if in, err := runs.Load(dir); err == nil {
		if !runs.Terminal(in.Status) {
			return 0, &wire.Error{Code: "busy", Exit: 75, Message: fmt.Sprintf("run:%s is already running (%s); stop it (message to=run:%s type=control.kill) before reusing its id or state_dir", in.Meta.Run, dir, in.Meta.Run)}
		}
		// Starting it again replaces its logs, events and result: only
		// its own session may (77 otherwise, as rm and restart answer).
		if err := runs.CheckOwner(req.Session, in.Meta); err != nil {
			return 0, err
		}
	}
	// The id is the run's address: it may not be live in another state
	// dir either (the default one, or a custom state_dir).
	for _, d := range k.runDirsOf(id) {
		if d == dir {
			continue
		}
		if in, err := runs.Load(d); err == nil && in.Meta.Run == id && !runs.Terminal(in.Status) {
			return 0, &wire.Error{Code: "busy", Exit: 75, Message: fmt.Sprintf("run:%s is already running in state dir %s; stop it (message to=run:%s type=control.kill) before starting run:%s again, or give this run another id", id, d, id, id)}
		}
	}
	// An ended run of this id in its default dir is what logs, rm and
	// inspect find first: a new run elsewhere would be split from it.
	if def := runs.StateDirFor(k.cfg.AgentDir, id); dir != def && (def.Exists(runs.RunFile) || def.Exists(runs.TombstoneFile)) {
		return 0, fmt.Errorf("%w: state_dir=%s: run:%s has a state dir already (%s), which its verbs read; leave state_dir out to start it there again, or rm %s --prune first, or give this run another id", runs.ErrStateDir, stateDir, id, def, id)
	}
	return depth, nil
}

// spawnValueErr words a missing placeholder's fix for spawn, which takes
// values in values= (a name=value word is not a spawn parameter).
func spawnValueErr(err error) error {
	var te *template.Error
	if !errors.As(err, &te) || te.Missing == "" {
		return err
	}
	e := *te
	e.Msg = strings.Replace(e.Msg, "pass "+te.Missing+"=<value>", fmt.Sprintf("spawn takes it in values, e.g. values:='{\"%s\":…}',", te.Missing), 1)
	return &e
}

// runDirsOf is every state dir run id may be live in: the default one,
// where runs.Resolve looks first, and those of the kernel's live runs
// with that id.
func (k *Kernel) runDirsOf(id string) []runs.Dir {
	dirs := []runs.Dir{runs.StateDirFor(k.cfg.AgentDir, id)}
	k.mu.Lock()
	defer k.mu.Unlock()
	for _, lr := range k.live {
		if lr.id == id && lr.dir != dirs[0] {
			dirs = append(dirs, lr.dir)
		}
	}
	return dirs
}

// recordLaunch captures an inline spawn as a draft recipe and records a
// user recipe's usage; what fails is a warning, never an error.
func (k *Kernel) recordLaunch(spec *runs.Spec, src spawnSource) (notes []string, dropDraft func()) {
	dropDraft = func() {}
	if src.rec == nil && spec.WorkflowNode == nil && k.conf().Runs.CaptureDrafts && os.Getenv("PI_ACTORS_SPAWN_DRAFTS") != "0" {
		draft, created, err := k.captureDraft(spec.ID, spec.Template, spec.Values, spec.Artifacts, spec.Restart)
		if err != nil {
			notes = append(notes, "draft not captured: "+err.Error())
		}
		spec.DraftRecipe = draft
		if created {
			dropDraft = func() { os.Remove(draft) }
		}
	}
	if src.entry != nil && src.entry.Layer == recipes.LayerUser {
		kind := "spawn"
		if spec.LaunchSource == "tool" {
			kind = "tool"
		}
		if err := recipes.RecordUsage(src.entry.Path, kind); err != nil {
			notes = append(notes, "usage not recorded: "+err.Error())
		}
	}
	return notes, dropDraft
}

// settle queues the follow-up of the run that last used this state dir
// before a new start clears its files: a run that ended moments ago may not
// have been seen by its actor yet. The queue's ids make a repeat harmless.
func (k *Kernel) settle(spec runs.Spec) {
	dir := runs.StateDirFor(k.cfg.AgentDir, spec.ID)
	if spec.StateDir != "" {
		dir = runs.Dir(spec.StateDir)
	}
	// A kill of the run that had this id may still be writing its result
	// (a batch records kills after killing): a new run must not start in
	// the directory before that is done.
	k.awaitKill(dir, 10*time.Second)
	in, err := runs.Load(dir)
	if err != nil || in.Result == nil {
		return
	}
	n := loadNotified(dir, in.Meta)
	k.terminal(in, &n)
}

// runID picks the run id: as=run:<id>, then run_id, then the recipe id,
// then run-<ms> (<tool>-<ms> for a tool), made unique (see stampID).
func (k *Kernel) runID(p *verbs.Spawn, rec *recipes.Recipe) (string, error) {
	if as := p.As; as != "" {
		a, err := mailbox.Parse(as)
		if err != nil {
			return "", err
		}
		if a.Kind != "run" {
			return "", invalidErr("spawn: as must be a run:<id> address (got %s)", as)
		}
		return a.ID, nil
	}
	if id := strings.TrimSpace(p.RunID); id != "" {
		return id, nil
	}
	if tool := p.Tool; tool != "" {
		if err := runs.ValidID(tool); err != nil {
			return "", invalidErr("spawn: tool %v", err)
		}
		return k.stampID(tool), nil
	}
	if rec != nil {
		return rec.ID, nil
	}
	return k.stampID("run"), nil
}

// stampID returns <prefix>-<ms> for a run that names no id: the time in
// milliseconds, moved on past the last one this kernel handed out and
// past any run directory already there, so spawns in the same
// millisecond (a batch) never share an id.
func (k *Kernel) stampID(prefix string) string {
	k.idMu.Lock()
	defer k.idMu.Unlock()
	ms := max(time.Now().UnixMilli(), k.lastStamp+1)
	for {
		id := fmt.Sprintf("%s-%d", prefix, ms)
		// Taken only when it is there: any other answer (the runs
		// directory unreadable, …) is left to the create to report.
		if _, err := os.Lstat(string(runs.StateDirFor(k.cfg.AgentDir, id))); err != nil {
			k.lastStamp = ms
			return id
		}
		ms++
	}
}

// runEnv is the environment a run starts with: the caller's, with this
// kernel's agent root — a run's own pi-actors calls belong to the root
// that supervises it, whatever root the caller named (a spawn from
// another cluster member carries that member's).
func (k *Kernel) runEnv(env []string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, "PI_CODING_AGENT_DIR=") {
			out = append(out, kv)
		}
	}
	return append(out, "PI_CODING_AGENT_DIR="+k.cfg.AgentDir)
}

// injected are the values every run gets.
func injected(id string, dir runs.Dir, bin string) map[string]any {
	return recipes.InjectedValues(id, string(dir), bin)
}

// cliBinary is the pi-actors CLI binary ({pi_actors} in templates).
func (k *Kernel) cliBinary() string {
	if k.cfg.CLI != "" {
		return k.cfg.CLI
	}
	if len(k.cfg.Supervisor) > 0 {
		return k.cfg.Supervisor[0]
	}
	return "pi-actors"
}

func resolveArtifacts(arts map[string]any, values template.Values, defaults map[string]any) (map[string]any, error) {
	if len(arts) == 0 {
		return nil, nil
	}
	out := map[string]any{}
	for name, a := range arts {
		if strings.TrimSpace(name) == "" {
			continue
		}
		switch x := a.(type) {
		case string:
			p, err := template.Expand(x, values, defaults)
			if err != nil {
				return nil, invalidErr("artifacts.%s: %v", name, err)
			}
			out[name] = p
		case map[string]any:
			path, _ := x["path"].(string)
			p, err := template.Expand(path, values, defaults)
			if err != nil {
				return nil, invalidErr("artifacts.%s.path: %v", name, err)
			}
			m := map[string]any{"path": p}
			for _, key := range []string{"kind", "media_type"} {
				if s, _ := x[key].(string); s != "" {
					m[key] = s
				}
			}
			if b, _ := x["required"].(bool); b {
				m["required"] = true
			}
			out[name] = m
		default:
			return nil, invalidErr("artifacts.%s must be a path or {path, kind, media_type, required}", name)
		}
	}
	return out, nil
}

// captureDraft writes an inline spawn to <agent>/recipes/drafts/<id>.json
// before the run starts (an identical draft is reused; a different one
// gets a numbered name), so it can be replayed or promoted later.
func (k *Kernel) captureDraft(id string, graph any, values template.Values, arts map[string]any, restart *runs.Restart) (path string, created bool, err error) {
	dir := filepath.Join(recipes.UserRoot(k.cfg.AgentDir), "drafts")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", false, err
	}
	defaults := map[string]any{}
	for key, v := range values {
		if !slices.Contains(recipes.Injected, key) {
			defaults[key] = v
		}
	}
	draft := map[string]any{"async": true, "description": "Draft recipe captured from spawn run " + id, "template": graph}
	if len(defaults) > 0 {
		draft["defaults"] = defaults
	}
	if len(arts) > 0 {
		draft["artifacts"] = arts
	}
	if restart != nil && restart.Policy != "" && restart.Policy != "never" {
		// Promoted, the draft restarts as the run did.
		draft["restart"] = restart
	}
	data, err := fsutil.MarshalIndent(draft)
	if err != nil {
		return "", false, err
	}
	for n := 1; n < 1000; n++ {
		name := id + ".json"
		if n > 1 {
			name = id + "-" + strconv.Itoa(n) + ".json"
		}
		path := filepath.Join(dir, name)
		if old, err := os.ReadFile(path); err == nil {
			if string(old) == string(data) {
				return path, false, nil
			}
			continue
		}
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
		if err != nil {
			continue
		}
		_, werr := f.Write(data)
		cerr := f.Close()
		if werr != nil || cerr != nil {
			os.Remove(path)
			return "", false, fmt.Errorf("write draft %s: %w", path, errors.Join(werr, cerr))
		}
		return path, true, nil
	}
	return "", false, fmt.Errorf("too many drafts named %s-*.json", id)
}

func recordsJSON(recs []recipes.ContextRecord) []byte {
	if len(recs) == 0 {
		return nil
	}
	b, _ := fsutil.MarshalIndent(recs)
	return b
}

func absFrom(cwd, p string) string {
	if filepath.IsAbs(p) || cwd == "" {
		abs, _ := filepath.Abs(p)
		return abs
	}
	return filepath.Join(cwd, p)
}

func home() string {
	h, _ := os.UserHomeDir()
	return h
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// envString is the value of key in env ("" when absent).
// envString is key's value in env; of two, the last, as exec gives a
// process (a workflow node's check appends the depth and run id the
// scheduler will have to the caller's own).
func envString(env []string, key string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], key+"="); ok {
			return v
		}
	}
	return ""
}

func envInt(env []string, key string) int {
	n, _ := strconv.Atoi(envString(env, key))
	return n
}
