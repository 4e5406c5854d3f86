package verbs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/pi-actors/pi-actors/mailbox"
	"github.com/pi-actors/pi-actors/runs"
	"github.com/pi-actors/pi-actors/verbs/wire"
)

// Routing: on a clustered kernel, verbs that act on a run's files (inspect,
// logs, mailbox, rm) run on the node that has the run. A node-qualified
// address (run:<id>@<node>, room:<run>@<node>, branch:<run>/<b>@<node>)
// names it; a bare one is this node's run, else the one node that has it.
// The caller's own kernel carries the request (op verb) to that node's
// kernel, which runs the same verb code with the caller's session.

// RouteField names the parameter that holds the address a routed verb
// acts on.
var RouteField = map[string]string{"inspect": "target", "logs": "run", "mailbox": "address"}

// SplitAddress separates a node from an address or a bare run word
// ("web@b" is run web on node b). The address comes back without the
// node, in the form it was given.
func SplitAddress(s string) (addr, node string, err error) {
	v := strings.TrimSpace(s)
	i := strings.LastIndexByte(v, '@')
	if i < 0 {
		return v, "", nil
	}
	probe := v
	if !strings.Contains(v[:i], ":") {
		probe = "run:" + v
	}
	if _, node, err = mailbox.SplitNode(probe); err != nil {
		return "", "", &Error{Exit: ExitDataErr, Code: "invalid_address", Message: err.Error()}
	}
	return v[:i], node, nil
}

// runOfAddress is the run id inside an address, or inside a run word when
// the verb takes one (logs); "" when it names no run: coordinator,
// cluster, session:…, tool:….
func runOfAddress(verb, addr string) string {
	kind, rest, ok := strings.Cut(addr, ":")
	if !ok {
		if verb == "logs" {
			return addr
		}
		return ""
	}
	switch kind {
	case mailbox.KindRun, mailbox.KindRoom:
		return rest
	case mailbox.KindBranch:
		run, _, _ := strings.Cut(rest, "/")
		return run
	}
	return ""
}

// route runs a routed verb on another node when its address says so. It
// rewrites *field to the address without its node. routed is false when
// the verb runs here.
func (env *Env) route(ctx context.Context, verb string, req Request, field *string) (out *Outcome, routed bool, err error) {
	addr, node, err := SplitAddress(*field)
	if err != nil {
		return nil, true, err
	}
	cl := env.Config.Cluster
	if env.Routed {
		// Already on the node that answers (op verb): never again.
		if node != "" && node != cl.NodeName() {
			return nil, true, Usagef("%s reached node %s, not node %s", *field, cl.NodeName(), node)
		}
		*field = addr
		return nil, false, nil
	}
	if !cl.Enabled() {
		if node != "" {
			return nil, true, env.notClustered(fmt.Sprintf("%s names a node, but this kernel is not in a cluster (no [cluster] in pi-actors.toml)", *field), "drop the @<node>, or set up a cluster: docs/cluster.md")
		}
		return nil, false, nil
	}
	self := cl.NodeName()
	run := runOfAddress(verb, addr)
	switch {
	case node == self:
		*field = addr
		return nil, false, nil
	case node == "":
		if run == "" || RunHere(env.AgentDir, run) {
			return nil, false, nil
		}
		// Not here: the kernel finds the one node that has it.
	}
	*field = addr
	if m, ok := req.(*Mailbox); ok && m.Pid == 0 {
		m.Pid = -1 // a process on this machine means nothing there: the claim lease applies
	}
	params := map[string]any{"verb": verb, "params": req}
	if l, ok := req.(*Logs); ok && bool(l.Follow) && env.Stream != nil {
		out, err := env.streamNode(ctx, node, run, params)
		return out, true, qualifyErr(err, run, node)
	}
	var ro RoutedOutcome
	if err := env.CallNode(node, "verb", params, &ro); err != nil {
		return nil, true, qualifyErr(err, run, node)
	}
	return ro.Qualified(run), true, nil
}

// QualifyRun adds @node to every address of run in text — run:<run>,
// room:<run>, branch:<run>/<branch> — that does not name a node yet
// (what another node's kernel answered names them bare). It rewrites
// every one: use it on text pi-actors wrote (a next action, a hint), never
// on content (QualifyResult, RoutedOutcome.Qualified).
func QualifyRun(text, run, node string) string {
	if run == "" || node == "" {
		return text
	}
	return qualifyOutside(text, run, node, nil)
}

