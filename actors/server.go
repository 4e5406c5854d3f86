package actors

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sync/errgroup"
	"golang.org/x/sys/unix"

	"github.com/pi-actors/pi-actors/internal/fsutil"
	"github.com/pi-actors/pi-actors/verbs"
	"github.com/pi-actors/pi-actors/verbs/wire"
)

// batchLimit bounds how many items of a batch are handled at once:
// messages mostly wait for a supervisor to apply them; a spawn waits a few
// milliseconds for its supervisor to come up around well under one of its
// own, so four per CPU keep the CPUs busy — more only add threads blocked
// in system calls (the vfork of a supervisor, an fsync) and memory.
func batchLimit(op string) int {
	if op == "message" {
		return 256
	}
	return max(8, 4*runtime.GOMAXPROCS(0))
}

func (k *Kernel) listen() error {
	path := wire.SocketPath(k.cfg.AgentDir)
	// We hold the kernel lock, so a socket file left here is stale —
	// unless another user put it there (the fallback path is in /tmp).
	if fi, err := os.Lstat(path); err == nil {
		if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
			return fmt.Errorf("kernel: listen %s: %w: the file there is uid %d's; remove it, or use a shorter agent root (its socket then lives inside it)", path, wire.ErrDenied, st.Uid)
		}
	}
	os.Remove(path)
	old := unix.Umask(0o177)
	ln, err := net.Listen("unix", path)
	unix.Umask(old)
	if err != nil {
		return fmt.Errorf("kernel: listen %s: %w", path, err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		ln.Close()
		return fmt.Errorf("kernel: chmod socket: %w", err)
	}
	k.ln = ln
	go sweepStaleSockets(path, time.Minute)
	return nil
}

// sweepStaleSockets removes this user's fallback kernel sockets in /tmp
// (wire.SocketPath, for agent roots with long paths) that nothing listens
// on and that are older than minAge: a kernel that was killed leaves its
// socket there, and a test suite's temporary roots leave hundreds. mine,
// this kernel's, is kept; so is one that answers, or changed since it was
// looked at (a kernel starting on it).
func sweepStaleSockets(mine string, minAge time.Duration) int {
	paths, _ := filepath.Glob(fmt.Sprintf("/tmp/pi-actors-%d-*.sock", os.Getuid()))
	removed := 0
	for _, p := range paths {
		fi, err := os.Lstat(p)
		if p == mine || err != nil || fi.Mode()&os.ModeSocket == 0 || time.Since(fi.ModTime()) < minAge {
			continue
		}
		if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != os.Getuid() {
			continue
		}
		c, err := net.DialTimeout("unix", p, 100*time.Millisecond)
		if err == nil {
			c.Close()
			continue
		}
		if !errors.Is(err, syscall.ECONNREFUSED) {
			continue
		}
		if again, err := os.Lstat(p); err == nil && os.SameFile(fi, again) && again.ModTime().Equal(fi.ModTime()) && os.Remove(p) == nil {
			removed++
		}
	}
	return removed
}

func (k *Kernel) serve() {
	var backoff time.Duration
	for {
		c, err := k.ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of file descriptors (or another passing failure): the
			// kernel keeps serving once some are free again, as net/http
			// does, instead of never accepting again.
			backoff = min(max(2*backoff, 5*time.Millisecond), time.Second)
			k.log.Warn("accept", "err", err, "retry_in", backoff)
			select {
			case <-time.After(backoff):
			case <-k.stopped:
				return
			}
			continue
		}
		backoff = 0
		go k.handle(c)
	}
}

// refusePeer answers a connection from another user (or one whose
// credentials cannot be read) with a denied error and nothing else; nil
// for our own uid.
func refusePeer(c net.Conn) *wire.Error {
	uid, err := wire.PeerUID(c)
	switch {
	case err != nil:
		return &wire.Error{Code: "denied", Message: "kernel: " + err.Error(), Exit: 77}
	case uid != os.Getuid():
		return &wire.Error{Code: "denied", Exit: 77,
			Message: fmt.Sprintf("kernel: %v: this kernel serves uid %d only, the caller runs as uid %d (use your own agent root: PI_CODING_AGENT_DIR)", wire.ErrDenied, os.Getuid(), uid)}
	}
	return nil
}

