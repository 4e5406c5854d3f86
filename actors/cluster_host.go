package actors

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/pi-actors/pi-actors/internal/config"
	"github.com/pi-actors/pi-actors/internal/fsutil"
	"github.com/pi-actors/pi-actors/mailbox"
	"github.com/pi-actors/pi-actors/runs"
	"github.com/pi-actors/pi-actors/verbs/wire"
)

// What a cluster side reads from and hands to its kernel. Nothing here
// imports the cluster engine: these are plain kernel facts and the
// follow-up queue operations a node needs to deliver another node's
// follow-ups.

// Log is the kernel's logger.
func (k *Kernel) Log() *slog.Logger { return k.log }

// AgentDir is the kernel's agent root.
func (k *Kernel) AgentDir() string { return k.cfg.AgentDir }

// Settings is the kernel's pi-actors.toml.
func (k *Kernel) Settings() config.Config { return k.cfg.Settings }

// Version is the kernel's version.
func (k *Kernel) Version() string { return k.cfg.Version }

// Started is when the kernel started.
func (k *Kernel) Started() time.Time { return k.started }

// Load is what placement compares: the kernel's live runs and the
// machine's one-minute load average.
func (k *Kernel) Load() (live int, load1 float64) {
	live = k.liveTotal()
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) > 0 {
			load1, _ = strconv.ParseFloat(f[0], 64)
		}
	}
	return live, load1
}

// RunDigest is one run as other nodes cache it: enough to resolve a bare
// run id and to answer with the last known status when this node cannot
// be reached.
type RunDigest struct {
	Run       string    `json:"run"`
	Status    string    `json:"status"`
	Owner     string    `json:"owner,omitempty"`
	UpdatedAt time.Time `json:"updated_at"`
}

// DigestVersion changes whenever the runs index does (it is an
// append-only journal): a member asks for the digest only then.
func (k *Kernel) DigestVersion() string {
	st, err := os.Stat(filepath.Join(runs.Root(k.cfg.AgentDir), runs.IndexFile))
	if err != nil {
		return "0"
	}
	return fmt.Sprintf("%d.%d.%d", st.Size(), st.ModTime().UnixNano(), k.liveTotal())
}

// RunsDigest lists this node's runs (the newest max), live ones with
// status running.
func (k *Kernel) RunsDigest(max int) []RunDigest {
	entries, err := k.index.Entries()
	if err != nil {
		k.log.Warn("runs digest", "err", err)
	}
	k.mu.Lock()
	live := make(map[string]bool, len(k.live))
	for _, lr := range k.live {
		live[lr.id] = true
	}
	k.mu.Unlock()
	out := make([]RunDigest, 0, min(len(entries), max))
	for _, e := range entries {
		if len(out) >= max {
			break
		}
		st := e.Status
		if live[e.Run] {
			st = runs.StatusRunning
		}
		out = append(out, RunDigest{Run: e.Run, Status: st, Owner: e.OwnerID, UpdatedAt: e.UpdatedAt})
	}
	return out
}

// homeFile records the node a session's coordinator lives on, when it is
// not this one, for the follow-up queue key (homeKey): the queue's
// follow-ups are delivered there.
func (k *Kernel) homeFile(key string) string {
	return strings.TrimSuffix(k.sessionFile(key), ".jsonl") + ".home"
}

// homeKey is the follow-up queue of a session's runs whose coordinator is
// on node home: apart from the queue of the same session name here (a
// coordinator of this node, or of a third node, may use the name too).
func homeKey(session, home string) string {
	if home == "" {
		return session
	}
	return session + "\x00@" + home
}

// queueKey is the follow-up queue of a run's session.
func queueKey(m *runs.Meta) string { return homeKey(m.OwnerID, m.HomeNode) }

