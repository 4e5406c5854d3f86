// Package pki writes and loads the certificates of a pi-actors cluster: a
// cluster CA (ca.crt, ca.key), node certificates signed by it (<node>.crt,
// <node>.key, the node name as the subject's common name and a DNS name),
// and the mutual-TLS configurations a kernel's cluster side serves and
// dials with.
//
// Trust is the CA: a peer is accepted when its certificate chains to the
// cluster's CA and is valid for both server and client use. Host names
// are not checked (members dial addresses that come from the membership
// provider, and a node's address may change); the node name in a
// certificate is checked against the kernel's own [cluster] node at start.
// Keys are ECDSA P-256, written 0600 through fsutil's atomic writes.
//
// It only uses the standard library's crypto; it does not rotate,
// revoke or fetch certificates.
package pki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io/fs"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/pi-actors/pi-actors/internal/fsutil"
)

// ErrExists means a file to write is already there (nothing is replaced).
var ErrExists = errors.New("exists")

// ErrInvalid marks a CA, certificate or key that cannot be used.
var ErrInvalid = errors.New("invalid certificate")

const (
	caValidity   = 10 * 365 * 24 * time.Hour
	nodeValidity = 5 * 365 * 24 * time.Hour
)

// CAFiles are the CA's certificate and key inside dir.
func CAFiles(dir string) (cert, key string) {
	return filepath.Join(dir, "ca.crt"), filepath.Join(dir, "ca.key")
}

// NodeFiles are a node's certificate and key inside dir.
func NodeFiles(dir, node string) (cert, key string) {
	return filepath.Join(dir, node+".crt"), filepath.Join(dir, node+".key")
}

// WriteCA creates a cluster CA in dir (created 0700 when missing). It
// refuses to replace an existing ca.crt or ca.key.
func WriteCA(dir, name string) (certPath string, err error) {
	certPath, keyPath := CAFiles(dir)
	if err := absent(certPath, keyPath); err != nil {
		return "", err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", fmt.Errorf("ca key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "pi-actors cluster CA " + name, Organization: []string{"pi-actors"}},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(caValidity),
		IsCA:                  true,
		BasicConstraintsValid: true,
		MaxPathLenZero:        true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return "", fmt.Errorf("ca certificate: %w", err)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("ca dir: %w", err)
	}
	return certPath, writePair(certPath, keyPath, der, key)
}

// WriteNode creates the certificate of node, signed by the CA in caDir,
// as <out>/<node>.crt and <out>/<node>.key. hosts are extra DNS names or
// IP addresses to put in the certificate (the node name always is). It
// refuses to replace existing files.
func WriteNode(caDir, node, out string, hosts []string) (certPath string, err error) {
	caCert, caKey, err := loadCA(caDir)
	if err != nil {
		return "", err
	}
	certPath, keyPath := NodeFiles(out, node)
	if err := absent(certPath, keyPath); err != nil {
		return "", err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return "", fmt.Errorf("node key: %w", err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: node, Organization: []string{"pi-actors"}},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(nodeValidity),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		DNSNames:     []string{node},
	}
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
		} else if h != "" && h != node {
			tmpl.DNSNames = append(tmpl.DNSNames, h)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		return "", fmt.Errorf("node certificate: %w", err)
	}
	if err := os.MkdirAll(out, 0o700); err != nil {
		return "", fmt.Errorf("certificate dir: %w", err)
	}
	return certPath, writePair(certPath, keyPath, der, key)
}

// Rejection is a handshake refused because the peer's certificate does
// not chain to the cluster's CA (or has no certificate at all).
type Rejection struct {
	// Peer is the node the certificate names (its common name); "" when
	// the peer sent none.
	Peer string
	// Role is what the peer was: "client" (it dialled this node) or
	// "server" (this node dialled it).
	Role string
	Err  error
}

