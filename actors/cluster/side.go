package cluster

import (
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/asynkron/protoactor-go/actor"

	"github.com/pi-actors/pi-actors/actors"
	"github.com/pi-actors/pi-actors/internal/config"
	"github.com/pi-actors/pi-actors/internal/pki"
)

// Side is a kernel's cluster side (actors.Cluster).
type Side struct {
	k    *actors.Kernel
	cfg  config.Cluster
	node string
	log  *slog.Logger
	dir  *directory

	mu    sync.Mutex
	state string // starting, up, down, stopped
	err   error
	why   string // why the member is starting again (renew), "" otherwise
	eng   *engine
	since time.Time
	// rejected are the peers refused at the TLS handshake for a
	// certificate not from the cluster's CA, by peer and role (at most
	// maxRejected, the most recent kept).
	rejected map[string]*Rejected

	pending chan string // sessions with follow-ups for another node
	fatal   chan error  // the engine must stop for good (a duplicate node)
	stop    chan struct{}
	done    chan struct{}
	pushed  chan struct{} // the pusher ended
}

// Side states.
const (
	stateStarting = "starting"
	stateUp       = "up"
	stateDown     = "down"
	stateStopped  = "stopped"
)

// New returns a cluster side for actors.MainWith.
func New() *Side {
	return &Side{pending: make(chan string, 256), fatal: make(chan error, 1),
		stop: make(chan struct{}), done: make(chan struct{}), pushed: make(chan struct{})}
}

var _ actors.Cluster = (*Side)(nil)

// Start implements actors.Cluster: the cluster is formed in the
// background.
func (s *Side) Start(k *actors.Kernel) {
	s.k = k
	s.cfg = k.Settings().Cluster
	// Check fills in defaults and makes paths absolute: before anything
	// that reads the config (status, view, the loop) runs.
	cfgErr := s.cfg.Check(k.AgentDir())
	s.node = s.cfg.NodeName()
	s.log = k.Log().With("component", "cluster")
	s.dir = newDirectory(s)
	s.setState(stateStarting, nil)
	go s.loop(cfgErr)
	go s.pusher()
}

// Stop implements actors.Cluster: members are told goodbye, then the
// engine stops.
func (s *Side) Stop() {
	select {
	case <-s.stop:
		return
	default:
	}
	close(s.stop)
	<-s.done
	<-s.pushed
}

// duplicate takes this member out for good: another live kernel has its
// node name.
func (s *Side) duplicate(err error) {
	select {
	case s.fatal <- err:
	default:
	}
}

// Node implements actors.Cluster.
func (s *Side) Node() string { return s.node }

func (s *Side) setState(state string, err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != state || (err != nil) != (s.err != nil) {
		s.since = time.Now().UTC()
	}
	s.state, s.err = state, err
	if state != stateStarting {
		s.why = ""
	}
	if err != nil {
		s.log.Warn("cluster side down", "err", err)
	}
}

// maxRejected bounds the refused peers kernel status lists.
const maxRejected = 8

// Rejected is a peer refused at the TLS handshake: its certificate does
// not chain to the cluster's CA (or it sent none).
type Rejected struct {
	// Peer is the node its certificate names ("" when it sent none).
	Peer string `json:"peer"`
	// Role is "client" (it dialled this kernel) or "server" (this kernel
	// dialled it).
	Role   string    `json:"role"`
	Reason string    `json:"reason"`
	Count  int       `json:"count"`
	First  time.Time `json:"first"`
	Last   time.Time `json:"last"`
}

