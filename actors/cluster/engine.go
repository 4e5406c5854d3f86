package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/asynkron/protoactor-go/actor"
	pcluster "github.com/asynkron/protoactor-go/cluster"
	"github.com/asynkron/protoactor-go/cluster/clusterproviders/automanaged"
	"github.com/asynkron/protoactor-go/cluster/clusterproviders/consul"
	"github.com/asynkron/protoactor-go/cluster/clusterproviders/etcd"
	"github.com/asynkron/protoactor-go/cluster/clusterproviders/k8s"
	"github.com/asynkron/protoactor-go/cluster/identitylookup/disthash"
	"github.com/asynkron/protoactor-go/remote"
	"github.com/hashicorp/consul/api"
	clientv3 "go.etcd.io/etcd/client/v3"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
)

// engine is one start of the protoactor-go cluster: its own actor system
// (never the kernel's: a cluster that stops or restarts takes nothing of
// the kernel with it), remote, provider and gateway.
type engine struct {
	system   *actor.ActorSystem
	cluster  *pcluster.Cluster
	provider pcluster.ClusterProvider
	gateway  *actor.PID
	id       string
	address  string
	// done is closed when the engine stops: what waits on it (requests,
	// streams) ends at once — their answers would go to an address
	// nobody serves any more.
	done     chan struct{}
	stopOnce sync.Once
}

// maxRemoteMessage is the largest message the remote takes (gRPC's
// default is 4 MiB): a batch of messages between two members, a routed
// listing of a member's runs (up to 100,000 rows) or a batch of spawns
// with long prompts. What is larger is sent in parts (follow-ups,
// spawns) or bounded where it is made (listings).
const maxRemoteMessage = 64 << 20

// errEngineStopped: this node's member stopped (or restarted under a new
// member id) while a request waited for its answer.
var errEngineStopped = errors.New("this node's cluster member stopped or restarted under a new member id meanwhile (what was asked may have been done there)")

// request asks the gateway at addr and waits for its answer: at most
// timeout, and no longer than the engine runs.
func (e *engine) request(addr string, msg *envelope, timeout time.Duration) (*envelope, error) {
	return e.requestUntil(addr, msg, timeout, nil)
}

// requestUntil is request that also gives up (errNodeDown) when abort
// closes.
func (e *engine) requestUntil(addr string, msg *envelope, timeout time.Duration, abort <-chan struct{}) (*envelope, error) {
	fut := e.system.Root.RequestFuture(pidOf(addr), pack(msg), timeout)
	type answer struct {
		res any
		err error
	}
	ch := make(chan answer, 1)
	go func() {
		res, err := fut.Result()
		ch <- answer{res, err}
	}()
	select {
	case a := <-ch:
		if a.err != nil {
			return nil, a.err
		}
		return unpack(a.res)
	case <-e.done:
		return nil, errEngineStopped
	case <-abort:
		return nil, errNodeDown
	}
}

// errNodeDown: the node went down (unreachable, left) while a request
// waited for its answer.
var errNodeDown = errors.New("it went down while the request waited for its answer (what was asked may have been done there)")

// errNodeRestarted: the node's kernel started again (a new member) while
// a request to the one before waited for its answer.
var errNodeRestarted = errors.New("its kernel restarted while the request waited for its answer (what was asked may have been done there)")

// startEngine starts a member. The engine panics on errors it cannot
// return (a port it cannot listen on, a provider it cannot reach); those
// become errors here, and the ports are checked first.
func startEngine(s *Side, tlsPair *tlsConfigs) (eng *engine, err error) {
	cfg := s.cfg
	if err := portFree(cfg.Bind, "bind"); err != nil {
		return nil, err
	}
	if cfg.Provider == "automanaged" {
		// The provider's health endpoint listens on the manage port of
		// every address, whatever host cluster.manage names.
		_, port, _ := net.SplitHostPort(cfg.Manage)
		if err := portFree(":"+port, "manage"); err != nil {
			return nil, fmt.Errorf("%w (cluster.manage is %s; the automanaged provider listens on that port of every address)", err, cfg.Manage)
		}
	}
	provider, err := newProvider(s)
	if err != nil {
		return nil, err
	}
	host, portS, _ := net.SplitHostPort(cfg.Bind)
	port, _ := strconv.Atoi(portS)
	// The remote's queue to each peer starts with room for a million
	// messages (16 MB a peer before anything is sent; it grows when
	// full): a kernel sends far fewer, so it starts smaller.
	opts := []remote.ConfigOption{remote.WithEndpointWriterQueueSize(10000),
		remote.WithCallOptions(grpc.MaxCallSendMsgSize(maxRemoteMessage), grpc.MaxCallRecvMsgSize(maxRemoteMessage))}
	if cfg.Advertise != "" {
		opts = append(opts, remote.WithAdvertisedHost(cfg.Advertise))
	}
	server := []grpc.ServerOption{grpc.MaxRecvMsgSize(maxRemoteMessage)}
	if tlsPair != nil {
		server = append(server, grpc.Creds(credentials.NewTLS(tlsPair.server)))
		opts = append(opts, remote.WithDialOptions(grpc.WithTransportCredentials(credentials.NewTLS(tlsPair.client))))
	}
	opts = append(opts, remote.WithServerOptions(server...))
	logger := slog.New(newQuietHandler(s.log.Handler())).With("engine", "protoactor")
	system := actor.NewActorSystem(actor.WithLoggerFactory(func(*actor.ActorSystem) *slog.Logger { return logger }))
	e := &engine{system: system, provider: provider, id: memberID(s.node), done: make(chan struct{})}
	system.ID = e.id
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("start cluster member (%s provider): %v", cfg.Provider, p)
		}
		if err != nil {
			e.stop(false) // the provider too: an etcd or consul client holds connections
			eng = nil
		}
	}()
	ccfg := pcluster.Configure(cfg.Name, provider, disthash.New(), remote.Configure(host, port, opts...),
		pcluster.WithRequestTimeout(5*time.Second))
	e.cluster = pcluster.New(system, ccfg)
	gw := &gateway{s: s, eng: e, sem: make(chan struct{}, 64)}
	if e.gateway, err = system.Root.SpawnNamed(actor.PropsFromProducer(func() actor.Actor { return gw }), gatewayName); err != nil {
		return nil, fmt.Errorf("cluster gateway: %w", err)
	}
	e.cluster.StartMember()
	e.address = system.Address()
	return e, nil
}

