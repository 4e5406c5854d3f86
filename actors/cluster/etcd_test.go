package cluster_test

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/pi-actors/pi-actors/internal/clustertest"
	"github.com/pi-actors/pi-actors/internal/testproc"
)

// etcdBinary finds etcd, installing Debian's etcd-server when it is
// missing and the test runs as root; "" means it cannot be had here.
func etcdBinary(t *testing.T) string {
	if p, err := exec.LookPath("etcd"); err == nil {
		return p
	}
	if os.Getuid() != 0 {
		return ""
	}
	cmd := exec.Command("apt-get", "install", "-y", "-q", "etcd-server")
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Logf("apt-get install etcd-server: %v\n%s", err, out)
		return ""
	}
	p, _ := exec.LookPath("etcd")
	return p
}

// startEtcd runs a one-member etcd on loopback for the test; kill ends
// it before the test does.
func startEtcd(t *testing.T) (client string, kill func()) {
	bin := etcdBinary(t)
	if bin == "" {
		fmt.Println("NOTE: etcd is not installed and cannot be installed here (not root, or no package source): the etcd provider tests are skipped")
		t.Skip("etcd unavailable")
	}
	dir := t.TempDir()
	client = fmt.Sprintf("http://127.0.0.1:%d", testproc.MustFreePort(t))
	peer := fmt.Sprintf("http://127.0.0.1:%d", testproc.MustFreePort(t))
	cmd := exec.Command(bin, "--name", "t", "--data-dir", filepath.Join(dir, "data"),
		"--listen-client-urls", client, "--advertise-client-urls", client,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
		"--initial-cluster", "t="+peer)
	cmd.Env = append(os.Environ(), "ETCD_UNSUPPORTED_ARCH="+os.Getenv("GOARCH"))
	log, _ := os.Create(filepath.Join(dir, "etcd.log"))
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var once sync.Once
	kill = func() {
		once.Do(func() {
			syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			cmd.Wait()
		})
	}
	t.Cleanup(kill)
	clustertest.Eventually(t, 20*time.Second, "etcd answers", func() bool {
		resp, err := http.Get(client + "/health")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == 200
	})
	return client, kill
}

// TestClusterEtcd: the same membership through a real etcd: members see
// each other, a run is spawned on another node, a killed member is
// unreachable within 5 s and back within 10 s of its restart. With etcd
// gone, a kernel still stops (the provider's deregistration waits for
// etcd for ever).
func TestClusterEtcd(t *testing.T) {
	t.Parallel()
	endpoint, killEtcd := startEtcd(t)
	c := clustertest.WithCA(t, bin)
	for _, n := range []string{"a", "b", "c"} {
		c.Add(n, func(m *clustertest.Member) {
			m.Config = strings.Replace(m.Config, "provider = \"automanaged\"", fmt.Sprintf("provider = \"etcd\"\nendpoints = [%q]", endpoint), 1)
		})
	}
	c.WriteConfigs()
	c.StartAll()
	for _, n := range c.Order {
		c.WaitUp(n, 20*time.Second, "a", "b", "c")
	}
	out := c.Run("a", "spawn", "as=run:e1", "node=c", "template=sleep 60")
	if !strings.Contains(out, "node=c") {
		t.Fatalf("spawn node=c: %s", out)
	}
	syscall.Kill(c.KernelPid("b"), syscall.SIGKILL)
	c.WaitStatus("a", 5*time.Second, "unreachable", "b")
	c.Start("b")
	c.WaitUp("a", 10*time.Second, "b")
	c.WaitUp("b", 10*time.Second, "a", "c")

	killEtcd()
	pid := c.KernelPid("a")
	start := time.Now()
	if o, code := c.CLI("a", "kernel", "stop"); code != 0 {
		t.Fatalf("kernel stop with etcd gone: exit %d\n%s", code, o)
	}
	clustertest.Eventually(t, 20*time.Second, "a's kernel exits with etcd gone", func() bool {
		return syscall.Kill(pid, 0) != nil
	})
	t.Logf("a's kernel stopped %s after the request, etcd gone", time.Since(start).Round(time.Millisecond))
}

// TestClusterConsul: membership through a real consul agent (`consul agent
// -dev`) when one is installed; Debian does not package consul, so where
// it is missing the test says so and is skipped.
func TestClusterConsul(t *testing.T) {
	bin, err := exec.LookPath("consul")
	if err != nil {
		fmt.Println("NOTE: consul is not installed (Debian does not package it): the consul provider test is skipped")
		t.Skip("consul unavailable")
	}
	dir := t.TempDir()
	port := testproc.MustFreePort(t)
	cmd := exec.Command(bin, "agent", "-dev", "-bind", "127.0.0.1", "-client", "127.0.0.1",
		"-http-port", fmt.Sprint(port), "-dns-port", "-1", "-grpc-port", "-1", "-data-dir", filepath.Join(dir, "data"))
	log, _ := os.Create(filepath.Join(dir, "consul.log"))
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	clustertest.Eventually(t, 30*time.Second, "consul has a leader", func() bool {
		resp, err := http.Get("http://" + addr + "/v1/status/leader")
		if err != nil {
			return false
		}
		defer resp.Body.Close()
		b := make([]byte, 64)
		n, _ := resp.Body.Read(b)
		return resp.StatusCode == 200 && n > 2
	})
	c := clustertest.WithCA(t, bin)
	for _, n := range []string{"a", "b"} {
		c.Add(n, func(m *clustertest.Member) {
			m.Config = strings.Replace(m.Config, "provider = \"automanaged\"", fmt.Sprintf("provider = \"consul\"\nconsul = %q", addr), 1)
		})
	}
	c.WriteConfigs()
	c.StartAll()
	c.WaitUp("a", 30*time.Second, "a", "b")
	c.WaitUp("b", 30*time.Second, "a", "b")
	if out := c.Run("a", "spawn", "as=run:k1", "node=b", "template=sleep 30"); !strings.Contains(out, "node=b") {
		t.Fatalf("spawn node=b: %s", out)
	}
}
