package actors

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/pi-actors/pi-actors/internal/config"
	"github.com/pi-actors/pi-actors/mailbox"
	"github.com/pi-actors/pi-actors/sessions"
	"github.com/pi-actors/pi-actors/verbs"
	"github.com/pi-actors/pi-actors/verbs/wire"
)

// Cluster is a kernel's cluster side: package actors/cluster builds one on
// protoactor-go's cluster (providers, gossip, gRPC remote), and only the
// pi-actors-cluster binary links it. A kernel without one is the
// single-machine kernel. The kernel asks it to carry requests to other
// nodes; what arrives from other nodes it hands to Kernel.Handle and
// Kernel.HandleStream, so a forwarded request meets the same validation,
// ownership and session checks as a local one.
type Cluster interface {
	// Start forms or joins the cluster in the background (it never
	// delays the kernel); Stop leaves it.
	Start(k *Kernel)
	Stop()
	// Node is this kernel's node name.
	Node() string
	// Forward sends one request to node's kernel and returns its answer
	// (node_unreachable, exit 69, when it cannot).
	Forward(node string, req wire.Request) wire.Response
	// Stream forwards a streaming request and writes each response until
	// the stream ends or the client is gone.
	Stream(node string, req wire.Request, write func(wire.Response) error, gone <-chan struct{})
	// Locate names the other nodes known to have a run with this id.
	Locate(run string) []string
	// Place picks the node for spawn placement=spread.
	Place() (string, error)
	// View answers `cluster` requests (view=nodes, status, …).
	View(req wire.Request) (any, error)
	// Pending says a session homed on another node has follow-ups queued
	// here: the cluster side delivers them to that node. It may come
	// before Start (the kernel rebuilds its runs first) and never blocks.
	Pending(session string)
}

// errNotClustered answers a request that needs a cluster on a kernel
// without one.
func (k *Kernel) errNotClustered(what string) error {
	if k.cfg.Settings.Cluster.Enabled() {
		return &wire.Error{Code: "cluster_unavailable", Exit: 69,
			Message: what + " needs the cluster, but this kernel binary has no cluster side",
			Hint:    "install pi-actors-cluster next to pi-actors (CGO_ENABLED=0 go install ./cmd/...), then pi-actors kernel stop; the next call starts it"}
	}
	return &wire.Error{Code: "not_clustered", Exit: 78,
		Message: what + " needs a cluster: this kernel has no [cluster] section in pi-actors.toml",
		Hint:    "see docs/cluster.md"}
}

// routeTarget decides which node answers req, rewriting its parameters
// for that node (a node-qualified address loses its @<node>, spawn loses
// node= and placement=). "" means this kernel.
func (k *Kernel) routeTarget(req *wire.Request) (string, error) {
	self := ""
	if k.cluster != nil {
		self = k.cluster.Node()
	}
	if req.From != "" {
		// It came over the cluster: it is answered here or not at all.
		if req.Node != "" && req.Node != self {
			return "", &wire.Error{Code: "usage", Exit: 64, Message: fmt.Sprintf("request for node %s reached node %s", req.Node, self)}
		}
		req.Node = ""
		return "", nil
	}
	target := req.Node
	req.Node = ""
	switch req.Op {
	case "spawn":
		p, err := paramMap(req.Params)
		if err != nil {
			return "", nil // the spawn's own decoding reports it
		}
		node, place := jsonString(p["node"]), jsonString(p["placement"])
		if node == "" && (place == "" || place == "local") {
			break
		}
		delete(p, "node")
		delete(p, "placement")
		if k.cluster == nil {
			return "", k.errNotClustered("spawn node=/placement=")
		}
		switch {
		case node != "":
			target = node
		case place == "spread":
			if target, err = k.cluster.Place(); err != nil {
				return "", err
			}
		default:
			return "", &wire.Error{Code: "usage", Exit: 64, Message: fmt.Sprintf("spawn: placement must be local or spread (got %q)", place)}
		}
		req.Params, _ = json.Marshal(p)
	case "message", "watch_room":
		key := "to"
		if req.Op == "watch_room" {
			key = "target"
		}
		p, err := paramMap(req.Params)
		if err != nil {
			return "", nil
		}
		to := jsonString(p[key])
		addr, node, err := mailbox.SplitNode(to)
		if err != nil || to == "" {
			return "", nil
		}
		if node == "" {
			if k.cluster != nil {
				return k.locateBare(addr)
			}
			break
		}
		if k.cluster == nil {
			return "", k.errNotClustered(to)
		}
		p[key], _ = json.Marshal(addr)
		req.Params, _ = json.Marshal(p)
		target = node
	case "verb", "verb_stream":
		if target != "" || k.cluster == nil {
			break
		}
		// A bare address the caller found no run for: the one node that
		// has it.
		var p struct {
			Verb   string                     `json:"verb"`
			Params map[string]json.RawMessage `json:"params"`
		}
		if json.Unmarshal(req.Params, &p) != nil {
			break
		}
		addr := jsonString(p.Params[verbs.RouteField[p.Verb]])
		if addr != "" && !strings.Contains(addr, ":") {
			addr = "run:" + addr
		}
		return k.locateBare(addr)
	}
	if target == "" || target == self {
		return "", nil
	}
	if k.cluster == nil {
		return "", k.errNotClustered("node " + target)
	}
	return target, nil
}