func (k *Kernel) handle(c net.Conn) {
	defer c.Close()
	if e := refusePeer(c); e != nil {
		k.log.Warn("refused a connection", "err", e.Message)
		b, _ := json.Marshal(wire.Response{Error: e})
		c.SetWriteDeadline(time.Now().Add(time.Second))
		c.Write(append(b, '\n'))
		return
	}
	r := bufio.NewReaderSize(c, 64<<10)
	var wmu sync.Mutex
	write := func(resp wire.Response) error {
		b, _ := json.Marshal(resp)
		wmu.Lock()
		defer wmu.Unlock()
		_, err := c.Write(append(b, '\n'))
		return err
	}
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return
		}
		var req wire.Request
		if err := json.Unmarshal(line, &req); err != nil {
			write(wire.Response{Error: &wire.Error{Code: "invalid_request", Message: "malformed request: " + err.Error(), Exit: 65}})
			continue
		}
		req.From, req.Home = "", "" // only the cluster side says where a request came from
		if h, ok := ackOps[req.Op]; ok && req.Ack && req.Node == "" {
			// A follow-up stream whose client acknowledges what it passed
			// on (wire.OpAck): its acks reach the handler; it hangs up
			// as below.
			// acks is buffered so that what a client acknowledged while the
			// handler marked the last ones waits for it, and one pass of
			// the queue marks them together (moreAcks).
			gone, acks, done := make(chan struct{}), make(chan []string, 256), make(chan struct{})
			go func() {
				defer close(gone)
				readAcks(r, acks, done)
			}()
			h(k, req, write, gone, acks)
			close(done)
			return
		}
		if h, ok := streamOps[req.Op]; ok {
			// The stream owns the connection from here; a client that hangs
			// up closes gone at once (its streams need not wait for a
			// write to fail). Anything else it sends is ignored.
			gone := make(chan struct{})
			go func() {
				defer close(gone)
				io.Copy(io.Discard, r)
			}()
			k.stream(h, req, write, gone)
			return
		}
		resp := k.dispatch(req)
		k.trace.flush() // what the request did is in the causal record before it is answered
		if err := write(resp); err != nil {
			return
		}
	}
}

// dispatch answers one request; batches fan out with bounded parallelism
// and answer in order.
func (k *Kernel) dispatch(req wire.Request) wire.Response {
	k.work.Add(uint64(max(1, len(req.Items))))
	resp := wire.Response{ID: req.ID}
	if err := verbs.CheckCaller(req.Session, req.Cause); err != nil {
		resp.Error = verbs.Classify(err)
		return resp
	}
	if len(req.Items) > 0 {
		resp.OK = true
		resp.Results = make([]wire.Response, len(req.Items))
		// Work an item defers (the records of a control.kill) runs once
		// every item has had its immediate effect.
		var (
			mu    sync.Mutex
			after []func()
		)
		later := func(f func()) { mu.Lock(); after = append(after, f); mu.Unlock() }
		// A batch of spawns commits its new state directories together:
		// their parent is fsynced once, before the answer (group commit).
		var dirs *fsutil.DirSyncs
		if req.Op == "spawn" {
			dirs = &fsutil.DirSyncs{}
		}
		// Spawns placed on other nodes travel as one batch per node (its
		// kernel commits them together), beside the local ones.
		routed, remoteDone := k.routeSpawns(req, resp.Results)
		groups := batchGroups(req)
		var g errgroup.Group
		g.SetLimit(batchLimit(req.Op))
		for _, group := range groups {
			g.Go(func() error {
				for _, i := range group {
					p, here := req.Items[i], routed == nil
					if !here {
						p, here = routed[i]
					}
					if !here {
						continue // answered by routeSpawns
					}
					one := req
					one.Items, one.Params = nil, p
					resp.Results[i] = k.one(one, later, dirs)
				}
				return nil
			})
		}
		g.Wait()
		remoteDone()
		if dirs != nil {
			if err := dirs.Sync(); err != nil {
				k.log.Warn("sync new state dirs", "err", err)
			}
		}
		g.SetLimit(batchLimit(req.Op))
		for _, f := range after {
			g.Go(func() error {
				defer k.recoverPanic(req.Op, nil)
				f()
				return nil
			})
		}
		g.Wait()
		releaseAfter(len(req.Items))
		return resp
	}
	return k.one(req, nil, nil)
}