// homeFor is the node of the coordinator of the session a spawn request
// is made for ("": this one): the node it came from (or the one that node
// names), else, for a run's own spawn here, its run's home. Without a
// cluster there is none (and no run.json to read on the way).
func (k *Kernel) homeFor(req wire.Request) string {
	var home string
	switch {
	case k.cluster == nil:
		return ""
	case req.From == "":
		home = k.parentHome(req)
	case req.Home != "":
		home = req.Home
	default:
		home = req.From
	}
	if home == k.nodeName() {
		return ""
	}
	return home
}

// parentHome is the home node of the run that makes a request (its
// PI_ACTORS_RUN_ID), "" when it has none or is no run.
func (k *Kernel) parentHome(req wire.Request) string {
	parent := envString(req.Env, "PI_ACTORS_RUN_ID")
	if parent == "" || runs.ValidID(parent) != nil {
		return ""
	}
	m, err := runs.StateDirFor(k.cfg.AgentDir, parent).Meta()
	if err != nil || m.OwnerID != req.Session {
		return "" // a run of another session (a pi started inside a run) is not that session's
	}
	return m.HomeNode
}

// setHome records that the queue key holds follow-ups of session for its
// coordinator on node.
func (k *Kernel) setHome(key, session, node string) {
	if key == "" || node == "" {
		return
	}
	if at, _ := k.SessionHome(key); at == node {
		return
	}
	path := k.homeFile(key)
	os.MkdirAll(filepath.Dir(path), 0o700)
	if err := fsutil.WriteFile(path, []byte(node+"\n"+session+"\n"), 0o600); err != nil {
		k.log.Warn("session home", "session", session, "node", node, "err", err)
	}
}

// SessionHome is the node a follow-up queue is delivered to ("": this
// one) and the name of its session there.
func (k *Kernel) SessionHome(key string) (node, session string) {
	b, err := os.ReadFile(k.homeFile(key))
	if err != nil {
		return "", key
	}
	node, session, _ = strings.Cut(strings.TrimSpace(string(b)), "\n")
	if session == "" {
		session = key // written before queues had keys: the session's own
	}
	return strings.TrimSpace(node), session
}

// RemoteSessions lists the follow-up queues delivered to other nodes, by
// node.
func (k *Kernel) RemoteSessions() map[string][]string {
	out := map[string][]string{}
	files, _ := filepath.Glob(filepath.Join(k.tmp, "sessions", "*.home"))
	for _, f := range files {
		key := strings.TrimSuffix(filepath.Base(f), ".home")
		if node, _ := k.SessionHome(key); node != "" {
			out[node] = append(out[node], key)
		}
	}
	return out
}

// TakeFollowups claims up to max of a session's undelivered follow-ups
// (see take); DeliveredFollowups marks them delivered once the home node
// has them.
func (k *Kernel) TakeFollowups(session string, max int) []Followup {
	list, _ := k.take(session, max)
	return list
}

// DeliveredFollowups marks follow-ups delivered.
func (k *Kernel) DeliveredFollowups(session string, ids ...string) { k.delivered(session, ids...) }

// EnqueueFollowups appends follow-ups delivered from another node to a
// session's queue, idempotent by id (a retried delivery adds nothing), and
// wakes the session's watchers. (A run's follow-ups go straight to its
// session's node, its homeNode; only a queue homed elsewhere by an older
// kernel's <session>.home file is handed on.)
func (k *Kernel) EnqueueFollowups(session string, list []Followup) error {
	q := mailbox.NewInbox(k.sessionFile(session))
	added := false
	for _, f := range list {
		_, dup, err := q.Append(map[string]any{"id": f.ID, "type": "run.followup", "body": f})
		if err != nil {
			return fmt.Errorf("queue follow-up %s: %w", f.ID, err)
		}
		added = added || !dup
	}
	if added {
		k.queued(session)
	}
	return nil
}

// RequeueFollowups puts claimed follow-ups back in the queue (a delivery
// to the home node that did not go through).
func (k *Kernel) RequeueFollowups(session string, ids ...string) {
	if err := mailbox.NewInbox(k.sessionFile(session)).Requeue(ids); err != nil {
		k.log.Warn("requeue follow-ups", "session", session, "err", err)
	}
}
