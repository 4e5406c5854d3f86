package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/pi-actors/pi-actors/internal/config"
	"github.com/pi-actors/pi-actors/internal/pki"
)

// certUsage points at the full help, which the lean CLI prints.
const certUsage = "pi-actors cluster ca dir=<D> [name=<cluster>] | cluster cert node=<N> ca=<D> out=<E> [hosts=<h1,h2>] [--json] (pi-actors cluster --help)"

// CertMain is `pi-actors-cluster cluster ca|cert …`.
func CertMain(args []string, stdout, stderr io.Writer) int {
	params := map[string]string{}
	asJSON := false
	var action string
	for _, a := range args {
		switch {
		case a == "--json":
			asJSON = true
		case a == "--help" || a == "-h":
			fmt.Fprintln(stdout, certUsage)
			return 0
		case strings.Contains(a, "="):
			k, v, _ := strings.Cut(a, "=")
			params[k] = v
		case action == "":
			action = a
		default:
			return certFail(stdout, stderr, asJSON, "usage", 64, fmt.Sprintf("unexpected word %q", a))
		}
	}
	var (
		written []string
		err     error
	)
	switch action {
	case "ca":
		if err := onlyKeys(params, "dir", "name"); err != nil {
			return certFail(stdout, stderr, asJSON, "usage", 64, err.Error())
		}
		dir := params["dir"]
		if dir == "" {
			return certFail(stdout, stderr, asJSON, "usage", 64, "cluster ca needs dir=<directory for ca.crt and ca.key>")
		}
		name := params["name"]
		if name == "" {
			name = filepath.Base(dir)
		}
		var crt string
		crt, err = pki.WriteCA(dir, name)
		if err == nil {
			_, key := pki.CAFiles(dir)
			written = []string{crt, key}
		}
	case "cert":
		if err := onlyKeys(params, "node", "ca", "out", "hosts"); err != nil {
			return certFail(stdout, stderr, asJSON, "usage", 64, err.Error())
		}
		node, ca, out := params["node"], params["ca"], params["out"]
		if node == "" || ca == "" || out == "" {
			return certFail(stdout, stderr, asJSON, "usage", 64, "cluster cert needs node=<name> ca=<CA dir> out=<directory>")
		}
		if !config.ValidNode(node) {
			return certFail(stdout, stderr, asJSON, "invalid_node", 65, fmt.Sprintf("node must be letters, digits, '.', '_' or '-' (got %q)", node))
		}
		var hosts []string
		if h := params["hosts"]; h != "" {
			for _, host := range strings.Split(h, ",") {
				host = strings.TrimSpace(host)
				if net.ParseIP(host) == nil && !dnsName(host) {
					return certFail(stdout, stderr, asJSON, "invalid_host", 65, fmt.Sprintf("hosts: %q is neither an IP address nor a DNS name (letters, digits, '-' and '.')", host))
				}
				hosts = append(hosts, host)
			}
		}
		var crt string
		crt, err = pki.WriteNode(ca, node, out, hosts)
		if err == nil {
			_, key := pki.NodeFiles(out, node)
			written = []string{crt, key}
		}
	default:
		return certFail(stdout, stderr, asJSON, "usage", 64, "cluster takes ca or cert (pi-actors cluster --help)")
	}
	switch {
	case errors.Is(err, pki.ErrExists):
		return certFail(stdout, stderr, asJSON, "exists", 75, err.Error())
	case errors.Is(err, pki.ErrInvalid) && errors.Is(err, fs.ErrNotExist):
		return certFail(stdout, stderr, asJSON, "ca_not_found", 66, err.Error())
	case errors.Is(err, pki.ErrInvalid):
		return certFail(stdout, stderr, asJSON, "invalid_ca", 65, err.Error())
	case errors.Is(err, fs.ErrPermission):
		return certFail(stdout, stderr, asJSON, "denied", 77, err.Error()+" (dir=/out= must be a directory this user can write)")
	case errors.Is(err, syscall.ENOSPC):
		return certFail(stdout, stderr, asJSON, "no_space", 73, err.Error())
	case errors.Is(err, syscall.ENOTDIR):
		return certFail(stdout, stderr, asJSON, "not_a_directory", 74, err.Error()+" (dir=/out= must be a directory, or a path where one can be created)")
	case err != nil:
		return certFail(stdout, stderr, asJSON, "invalid_dir", 65, err.Error()+" (dir=/out= must be a directory that can be created)")
	}
	var werr error
	if asJSON {
		b, _ := json.Marshal(map[string]any{"ok": true, "result": map[string]any{"written": written}})
		_, werr = fmt.Fprintln(stdout, string(b))
	} else {
		_, werr = fmt.Fprintf(stdout, "written=%s\n", strings.Join(written, ","))
	}
	if werr != nil {
		// The files are written; the answer naming them is not (74).
		fmt.Fprintf(stderr, "pi-actors cluster: writing the answer to stdout: %v (the files were written: %s)\n", werr, strings.Join(written, ","))
		return 74
	}
	return 0
}

func onlyKeys(params map[string]string, keys ...string) error {
	for k := range params {
		ok := false
		for _, want := range keys {
			ok = ok || k == want
		}
		if !ok {
			return fmt.Errorf("unknown parameter %s= (takes %s)", k, strings.Join(keys, ", "))
		}
	}
	return nil
}

func certFail(stdout, stderr io.Writer, asJSON bool, code string, exit int, msg string) int {
	const hint = "pi-actors cluster --help"
	if asJSON {
		b, _ := json.Marshal(map[string]any{"ok": false, "error": map[string]any{"code": code, "message": msg, "hint": hint}})
		fmt.Fprintln(stdout, string(b))
	} else {
		fmt.Fprintf(stderr, "pi-actors cluster: %s\nhint: %s\n", msg, hint)
	}
	return exit
}

// dnsName reports whether h is a DNS name a certificate may carry:
// dot-separated labels of letters, digits and '-' (not at either end),
// a leading "*." allowed.
func dnsName(h string) bool {
	h = strings.TrimPrefix(h, "*.")
	if h == "" || len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for _, r := range label {
			if !(r == '-' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
				return false
			}
		}
	}
	return true
}