// remoteOps are the operations another node's kernel may ask of this one:
// what routeTarget forwards (spawn node=/placement=, message and
// watch_room to another node's address, the routed verbs, knowledge
// scope=cluster). The rest — stop, session, followups, watch, events,
// knowledge_ingest, … — is this machine's own business.
var remoteOps = map[string]bool{"spawn": true, "message": true, "verb": true, "knowledge": true, "watch_room": true, "verb_stream": true}

// remoteKnowledgeOps are the knowledge operations scope=cluster asks of
// another node (read-only).
var remoteKnowledgeOps = []string{"recall", "search_all"}

// checkRemote refuses what another node may not ask of this one: a request
// that does not name the node it comes from (taken for a local one, it
// could be forwarded again and would keep the caller's run identity), one
// that claims to come from this node, and an operation not served to
// other nodes.
func (k *Kernel) checkRemote(from string, req wire.Request) error {
	if !config.ValidNode(from) || from == k.nodeName() {
		return &wire.Error{Code: "invalid_request", Exit: 65, Message: fmt.Sprintf("a request over the cluster must name the node it comes from, another than this one (got from=%q)", from)}
	}
	refuse := func(what string) error {
		return &wire.Error{Code: "usage", Exit: 64, Message: fmt.Sprintf("%s is not served to other nodes (node %s asked node %s)", what, from, k.nodeName())}
	}
	if !remoteOps[req.Op] {
		return refuse("operation " + strconv.Quote(req.Op))
	}
	if req.Op == "knowledge" {
		var call verbs.KnowledgeCall
		if json.Unmarshal(req.Params, &call) != nil || call.Batch != nil || !slices.Contains(remoteKnowledgeOps, call.Op) {
			return refuse(fmt.Sprintf("knowledge %q (other nodes may ask %s)", call.Op, strings.Join(remoteKnowledgeOps, ", ")))
		}
	}
	return nil
}

// locateBare resolves a bare run:/room:/branch: address that names no
// run here to the one node that has it.
func (k *Kernel) locateBare(addr string) (string, error) {
	a, err := mailbox.Parse(addr)
	if err != nil || a.ID == "" || (a.Kind != mailbox.KindRun && a.Kind != mailbox.KindRoom && a.Kind != mailbox.KindBranch) {
		return "", nil
	}
	if verbs.RunHere(k.cfg.AgentDir, a.ID) {
		return "", nil
	}
	nodes := k.cluster.Locate(a.ID)
	switch len(nodes) {
	case 0:
		return "", nil // not found anywhere: handled here (not found, dead letter)
	case 1:
		return nodes[0], nil
	}
	return "", ambiguousRun(a.ID, nodes)
}

