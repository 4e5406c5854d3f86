package cluster_test

import (
	"bytes"
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