// stop leaves the cluster: the provider deregisters (its health endpoint
// closes, its lease is revoked), gossip stops, the remote stops — its
// server and its connections to every peer. Once is enough; later calls
// return at once.
func (e *engine) stop(graceful bool) {
	e.stopOnce.Do(func() {
		close(e.done)
		e.shutdown(graceful)
	})
}

func (e *engine) shutdown(graceful bool) {
	defer func() { recover() }() // the engine's own shutdown may panic on a half-started member
	defer e.system.Shutdown()
	if e.provider != nil {
		// A provider whose service is gone may wait for it for ever (the
		// etcd provider deregisters without a deadline): the member is
		// gone anyway once its lease or TTL runs out.
		done := make(chan struct{})
		go func() {
			defer close(done)
			defer func() { recover() }()
			_ = e.provider.Shutdown(graceful)
		}()
		select {
		case <-done:
		case <-time.After(providerTimeout):
		}
	}
	if e.cluster == nil {
		return
	}
	if e.cluster.Gossip != nil {
		e.cluster.Gossip.Shutdown()
	}
	if e.cluster.IdentityLookup != nil {
		e.cluster.IdentityLookup.Shutdown()
	}
	if r := e.cluster.Remote; r != nil {
		// The server first, at once: its listener and every peer's stream.
		r.Shutdown(false)
		// That leaves the endpoint manager with a client connection to
		// every peer this member talked to (each engine start would add
		// one per peer, and the peers keep serving it): the graceful
		// shutdown stops it. With the server stopped it waits only for a
		// writer still connecting (retries of seconds each), so off the
		// caller's goroutine.
		go func() {
			defer func() { recover() }()
			r.Shutdown(true)
		}()
	}
}

// newProvider builds the configured membership provider.
func newProvider(s *Side) (pcluster.ClusterProvider, error) {
	cfg := s.cfg
	switch cfg.Provider {
	case "automanaged":
		_, portS, _ := net.SplitHostPort(cfg.Manage)
		port, _ := strconv.Atoi(portS)
		return automanaged.NewWithConfig(time.Second, port, cfg.Peers...), nil
	case "etcd":
		// The provider's client dials lazily and its start retries for
		// ever: ask etcd first, so an unreachable one is an error here.
		if err := etcdReachable(cfg.Endpoints); err != nil {
			return nil, err
		}
		p, err := etcd.NewWithConfig("/pi-actors", clientv3.Config{Endpoints: cfg.Endpoints, DialTimeout: 3 * time.Second})
		if err != nil {
			return nil, fmt.Errorf("cluster.endpoints %v: %w", cfg.Endpoints, err)
		}
		return p, nil
	case "consul":
		c := api.DefaultConfig()
		if cfg.Consul != "" {
			c.Address = cfg.Consul
		}
		if err := consulReachable(c); err != nil {
			return nil, err
		}
		p, err := consul.NewWithConfig(c, consul.WithTTL(3*time.Second), consul.WithRefreshTTL(time.Second))
		if err != nil {
			return nil, fmt.Errorf("cluster.consul %s: %w", c.Address, err)
		}
		return p, nil
	case "k8s":
		// In-cluster config; the namespace is the pod's own.
		p, err := k8s.New()
		if err != nil {
			return nil, fmt.Errorf("k8s provider (run the kernel in a pod with a service account that may list, watch and patch pods): %w", err)
		}
		return p, nil
	}
	return nil, fmt.Errorf("cluster.provider %q is not one of automanaged, etcd, consul, k8s", cfg.Provider)
}

// providerTimeout bounds the check that a provider's service answers.
const providerTimeout = 3 * time.Second

func etcdReachable(endpoints []string) error {
	cli, err := clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: providerTimeout})
	if err != nil {
		return fmt.Errorf("cluster.endpoints %v: %w", endpoints, err)
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(context.Background(), providerTimeout)
	defer cancel()
	if _, err := cli.Get(ctx, "/pi-actors", clientv3.WithCountOnly()); err != nil {
		return fmt.Errorf("etcd at cluster.endpoints %v does not answer: %w", endpoints, err)
	}
	return nil
}

func consulReachable(c *api.Config) error {
	cli, err := api.NewClient(c)
	if err != nil {
		return fmt.Errorf("cluster.consul %s: %w", c.Address, err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := cli.Status().Leader()
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			return fmt.Errorf("consul at %s does not answer: %w", c.Address, err)
		}
		return nil
	case <-time.After(providerTimeout):
		return fmt.Errorf("consul at %s does not answer within %s", c.Address, providerTimeout)
	}
}