// ambiguousRun is a bare run id that several nodes have (exit 64).
func ambiguousRun(id string, nodes []string) error {
	slices.Sort(nodes)
	alts := make([]string, len(nodes))
	for i, n := range nodes {
		alts[i] = "run:" + id + "@" + n
	}
	return &wire.Error{Code: "ambiguous_run", Exit: 64,
		Message: fmt.Sprintf("run:%s exists on several nodes: %s", id, strings.Join(alts, ", ")),
		Hint:    "name the node: " + alts[0], Details: map[string]any{"candidates": alts}}
}

// routedVerbs are the verbs a CLI runs itself that another node's kernel
// may run for it (op verb): they read or change that node's state files.
var routedVerbs = []string{"inspect", "logs", "mailbox", "ps"}

// VerbResult is what op verb answers: a verb's outcome as the front door
// that asked renders it.
type VerbResult = verbs.RoutedOutcome

// runVerb runs one of routedVerbs in this kernel's process for a caller on
// another node (or this one): the same verb code as the CLI's, with the
// caller's session, so the same ownership checks apply.
func (k *Kernel) runVerb(req wire.Request) (any, error) {
	spec, r, env, err := k.verbRequest(req)
	if err != nil {
		return nil, err
	}
	out, err := spec.Run(context.Background(), env, r)
	if err != nil {
		return nil, err
	}
	return verbs.Routed(out, k.nodeName()), nil
}

func init() { streamOps["verb_stream"] = (*Kernel).verbStream }

// verbStream runs a routed verb that streams text (logs -f): each chunk it
// writes is a frame {"chunk": …} ({"chunk": …, "stream": "stderr"} for
// its stderr); the last frame is {"outcome": …}.
func (k *Kernel) verbStream(req wire.Request, write func(wire.Response) error, gone <-chan struct{}) {
	spec, r, env, err := k.verbRequest(req)
	if err != nil {
		write(wire.Response{ID: req.ID, Error: verbs.Classify(err)})
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-gone:
			cancel()
		case <-ctx.Done():
		}
	}()
	env.Stream = chunkWriter(func(p []byte) error {
		return write(wire.Response{ID: req.ID, OK: true, Result: wire.Result(map[string]string{"chunk": string(p)})})
	})
	// What the verb writes to stderr (logs -f: the run's stderr lines)
	// goes to the caller's stderr: its frames say so.
	env.Stderr = chunkWriter(func(p []byte) error {
		return write(wire.Response{ID: req.ID, OK: true, Result: wire.Result(map[string]string{"chunk": string(p), "stream": "stderr"})})
	})
	out, err := spec.Run(ctx, env, r)
	if err != nil {
		write(wire.Response{ID: req.ID, Error: verbs.Classify(err)})
		return
	}
	write(wire.Response{ID: req.ID, OK: true, Result: wire.Result(map[string]any{"outcome": verbs.Routed(out, k.nodeName())})})
}

// chunkWriter is an io.Writer over a frame sender.
type chunkWriter func(p []byte) error

