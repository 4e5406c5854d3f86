package runs

import (
	"errors"
	"fmt"
	"io/fs"
	"syscall"
	"testing"
)

// A supervisor that cannot set up reports its error on the readiness
// line with its errno, so the kernel classifies a full disk (73) or no
// file descriptor (74) as such; other errors keep their message.
func TestReadyErrorKeepsErrno(t *testing.T) {
	full := fmt.Errorf("write /r/x/run.json: %w", &fs.PathError{Op: "write", Path: "/r/x/.run.json.tmp-1", Err: syscall.ENOSPC})
	got := parseReadyError(readyError(full))
	if !errors.Is(got, syscall.ENOSPC) || got.Error() != full.Error() {
		t.Fatalf("full disk: %v (errno kept: %v)", got, errors.Is(got, syscall.ENOSPC))
	}
	plain := errors.New("no supervisor command configured")
	got = parseReadyError(readyError(plain))
	if got.Error() != plain.Error() || errors.Is(got, syscall.ENOSPC) {
		t.Fatalf("plain: %v", got)
	}
	if got := parseReadyError("error errno=x y"); got.Error() != "errno=x y" {
		t.Fatalf("a malformed errno is kept as text: %q", got)
	}
}