// reject records a refused handshake (pki calls it), logging a peer the
// first time it is refused for a reason.
func (s *Side) reject(r pki.Rejection) {
	now := time.Now().UTC()
	// What the peer's certificate says is the peer's to choose: it is
	// shown bounded and without control characters.
	peer, reason := printable(r.Peer, 64), printable(r.Err.Error(), 300)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.rejected == nil {
		s.rejected = map[string]*Rejected{}
	}
	key := r.Role + "\x00" + peer
	e := s.rejected[key]
	if e == nil || e.Reason != reason {
		s.log.Warn("cluster: refused a peer's certificate", "peer", peer, "role", r.Role, "err", reason)
	}
	if e == nil {
		if len(s.rejected) == maxRejected {
			var oldest string
			for k, v := range s.rejected {
				if oldest == "" || v.Last.Before(s.rejected[oldest].Last) {
					oldest = k
				}
			}
			delete(s.rejected, oldest)
		}
		e = &Rejected{Peer: peer, Role: r.Role, First: now}
		s.rejected[key] = e
	}
	e.Reason, e.Last = reason, now
	e.Count++
}

// printable is s without control characters (each becomes '?'), cut to
// max runes.
func printable(s string, max int) string {
	out := []rune(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == utf8.RuneError {
			return '?'
		}
		return r
	}, s))
	if len(out) > max {
		return string(out[:max]) + "…"
	}
	return string(out)
}

// rejectedList is the refused peers, the most recent first (s.mu held).
func (s *Side) rejectedList() []Rejected {
	out := make([]Rejected, 0, len(s.rejected))
	for _, e := range s.rejected {
		out = append(out, *e)
	}
	slices.SortFunc(out, func(a, b Rejected) int { return b.Last.Compare(a.Last) })
	return out
}

func (s *Side) current() *engine {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != stateUp {
		return nil
	}
	return s.eng
}

// errDown answers a request while the cluster side is not up.
func (s *Side) errDown() error {
	s.mu.Lock()
	state, err, why := s.state, s.err, s.why
	s.mu.Unlock()
	if err != nil {
		exit := 69
		if errors.Is(err, config.ErrClusterConfig) || errors.Is(err, pki.ErrInvalid) {
			exit = 78
		}
		return &clusterError{code: "cluster_down", exit: exit, msg: "the cluster side of this kernel is down: " + err.Error(), hint: "fix [cluster] in pi-actors.toml (pi-actors kernel status shows why), then pi-actors kernel stop; the next call starts it again"}
	}
	msg := "the cluster side of this kernel is " + state
	if why != "" {
		msg += " (" + why + ")"
	}
	return &clusterError{code: "cluster_down", exit: 69, msg: msg + "; try again in a moment"}
}

// loop owns the engine: it starts it (retrying what may heal — a port in
// use, an unreachable provider), restarts it under a new member id when
// the engine would keep this node out, refreshes the directory and
// delivers follow-ups.
func (s *Side) loop(cfgErr error) {
	defer close(s.done)
	if err := cfgErr; err != nil {
		s.setState(stateDown, err)
		<-s.stop
		s.setState(stateStopped, nil)
		return
	}
	var tlsPair *tlsConfigs
	if s.cfg.TLS() {
		srv, cli, err := pki.Config(s.cfg.TLSCA, s.cfg.TLSCert, s.cfg.TLSKey, s.node, s.reject)
		if err != nil {
			s.setState(stateDown, err)
			<-s.stop
			s.setState(stateStopped, nil)
			return
		}
		tlsPair = &tlsConfigs{server: srv, client: cli}
	}
	s.dir.load()
	tick := time.NewTicker(tickEvery)
	defer tick.Stop()
	var (
		retryAt  time.Time
		lastTick = time.Now()
	)
	for {
		if s.current() == nil && !time.Now().Before(retryAt) && s.stateIs(stateStarting, stateDown) {
			if err := s.begin(tlsPair); err != nil {
				retryAt = time.Now().Add(retryEvery)
				if errors.Is(err, errDuplicate) || errors.Is(err, config.ErrClusterConfig) {
					retryAt = time.Now().Add(24 * time.Hour)
				}
			}
		}
		select {
		case <-s.stop:
			s.shutdown()
			return
		case err := <-s.fatal:
			if eng := s.takeEngine(); eng != nil {
				eng.stop(false)
			}
			s.setState(stateDown, err)
			retryAt = time.Now().Add(24 * time.Hour)
		case now := <-tick.C:
			// A process that was stopped (SIGSTOP) or starved past the
			// members' failure detection has been dropped — and blocked —
			// by them: only a new member id gets back in.
			if gap := now.Sub(lastTick); gap > stallAfter && s.current() != nil {
				s.renew(fmt.Sprintf("this kernel stalled for %s", gap.Round(time.Millisecond)), tlsPair)
			}
			lastTick = now
			if eng := s.current(); eng != nil {
				if why := s.dir.refresh(eng); why != "" {
					s.renew(why, tlsPair)
				}
			}
		}
	}
}

