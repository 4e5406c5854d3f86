package pki

import (
	"crypto/tls"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestCAAndNodeCertificates(t *testing.T) {
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca")
	if _, err := WriteCA(ca, "test"); err != nil {
		t.Fatal(err)
	}
	if _, err := WriteCA(ca, "test"); !errors.Is(err, ErrExists) {
		t.Fatalf("second WriteCA: %v, want ErrExists", err)
	}
	out := filepath.Join(dir, "certs")
	for _, n := range []string{"a", "b"} {
		if _, err := WriteNode(ca, n, out, []string{"127.0.0.1", "a.example"}); err != nil {
			t.Fatal(err)
		}
		_, key := NodeFiles(out, n)
		if st, err := os.Stat(key); err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("%s: %v %v, want mode 0600", key, st.Mode(), err)
		}
	}
	_, caKey := CAFiles(ca)
	if st, _ := os.Stat(caKey); st.Mode().Perm() != 0o600 {
		t.Fatalf("ca.key mode %v", st.Mode())
	}
	caCrt, _ := CAFiles(ca)
	aCrt, aKey := NodeFiles(out, "a")
	if _, _, err := Config(caCrt, aCrt, aKey, "b", nil); err == nil || !strings.Contains(err.Error(), `for node "a"`) {
		t.Fatalf("a's certificate as node b: %v", err)
	}
	// A certificate from another CA is refused at load.
	other := filepath.Join(dir, "other")
	WriteCA(other, "other")
	WriteNode(other, "a", filepath.Join(dir, "foreign"), nil)
	fCrt, fKey := NodeFiles(filepath.Join(dir, "foreign"), "a")
	if _, _, err := Config(caCrt, fCrt, fKey, "a", nil); !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), "not signed") {
		t.Fatalf("foreign certificate: %v", err)
	}

	// Mutual TLS: a and b talk; the foreign a is refused both ways, and
	// each refusal is told to reject with the name the certificate gives.
	var mu sync.Mutex
	var rejected []Rejection
	reject := func(r Rejection) {
		mu.Lock()
		defer mu.Unlock()
		rejected = append(rejected, r)
	}
	srvA, _, err := Config(caCrt, aCrt, aKey, "a", reject)
	if err != nil {
		t.Fatal(err)
	}
	bCrt, bKey := NodeFiles(out, "b")
	_, cliB, err := Config(caCrt, bCrt, bKey, "b", reject)
	if err != nil {
		t.Fatal(err)
	}
	if err := handshake(t, srvA, cliB); err != nil {
		t.Fatalf("a <- b: %v", err)
	}
	if len(rejected) != 0 {
		t.Fatalf("a good handshake was reported: %+v", rejected)
	}
	foreignSrv, foreignCli := foreignConfigs(t, filepath.Join(other, "ca.crt"), fCrt, fKey)
	if err := handshake(t, srvA, foreignCli); err == nil {
		t.Fatal("a accepted a client certificate from another CA")
	}
	// (The foreign client refused a's certificate first: a never saw one.)
	// A client that takes any server certificate gets as far as sending
	// its own.
	trusting := foreignCli.Clone()
	trusting.VerifyConnection = nil
	if err := handshake(t, srvA, trusting); err == nil {
		t.Fatal("a accepted a client certificate from another CA")
	}
	if err := handshake(t, foreignSrv, cliB); err == nil {
		t.Fatal("b accepted a server certificate from another CA")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(rejected) != 2 || rejected[0].Role != "client" || rejected[1].Role != "server" {
		t.Fatalf("rejections %+v, want the foreign a as a client, then as a server", rejected)
	}
	for _, r := range rejected {
		if r.Peer != "a" || r.Err == nil || !strings.Contains(r.Err.Error(), "unknown authority") {
			t.Fatalf("rejection %+v", r)
		}
	}
}

func foreignConfigs(t *testing.T, ca, crt, key string) (*tls.Config, *tls.Config) {
	s, c, err := Config(ca, crt, key, "a", nil)
	if err != nil {
		t.Fatal(err)
	}
	return s, c
}

// handshake runs one TLS handshake over loopback and returns the first
// error either side saw.
func handshake(t *testing.T, server, client *tls.Config) error {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	errc := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			errc <- err
			return
		}
		defer c.Close()
		errc <- tls.Server(c, server).Handshake()
	}()
	c, err := tls.Dial("tcp", ln.Addr().String(), client)
	if err == nil {
		// TLS 1.3: the server's verdict on the client certificate arrives
		// with the first read.
		c.Write([]byte("x"))
		one := make([]byte, 1)
		c.Read(one)
		c.Close()
	}
	if serr := <-errc; serr != nil {
		return serr
	}
	return err
}