// addressEnds finds run's addresses in text that name no node yet: for
// each, where it starts and where its @node goes (a branch address: after
// its branch name), in order. An address is whole, not the start of a
// longer id.
func addressEnds(text, run string) [][2]int {
	var out [][2]int
	for _, addr := range []string{"run:" + run, "room:" + run, "branch:" + run + "/"} {
		for from := 0; ; {
			i := strings.Index(text[from:], addr)
			if i < 0 {
				break
			}
			i += from
			end := i + len(addr)
			named := true
			if strings.HasSuffix(addr, "/") { // the branch name
				for end < len(text) && isTokenByte(text[end]) && !strings.HasPrefix(text[end:], "_view=") && !strings.HasPrefix(text[end:], "_type=") {
					end++
				}
				named = end > i+len(addr) // not branch:<run>/<branch>, a placeholder
			}
			rest := text[end:]
			// next= actions join words with _: run:<id>_view=… is the run.
			if named && (rest == "" || !isTokenByte(rest[0]) && rest[0] != '@' || strings.HasPrefix(rest, "_view=") || strings.HasPrefix(rest, "_type=")) {
				out = append(out, [2]int{i, end})
			}
			from = end
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a][0] < out[b][0] })
	return out
}

// qualifyErr is a routed verb's error as the caller reads it: when the
// request named the node, its message and hint name run there
// (QualifyError). A bare address's node is known only from an answer.
func qualifyErr(err error, run, node string) error {
	var e *Error
	if node == "" || !errors.As(err, &e) {
		return err
	}
	q := QualifyError(e, run, node)
	if q.Code == "not_found" && q != e {
		// The node's own hint lists that node's runs, not the caller's.
		q.Hint = "pi-actors ps --cluster lists every node's runs"
	}
	return q
}

func isTokenByte(c byte) bool {
	return c == '-' || c == '_' || c == '.' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// streamNode runs a routed verb about run that streams text (logs -f) on
// node: the chunks go to env.Stream as they come.
func (env *Env) streamNode(ctx context.Context, node, run string, params any) (*Outcome, error) {
	out := &Outcome{Streamed: true}
	err := env.stream(ctx, "verb_stream", node, params, func(resp *wire.Response) (bool, error) {
		var frame struct {
			Chunk   string         `json:"chunk"`
			Stream  string         `json:"stream"` // "stderr": the verb's stderr
			Outcome *RoutedOutcome `json:"outcome"`
		}
		if err := resp.Decode(&frame); err != nil {
			return true, err
		}
		if frame.Outcome != nil {
			out = frame.Outcome.Qualified(run)
			return true, nil
		}
		w := env.Stream
		if frame.Stream == "stderr" && env.Stderr != nil {
			w = env.Stderr
		}
		_, err := io.WriteString(w, frame.Chunk)
		return err != nil, err
	})
	return out, err
}

// RunHere reports whether this node has a run with that id: in its
// default state dir or, indexed, in a state_dir of its own. A bare
// run:<id> is this node's run whenever it has one (the kernel asks the
// cluster only otherwise).
func RunHere(agentDir, run string) bool {
	if runs.ValidID(run) != nil {
		return true // let the local verb report the bad id
	}
	_, err := runs.Resolve(agentDir, run)
	return err == nil
}

// CallNode is Call answered by node's kernel ("": wherever the kernel
// routes it).
func (env *Env) CallNode(node, op string, params any, out any) error {
	c, err := env.Dial(true)
	if err != nil {
		return err
	}
	defer c.Close()
	resp, err := env.exchange(c, wire.Request{Op: op, Node: node}, params)
	if err != nil {
		return err
	}
	return resp.Decode(out)
}

// notClustered answers a verb that needs a cluster on a kernel without
// one: 78 with msg and hint — unless pi-actors.toml could not be read
// (a verb that reads state goes on with the defaults), whose error says
// what is really wrong.
func (env *Env) notClustered(msg, hint string) error {
	if env.ConfigErr != nil {
		return env.ConfigErr
	}
	return &Error{Exit: ExitConfig, Code: "not_clustered", Message: msg, Hint: hint}
}