// Config loads a node's TLS material: the CA that every peer must chain
// to, and the node's own certificate, which must be signed by that CA and
// name node. It returns the configuration the remote serves with (client
// certificates required and verified) and the one it dials with. Both
// verify the peer's chain themselves and tell reject (when not nil) of
// every peer they refuse, before the handshake fails.
func Config(caPath, certPath, keyPath, node string, reject func(Rejection)) (server, client *tls.Config, err error) {
	caPEM, err := os.ReadFile(caPath)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: cluster.tls_ca: %v", ErrInvalid, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return nil, nil, fmt.Errorf("%w: cluster.tls_ca %s holds no PEM certificate", ErrInvalid, caPath)
	}
	pair, err := tls.LoadX509KeyPair(certPath, keyPath)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: cluster.tls_cert/tls_key: %v", ErrInvalid, err)
	}
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return nil, nil, fmt.Errorf("%w: cluster.tls_cert: %v", ErrInvalid, err)
	}
	if leaf.Subject.CommonName != node {
		return nil, nil, fmt.Errorf("%w: cluster.tls_cert %s is for node %q, not this node %q (pi-actors cluster cert node=%s ca=<ca dir> out=<dir>)", ErrInvalid, certPath, leaf.Subject.CommonName, node, node)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth}}); err != nil {
		return nil, nil, fmt.Errorf("%w: cluster.tls_cert %s is not signed by cluster.tls_ca %s: %v", ErrInvalid, certPath, caPath, err)
	}
	verify := func(usage x509.ExtKeyUsage, role string) func(tls.ConnectionState) error {
		return func(cs tls.ConnectionState) error {
			err := verifyChain(cs, pool, usage)
			if err != nil && reject != nil {
				r := Rejection{Role: role, Err: err}
				if len(cs.PeerCertificates) > 0 {
					r.Peer = cs.PeerCertificates[0].Subject.CommonName
				}
				reject(r)
			}
			return err
		}
	}
	server = &tls.Config{
		MinVersion:   tls.VersionTLS13,
		Certificates: []tls.Certificate{pair},
		// A certificate is required; its chain is checked by
		// VerifyConnection (as RequireAndVerifyClientCert would), so a
		// refusal can be told to reject. No ClientCAs: a peer whose
		// certificate is from another CA still sends it (a client
		// sends none that the server's CA list leaves out), and is
		// refused by the name it gives.
		ClientAuth:       tls.RequireAnyClientCert,
		VerifyConnection: verify(x509.ExtKeyUsageClientAuth, "client"),
	}
	client = &tls.Config{
		MinVersion:   tls.VersionTLS13,
		Certificates: []tls.Certificate{pair},
		// Members are dialled by the address the provider gives; the
		// chain to the cluster CA is what is checked, not a host name.
		InsecureSkipVerify: true,
		VerifyConnection:   verify(x509.ExtKeyUsageServerAuth, "server"),
	}
	return server, client, nil
}

// verifyChain checks that the peer's certificate chains to pool for usage.
func verifyChain(cs tls.ConnectionState, pool *x509.CertPool, usage x509.ExtKeyUsage) error {
	if len(cs.PeerCertificates) == 0 {
		return errors.New("peer sent no certificate")
	}
	inter := x509.NewCertPool()
	for _, c := range cs.PeerCertificates[1:] {
		inter.AddCert(c)
	}
	_, err := cs.PeerCertificates[0].Verify(x509.VerifyOptions{Roots: pool, Intermediates: inter, KeyUsages: []x509.ExtKeyUsage{usage}})
	return err
}

func loadCA(dir string) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	certPath, keyPath := CAFiles(dir)
	pair, err := tls.LoadX509KeyPair(certPath, keyPath)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: CA in %s: %w (pi-actors cluster ca dir=%s writes one)", ErrInvalid, dir, err, dir)
	}
	cert, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %s: %v", ErrInvalid, certPath, err)
	}
	key, ok := pair.PrivateKey.(*ecdsa.PrivateKey)
	if !ok || !cert.IsCA {
		return nil, nil, fmt.Errorf("%w: %s is not a pi-actors cluster CA", ErrInvalid, certPath)
	}
	return cert, key, nil
}

func writePair(certPath, keyPath string, der []byte, key *ecdsa.PrivateKey) error {
	kb, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return fmt.Errorf("encode key: %w", err)
	}
	// The key first: a certificate without its key is never left behind.
	if err := fsutil.WriteFile(keyPath, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kb}), 0o600); err != nil {
		return fmt.Errorf("write %s: %w", keyPath, err)
	}
	if err := fsutil.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644); err != nil {
		os.Remove(keyPath)
		return fmt.Errorf("write %s: %w", certPath, err)
	}
	return nil
}

func absent(paths ...string) error {
	for _, p := range paths {
		if _, err := os.Stat(p); err == nil {
			return fmt.Errorf("%w: %s is already there; remove it or write to another directory", ErrExists, p)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%s: %w", p, err)
		}
	}
	return nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return big.NewInt(time.Now().UnixNano())
	}
	return n
}