// recoverPanic turns a panic while handling op into a logged internal
// error (in *resp when not nil): one bad request never takes the kernel
// down.
func (k *Kernel) recoverPanic(op string, resp *wire.Response) {
	if p := recover(); p != nil {
		k.log.Error("request panicked", "op", op, "panic", p)
		if resp != nil {
			*resp = wire.Response{ID: resp.ID, Error: &wire.Error{Code: "internal", Message: fmt.Sprintf("kernel error handling %s: %v", op, p), Exit: 70}}
		}
	}
}

// extraOps are the kernel operations other files of this package add (in
// init): knowledge, rooms, … Each decodes its own parameters.
var extraOps = map[string]func(k *Kernel, req wire.Request) (any, error){}

// ackOps are the follow-up streams (watch, followups) for a client that
// acknowledges what it passed on (wire.Request.Ack): acks carries the ids
// of each wire.OpAck it sends. Their streamOps entries serve other
// clients (acks nil: what was written counts as delivered).
var ackOps = map[string]func(k *Kernel, req wire.Request, write func(wire.Response) error, gone <-chan struct{}, acks <-chan []string){
	"watch":     (*Kernel).watch,
	"followups": (*Kernel).answerFollowups,
}

// moreAcks appends to ids what is already waiting on acks. readAcks hands
// every ack over before it closes gone, so after gone this takes all.
func moreAcks(acks <-chan []string, ids []string) []string {
	for {
		select {
		case more := <-acks:
			ids = append(ids, more...)
		default:
			return ids
		}
	}
}

// readAcks reads a follow-up stream's client until it hangs up, handing
// the ids of every wire.OpAck to acks until done; anything else is
// ignored.
func readAcks(r *bufio.Reader, acks chan<- []string, done <-chan struct{}) {
	for {
		line, err := r.ReadBytes('\n')
		if err != nil {
			return
		}
		var req wire.Request
		if json.Unmarshal(line, &req) != nil || req.Op != wire.OpAck {
			continue
		}
		var p wire.AckParams
		if json.Unmarshal(req.Params, &p) != nil || len(p.IDs) == 0 {
			continue
		}
		select {
		case acks <- p.IDs:
		case <-done:
			io.Copy(io.Discard, r)
			return
		}
	}
}

// streamOps keep the connection and write responses until the client goes
// away (gone is closed when it hangs up) or the stream ends; other files
// add them in init.
var streamOps = map[string]func(k *Kernel, req wire.Request, write func(wire.Response) error, gone <-chan struct{}){
	"watch": func(k *Kernel, req wire.Request, write func(wire.Response) error, gone <-chan struct{}) {
		k.watch(req, write, gone, nil)
	},
}