func (w chunkWriter) Write(p []byte) (int, error) {
	if err := w(p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// verbRequest decodes op verb's parameters into the verb, its checked
// request and the environment it runs with here.
func (k *Kernel) verbRequest(req wire.Request) (*verbs.Spec, verbs.Request, *verbs.Env, error) {
	var p struct {
		Verb   string          `json:"verb"`
		Params json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(req.Params, &p); err != nil {
		return nil, nil, nil, &wire.Error{Code: "invalid_request", Exit: 65, Message: "verb: " + err.Error()}
	}
	spec := verbs.Find(p.Verb)
	if spec == nil || !slices.Contains(routedVerbs, p.Verb) {
		return nil, nil, nil, &wire.Error{Code: "usage", Exit: 64, Message: fmt.Sprintf("verb %q cannot run on another node (routed verbs: %s)", p.Verb, strings.Join(routedVerbs, ", "))}
	}
	r, err := spec.DecodeJSON(p.Params)
	if err != nil {
		return nil, nil, nil, err
	}
	if err := r.Validate(); err != nil {
		return nil, nil, nil, err
	}
	if req.From != "" {
		if err := remoteVerb(r); err != nil {
			return nil, nil, nil, err
		}
	}
	env := &verbs.Env{AgentDir: k.cfg.AgentDir, Config: k.conf(), Session: req.Session, Cwd: req.Cwd, Environ: req.Env,
		Version: k.cfg.Version, CallerPid: os.Getpid(), JSON: true, Routed: true}
	if st, err := os.Stat(env.Cwd); err != nil || !st.IsDir() {
		env.Cwd = k.cfg.AgentDir
	}
	return spec, r, env, nil
}

// remoteVerb refuses what another node's caller has no business running
// here through a routed verb: the cluster routes inspect, logs and mailbox
// only for a run's, room's or branch's address, and ps for this node's
// rows. Anything else would reach this node's own state by another way
// than the request's checks (a coordinator's follow-ups, a session's
// record, a state_dir path on this machine) or ask the cluster again.
func remoteVerb(r verbs.Request) error {
	refuse := func(format string, a ...any) error {
		return &wire.Error{Code: "usage", Exit: 64, Message: fmt.Sprintf(format, a...) + " is not served to other nodes"}
	}
	switch v := r.(type) {
	case *verbs.Inspect:
		kind, _, _ := strings.Cut(v.Target, ":")
		if kind != mailbox.KindRun && kind != mailbox.KindRoom && kind != mailbox.KindBranch {
			return refuse("inspect target=%s (only run:, room: and branch: addresses)", v.Target)
		}
	case *verbs.Mailbox:
		if v.Address == "" || v.StateDir != "" {
			return refuse("mailbox without address=branch:<run>/<branch> (a state_dir is a path on the caller's machine)")
		}
	case *verbs.Ps:
		if v.Cluster {
			return refuse("ps --cluster (each node answers for itself)")
		}
	}
	return nil
}

// remoteEnviron is the environment a request from another node is
// handled with: the caller's, without the identity of a run on that node
// (a run id there names nothing here, or another run: it must not become
// a spawned run's parent, a message's sender or a knowledge write's
// source).
func remoteEnviron(from string, env []string) []string {
	var remoteRun string
	out := slices.DeleteFunc(slices.Clone(env), func(kv string) bool {
		if id, ok := strings.CutPrefix(kv, "PI_ACTORS_RUN_ID="); ok && id != "" {
			remoteRun = id + "@" + from
		}
		return strings.HasPrefix(kv, "PI_ACTORS_RUN_ID=") || strings.HasPrefix(kv, "PI_ACTORS_STATE_DIR=") || strings.HasPrefix(kv, sessions.RemoteRunEnv+"=")
	})
	if remoteRun != "" {
		// Still a run's call (not the session's activity here).
		out = append(out, sessions.RemoteRunEnv+"="+remoteRun)
	}
	for i, kv := range out {
		// A claim's owner is the caller's run, qualified with its node.
		if addr, ok := strings.CutPrefix(kv, "PI_ACTORS_ADDRESS="); ok && addr != "" && !strings.Contains(addr, "@") {
			out[i] += "@" + from
		}
	}
	return out
}

// checkCwd refuses a spawn whose working directory is not a directory
// here, before anything is written: a run starts in its caller's
// directory, and a caller on another node may be in one this machine does
// not have (the supervisor would not start, naming its own binary).
func (k *Kernel) checkCwd(req wire.Request) error {
	if req.Cwd == "" {
		return nil
	}
	if st, err := os.Stat(req.Cwd); err == nil && st.IsDir() {
		return nil
	}
	where := "here"
	if n := k.nodeName(); n != "" {
		where = "on node " + n
	}
	return &wire.Error{Code: "not_found", Exit: 66, Message: fmt.Sprintf("spawn: the working directory %s does not exist %s (a run starts in its caller's directory)", req.Cwd, where),
		Hint: "call from a directory that exists there too"}
}

// nodeName is this kernel's node name ("" without a cluster).
func (k *Kernel) nodeName() string {
	if k.cluster == nil {
		return ""
	}
	return k.cluster.Node()
}

func (k *Kernel) clusterView(req wire.Request) (any, error) {
	if k.cluster == nil {
		return nil, k.errNotClustered("inspect target=cluster")
	}
	return k.cluster.View(req)
}

func paramMap(raw json.RawMessage) (map[string]json.RawMessage, error) {
	p := map[string]json.RawMessage{}
	if len(raw) == 0 {
		return p, nil
	}
	err := json.Unmarshal(raw, &p)
	return p, err
}

func jsonString(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	return strings.TrimSpace(s)
}

// routeSpawns sends a local batch's spawns that belong on other nodes
// (node=, placement=spread) to those nodes, one batch per node in
// parallel, and writes their answers, or a spawn's routing error, into
// results; wait returns once every node answered (this node starts its
// own meanwhile). It returns the parameters of the items left to this
// node, placed once (without node=/placement=); nil when it routed
// nothing (not a clustered batch of spawns: every item is this node's as
// given).
func (k *Kernel) routeSpawns(req wire.Request, results []wire.Response) (here map[int]json.RawMessage, wait func()) {
	if req.Op != "spawn" || req.From != "" || k.cluster == nil {
		return nil, func() {}
	}
	here = map[int]json.RawMessage{}
	type part struct {
		idx   []int
		items []json.RawMessage
	}
	byNode := map[string]*part{}
	var order []string
	for i, raw := range req.Items {
		one := req
		one.Items, one.Params = nil, raw
		node, err := k.routeTarget(&one)
		switch {
		case err != nil:
			results[i] = wire.Response{ID: req.ID, Error: verbs.Classify(err)}
		case node == "":
			here[i] = one.Params
		default:
			p := byNode[node]
			if p == nil {
				p = &part{}
				byNode[node] = p
				order = append(order, node)
			}
			p.idx, p.items = append(p.idx, i), append(p.items, one.Params)
		}
	}
	var wg sync.WaitGroup
	for _, node := range order {
		p := byNode[node]
		for lo, hi := 0, 0; lo < len(p.idx); lo = hi {
			size := len(p.items[lo])
			for hi = lo + 1; hi < len(p.idx) && hi-lo < routedBatchMax && size+len(p.items[hi]) <= routedBatchBytes; hi++ {
				size += len(p.items[hi])
			}
			batch := req
			batch.Node, batch.Params, batch.Items = "", nil, p.items[lo:hi]
			batch.Home = k.parentHome(req) // a run of a session homed elsewhere: that node's
			wg.Add(1)
			go func() {
				defer wg.Done()
				resp := k.cluster.Forward(node, batch)
				for j, i := range p.idx[lo:hi] {
					switch {
					case resp.Error != nil:
						results[i] = wire.Response{ID: req.ID, Error: resp.Error}
					case j < len(resp.Results):
						results[i] = resp.Results[j]
						results[i].ID = req.ID
					default:
						results[i] = wire.Response{ID: req.ID, Error: &wire.Error{Code: "internal", Exit: 70,
							Message: fmt.Sprintf("node %s answered %d of a batch of %d spawns", node, len(resp.Results), hi-lo)}}
					}
				}
			}()
		}
	}
	return here, wg.Wait
}

// routedBatchMax and routedBatchBytes bound the spawns one request to
// another node carries: each is answered well within the forward
// timeout, and the request stays well within the remote's message size
// limit (a spawn may carry a long prompt).
const (
	routedBatchMax   = 200
	routedBatchBytes = 4 << 20
)