func (s *Side) stateIs(states ...string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, st := range states {
		if s.state == st {
			return true
		}
	}
	return false
}

// begin starts an engine and makes it this side's (state up), or
// records why it could not (state down).
func (s *Side) begin(tlsPair *tlsConfigs) error {
	eng, err := startEngine(s, tlsPair)
	if err != nil {
		s.setState(stateDown, err)
		return err
	}
	s.mu.Lock()
	s.eng = eng
	s.mu.Unlock()
	s.setState(stateUp, nil)
	s.log.Info("cluster member started", "node", s.node, "member", eng.id, "address", eng.address)
	return nil
}

// takeEngine takes the engine out of service: requests no longer see it.
func (s *Side) takeEngine() *engine {
	s.mu.Lock()
	defer s.mu.Unlock()
	eng := s.eng
	s.eng = nil
	return eng
}

// renew replaces the engine with a fresh one under a new member id (when
// that fails the loop retries as after a failed start).
func (s *Side) renew(why string, tlsPair *tlsConfigs) {
	s.log.Warn("restarting the cluster member under a new member id", "why", why)
	// Starting before the engine goes: a request meanwhile is told so
	// (not "up") and status says why; stopping may take seconds.
	s.setState(stateStarting, nil)
	s.mu.Lock()
	s.why = "restarting the member under a new id: " + why
	s.mu.Unlock()
	if eng := s.takeEngine(); eng != nil {
		eng.stop(false)
	}
	s.begin(tlsPair)
}

func (s *Side) shutdown() {
	if eng := s.takeEngine(); eng != nil {
		s.dir.goodbye(eng)
		eng.stop(true)
	}
	s.dir.save()
	s.setState(stateStopped, nil)
}

// Timings of the loop.
const (
	tickEvery  = 250 * time.Millisecond
	retryEvery = 5 * time.Second
	pushEvery  = 5 * time.Second
	// stallAfter is a gap between ticks the members' failure detection
	// has surely noticed (automanaged: 1 s refresh + 2 s timeout).
	stallAfter = 2 * time.Second
)

type tlsConfigs struct{ server, client *tls.Config }

// memberID is this start's member id: the node name and a nonce, so a
// restarted kernel (or a fresh engine) is never the id the engine
// blocked.
func memberID(node string) string {
	var b [3]byte
	rand.Read(b[:])
	// The start time first: a later start of a node sorts after an
	// earlier one (the directory prefers it while both are listed).
	return fmt.Sprintf("%s~%012x%s", node, time.Now().UnixMilli(), hex.EncodeToString(b[:]))
}

// nodeOf is the node name inside a member id: <node>~<nonce>, which a
// provider may prefix (etcd: <cluster>@<node>~<nonce>).
func nodeOf(memberID string) string {
	n, _, _ := strings.Cut(systemID(memberID), "~")
	return n
}

// systemID is the actor system id inside a member id.
func systemID(memberID string) string {
	if i := strings.LastIndexByte(memberID, '@'); i >= 0 {
		return memberID[i+1:]
	}
	return memberID
}

// portFree checks host:port can be listened on now (the remote's own
// listen panics when it cannot).
func portFree(addr, key string) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("cluster.%s %s: %w (another process has the port; choose another or stop it)", key, addr, err)
	}
	return ln.Close()
}

// clusterError is an error with the verb layer's code and exit.
type clusterError struct {
	code, msg, hint string
	exit            int
	details         any
}

func (e *clusterError) Error() string { return e.msg }

var errDuplicate = errors.New("duplicate node name")

// pidOf is a member's gateway.
func pidOf(address string) *actor.PID { return actor.NewPID(address, gatewayName) }