// one answers a single request; later as for message; dirs, in a batch
// of spawns, collects the new state directories' parents (see runs.Spec).
func (k *Kernel) one(req wire.Request, later func(func()), dirs *fsutil.DirSyncs) (resp wire.Response) {
	resp.ID = req.ID
	defer k.recoverPanic(req.Op, &resp)
	var (
		result any
		err    error
	)
	node, err := k.routeTarget(&req)
	if err != nil {
		return wire.Response{ID: req.ID, Error: verbs.Classify(err)}
	}
	if node != "" {
		if req.Op == "spawn" {
			req.Home = k.parentHome(req) // a run of a session homed elsewhere: that node's
		}
		resp = k.cluster.Forward(node, req)
		resp.ID = req.ID
		return resp
	}
	switch req.Op {
	case "ping":
		result = map[string]any{"pid": os.Getpid(), "version": k.cfg.Version}
	case "status":
		result = k.status()
	case "spawn":
		var sp *verbs.Spawn
		if sp, err = decodeParams[*verbs.Spawn](req); err == nil {
			result, err = k.spawn(req, sp, dirs)
		}
	case "message":
		var m *verbs.Message
		if m, err = decodeParams[*verbs.Message](req); err == nil {
			at := time.Now().UTC() // the trace's time: before what it causes
			if result, err = k.message(req, m, later); err == nil {
				k.traceMessage(req, m, result, "", at)
			}
		}
	case "followups":
		result, err = k.followups(req)
	case "verb":
		result, err = k.runVerb(req)
	case "cluster":
		result, err = k.clusterView(req)
	case "stop":
		result = map[string]any{"stopping": true, "pid": os.Getpid()}
		defer k.Stop()
	default:
		if h, ok := extraOps[req.Op]; ok {
			result, err = h(k, req)
			break
		}
		err = &wire.Error{Code: "usage", Message: fmt.Sprintf("unknown kernel operation %q", req.Op), Exit: 64}
	}
	if err != nil {
		return wire.Response{ID: req.ID, Error: verbs.Classify(err)}
	}
	return wire.Response{ID: req.ID, OK: true, Result: wire.Result(result)}
}

// decodeParams reads a request's parameters into the verb layer's typed
// request for its operation, and validates it.
func decodeParams[T verbs.Request](req wire.Request) (T, error) {
	var zero T
	spec := verbs.Find(req.Op)
	if spec == nil {
		return zero, &wire.Error{Code: "usage", Message: fmt.Sprintf("unknown kernel operation %q", req.Op), Exit: 64}
	}
	r, err := spec.DecodeJSON(req.Params)
	if err != nil {
		return zero, err
	}
	if err := r.Validate(); err != nil {
		return zero, err
	}
	t, ok := r.(T)
	if !ok {
		return zero, fmt.Errorf("kernel: %s decodes to %T", req.Op, r)
	}
	return t, nil
}

// stream runs a streaming operation here, or on the node its request
// names.
func (k *Kernel) stream(h func(k *Kernel, req wire.Request, write func(wire.Response) error, gone <-chan struct{}), req wire.Request, write func(wire.Response) error, gone <-chan struct{}) {
	if err := verbs.CheckCaller(req.Session, req.Cause); err != nil {
		write(wire.Response{ID: req.ID, Error: verbs.Classify(err)})
		return
	}
	node, err := k.routeTarget(&req)
	switch {
	case err != nil:
		write(wire.Response{ID: req.ID, Error: verbs.Classify(err)})
	case node != "":
		k.cluster.Stream(node, req, write, gone)
	default:
		h(k, req, write, gone)
	}
}

// Handle answers a request that arrived over the cluster from node from:
// exactly as a local client's request (the same validation, ownership and
// session checks), except that it is never forwarded again.
func (k *Kernel) Handle(from string, req wire.Request) wire.Response {
	if err := k.checkRemote(from, req); err != nil {
		return wire.Response{ID: req.ID, Error: verbs.Classify(err)}
	}
	req.From, req.Env = from, remoteEnviron(from, req.Env)
	return k.dispatch(req)
}

// HandleStream runs a streaming request that arrived over the cluster; it
// reports false when req.Op is not a streaming operation.
func (k *Kernel) HandleStream(from string, req wire.Request, write func(wire.Response) error, gone <-chan struct{}) bool {
	h, ok := streamOps[req.Op]
	if !ok {
		return false
	}
	if err := k.checkRemote(from, req); err != nil {
		write(wire.Response{ID: req.ID, Error: verbs.Classify(err)})
		return true
	}
	req.From, req.Env = from, remoteEnviron(from, req.Env)
	k.stream(h, req, write, gone)
	return true
}

// IsStream reports whether op is a streaming operation.
func IsStream(op string) bool {
	_, ok := streamOps[op]
	return ok
}
