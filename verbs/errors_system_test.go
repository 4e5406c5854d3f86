package verbs

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
	"testing"

	"github.com/pi-actors/pi-actors/verbs/wire"
)

// What the system refused classifies by its errno however deeply it is
// wrapped: a full disk 73, no descriptor left 74, another user's files
// or kernel 77.
func TestClassifySystem(t *testing.T) {
	pathErr := func(errno syscall.Errno) error {
		return fmt.Errorf("append x: %w", &fs.PathError{Op: "write", Path: "/x/inbox.jsonl", Err: errno})
	}
	for _, c := range []struct {
		err  error
		exit int
		code string
	}{
		{pathErr(syscall.ENOSPC), ExitCantCreate, "no_space"},
		{pathErr(syscall.EDQUOT), ExitCantCreate, "no_space"},
		{fmt.Errorf("commit: database or disk is full (13) (%w)", syscall.ENOSPC), ExitCantCreate, "no_space"},
		{pathErr(syscall.EMFILE), ExitIOErr, "too_many_open_files"},
		{pathErr(syscall.ENFILE), ExitIOErr, "too_many_open_files"},
		{pathErr(syscall.EACCES), ExitNoPerm, "denied"},
		{fmt.Errorf("run:x: %w", &os.PathError{Op: "stat", Path: "/r/x", Err: syscall.EACCES}), ExitNoPerm, "denied"},
		{fmt.Errorf("%w: the process listening runs as uid 1", wire.ErrDenied), ExitNoPerm, "denied"},
		{pathErr(syscall.EIO), ExitSoftware, "internal"},
	} {
		got := Classify(c.err)
		if got.Exit != c.exit || got.Code != c.code || got.Message != c.err.Error() {
			t.Errorf("%v: exit %d code %s message %q, want %d %s", c.err, got.Exit, got.Code, got.Message, c.exit, c.code)
		}
	}
}
