package vector

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/pi-actors/pi-actors/internal/testproc"
	"github.com/pi-actors/pi-actors/knowledge/store"
)

// helper starts this test binary as the named helper process.
func helper(t *testing.T, args ...string) (*exec.Cmd, io.WriteCloser, *bufio.Reader) {
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

func readLine(t *testing.T, r *bufio.Reader) string {
	t.Helper()
	line, err := r.ReadString('\n')
	if err != nil {
		t.Fatalf("read helper output: %v (got %q)", err, line)
	}
	return strings.TrimSpace(line)
}

// helperMain runs a helper process (see TestMain):
//
//	ingest DB DIR   ingest DIR, printing "progress DONE TOTAL" after each
//	                batch, then "done"
func helperMain(args []string) int {
	if len(args) < 3 || args[0] != "ingest" {
		fmt.Fprintln(os.Stderr, "usage: ingest DB DIR")
		return 2
	}
	db, err := store.Open(args[1], store.Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer db.Close()
	s := New(db, Options{})
	defer s.Close()
	_, err = s.Ingest(context.Background(), IngestRequest{Path: args[2]}, func(done, total int) { fmt.Printf("progress %d %d\n", done, total) })
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	fmt.Println("done")
	return 0
}
