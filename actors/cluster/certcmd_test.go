package cluster_test

import (
	"bytes"
	"os"
	"strings"
	"testing"

	"github.com/pi-actors/pi-actors/actors/cluster"
)

// cluster ca writes a CA once: a second call into the same directory is
// a conflict (75) that names the file and replaces nothing.
func TestCertMainExistingCA(t *testing.T) {
	dir := t.TempDir()
	var out, errb bytes.Buffer
	if code := cluster.CertMain([]string{"ca", "dir=" + dir}, &out, &errb); code != 0 {
		t.Fatalf("first cluster ca: exit %d: %s", code, errb.String())
	}
	out.Reset()
	errb.Reset()
	if code := cluster.CertMain([]string{"ca", "dir=" + dir}, &out, &errb); code != 75 {
		t.Fatalf("second cluster ca: exit %d, want 75 (%s)", code, errb.String())
	}
	if msg := errb.String(); !strings.HasPrefix(msg, "pi-actors cluster: ") || !strings.Contains(msg, "ca.crt is already there") {
		t.Errorf("second cluster ca said %q", msg)
	}
	out.Reset()
	if code := cluster.CertMain([]string{"ca", "dir=" + dir, "--json"}, &out, &errb); code != 75 || !strings.Contains(out.String(), `"code":"exists"`) {
		t.Errorf("second cluster ca --json: exit %d, %s", code, out.String())
	}
}

// cluster cert refuses a host that is neither an IP address nor a DNS
// name (65: bad data, not a usage error) and writes nothing.
func TestCertMainBadHost(t *testing.T) {
	ca, out := t.TempDir(), t.TempDir()
	var o, e bytes.Buffer
	if code := cluster.CertMain([]string{"ca", "dir=" + ca}, &o, &e); code != 0 {
		t.Fatalf("cluster ca: exit %d: %s", code, e.String())
	}
	e.Reset()
	if code := cluster.CertMain([]string{"cert", "node=n1", "ca=" + ca, "out=" + out, "hosts=ok.example,not_a_host!"}, &o, &e); code != 65 || !strings.Contains(e.String(), `"not_a_host!" is neither an IP address nor a DNS name`) {
		t.Fatalf("bad host: exit %d: %s", code, e.String())
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Errorf("files written for a refused certificate: %v", entries)
	}
	e.Reset()
	if code := cluster.CertMain([]string{"cert", "node=n1", "ca=" + ca, "out=" + out, "hosts=127.0.0.1,node-1.lab,*.lab"}, &o, &e); code != 0 {
		t.Fatalf("good hosts: exit %d: %s", code, e.String())
	}
}

// cluster cert's exit codes name what is wrong: a bad node name is bad
// data (65; it was 64), a CA directory that does not exist is not found
// (66; it was 65), an out= that is a file is not a directory (74; 65).
func TestCertMainExitCodes(t *testing.T) {
	ca, dir := t.TempDir(), t.TempDir()
	var o, e bytes.Buffer
	if code := cluster.CertMain([]string{"ca", "dir=" + ca}, &o, &e); code != 0 {
		t.Fatalf("cluster ca: exit %d: %s", code, e.String())
	}
	file := dir + "/afile"
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"node=x/y", "ca=" + ca, "out=" + dir + "/o"}, 65, "node must be"},
		{[]string{"node=n", "ca=" + dir + "/missing", "out=" + dir + "/o"}, 66, "no such file"},
		{[]string{"node=n", "ca=" + ca, "out=" + file}, 74, "not a directory"},
	} {
		e.Reset()
		if code := cluster.CertMain(append([]string{"cert"}, c.args...), &o, &e); code != c.code || !strings.Contains(e.String(), c.says) {
			t.Errorf("cluster cert %v: exit %d, want %d saying %q: %s", c.args, code, c.code, c.says, e.String())
		}
	}
}

// fullWriter takes nothing, as stdout on a full disk.
type fullWriter struct{}

func (fullWriter) Write([]byte) (int, error) { return 0, os.ErrClosed }

// An answer stdout does not take is 74, and says the files were written
// (it said 0).
func TestCertMainStdoutFails(t *testing.T) {
	for _, args := range [][]string{{"ca"}, {"ca", "--json"}} {
		dir := t.TempDir()
		var errb bytes.Buffer
		if code := cluster.CertMain(append(args, "dir="+dir), fullWriter{}, &errb); code != 74 || !strings.Contains(errb.String(), "the files were written") {
			t.Errorf("cluster %v with stdout failing: exit %d, %q", args, code, errb.String())
		}
	}
}
