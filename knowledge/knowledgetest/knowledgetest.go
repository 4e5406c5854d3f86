package knowledgetest

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/pi-actors/pi-actors/internal/testproc"
	"github.com/pi-actors/pi-actors/knowledge/api"
	"github.com/pi-actors/pi-actors/knowledge/api/graphop"
	"github.com/pi-actors/pi-actors/knowledge/api/op"
	"github.com/pi-actors/pi-actors/knowledge/api/vectorop"
)

// Ops runs knowledge operations for a test: Exec runs a decoded request.
type Ops struct {
	T    testing.TB
	Exec func(ctx context.Context, req op.Request) (any, error)
}

// Do decodes raw as the parameters of the operation name and runs it;
// a domain error comes back as the *op.Error, any other fails the test.
func (o *Ops) Do(name, raw string) (any, *op.Error) {
	o.T.Helper()
	req, err := api.Decode(name, json.RawMessage(raw))
	if err == nil {
		var v any
		if v, err = o.Exec(context.Background(), req); err == nil {
			return v, nil
		}
	}
	ae, ok := op.AsError(err)
	if !ok {
		o.T.Fatalf("%s %s: %v", name, raw, err)
	}
	return nil, ae
}

// OK runs the operation and wants it to succeed.
func (o *Ops) OK(name, raw string) any {
	o.T.Helper()
	v, ae := o.Do(name, raw)
	if ae != nil {
		o.T.Fatalf("%s %s: %v", name, raw, ae)
	}
	return v
}

// Fail runs the operation and wants an error with code about field ("*"
// for any field).
func (o *Ops) Fail(code op.Code, field, name, raw string) *op.Error {
	o.T.Helper()
	v, ae := o.Do(name, raw)
	if ae == nil {
		o.T.Fatalf("%s %s: got %+v, want %s on %s", name, raw, v, code, field)
	}
	if ae.Code != code || (field != "*" && ae.Details["field"] != field) {
		o.T.Fatalf("%s %s: got %s on %v (%s), want %s on %s", name, raw, ae.Code, ae.Details["field"], ae.Message, code, field)
	}
	return ae
}

// JSON is v as JSON, for failure messages.
func JSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// Helper starts this test binary as the helper args name (its TestMain
// dispatches when testproc.EnvVar is set), with pipes to its stdin and
// from its stdout; it is killed and reaped when the test ends.
func Helper(t testing.TB, args ...string) (*exec.Cmd, io.WriteCloser, *bufio.Reader) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), testproc.EnvVar+"=1")
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	return cmd, stdin, bufio.NewReader(stdout)
}

// ReadLine reads one line of a helper's output, trimmed.
func ReadLine(t testing.TB, r *bufio.Reader) string {
	t.Helper()
	line, err := r.ReadString('\n')
	if err != nil {
		t.Fatalf("read helper output: %v (got %q)", err, line)
	}
	return strings.TrimSpace(line)
}

// Atom creates an atom (manage_graph); extra adds JSON members
// (`,"moleculeId":"…"`).
func (o *Ops) Atom(name, paths, extra string) *graphop.Atom {
	o.T.Helper()
	return o.OK("manage_graph", fmt.Sprintf(`{"operation":"create","entityType":"atom","name":%q,"paths":%s%s}`, name, paths, extra)).(*graphop.Atom)
}

// Molecule creates a molecule (manage_graph).
func (o *Ops) Molecule(name, extra string) *graphop.Molecule {
	o.T.Helper()
	return o.OK("manage_graph", fmt.Sprintf(`{"operation":"create","entityType":"molecule","name":%q%s}`, name, extra)).(*graphop.Molecule)
}

// Node adds a vector graph node (node_add).
func (o *Ops) Node(domain, typ, name, content, extra string) *vectorop.Node {
	o.T.Helper()
	return &o.OK("node_add", fmt.Sprintf(`{"domain":%q,"type":%q,"name":%q,"content":%q%s}`, domain, typ, name, content, extra)).(*vectorop.NodeAdded).Node
}
