package actors

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"
	"golang.org/x/sys/unix"

	"github.com/pi-actors/pi-actors/verbs"
	"github.com/pi-actors/pi-actors/verbs/wire"
)

// batchLimit bounds how many items of a batch are handled at once: spawns
// are CPU-bound; messages mostly wait for a supervisor to apply them.
func batchLimit(op string) int {
	if op == "message" {
		return 256
	}
	return 32
}

func (k *Kernel) listen() error {
	path := wire.SocketPath(k.cfg.AgentDir)
	// We hold the kernel lock, so a socket file left here is stale.
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
	return nil
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

// peerAllowed checks the connecting process runs as our uid.
func peerAllowed(c net.Conn) bool {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return false
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return false
	}
	allowed := false
	raw.Control(func(fd uintptr) {
		cred, err := unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED)
		allowed = err == nil && int(cred.Uid) == os.Getuid()
	})
	return allowed
}

func (k *Kernel) handle(c net.Conn) {
	defer c.Close()
	if !peerAllowed(c) {
		k.log.Warn("refused connection from another user")
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
		req.From = "" // only the cluster side says where a request came from
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
	resp := wire.Response{ID: req.ID}
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
		var g errgroup.Group
		g.SetLimit(batchLimit(req.Op))
		for _, group := range batchGroups(req) {
			g.Go(func() error {
				for _, i := range group {
					one := req
					one.Items, one.Params = nil, req.Items[i]
					resp.Results[i] = k.one(one, later)
				}
				return nil
			})
		}
		g.Wait()
		g.SetLimit(batchLimit(req.Op))
		for _, f := range after {
			g.Go(func() error {
				defer k.recoverPanic(req.Op, nil)
				f()
				return nil
			})
		}
		g.Wait()
		return resp
	}
	return k.one(req, nil)
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

// streamOps keep the connection and write responses until the client goes
// away (gone is closed when it hangs up) or the stream ends; other files
// add them in init.
var streamOps = map[string]func(k *Kernel, req wire.Request, write func(wire.Response) error, gone <-chan struct{}){
	"watch": (*Kernel).watch,
}

// one answers a single request; later as for message.
func (k *Kernel) one(req wire.Request, later func(func())) (resp wire.Response) {
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
			result, err = k.spawn(req, sp)
		}
	case "message":
		var m *verbs.Message
		if m, err = decodeParams[*verbs.Message](req); err == nil {
			if result, err = k.message(req, m, later); err == nil {
				k.traceMessage(req, m, result, "")
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
