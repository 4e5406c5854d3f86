package runs

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// checkOwner refuses a custom state directory another user could change
// under the run (abs: absolute, symlinks resolved): a run trusts its
// state dir — a restart runs what run.json says, messages are appended to
// its inbox — so it must be the caller's, not writable by all, and sit in
// a directory no one else can rename it out of (the caller's or root's,
// not writable by all unless sticky like /tmp). A group-writable
// directory passes: a umask of 002 with a group of one's own makes them.
// A directory that does not exist yet is judged by its nearest existing
// ancestor.
func checkOwner(dir, abs string) error {
	uid := uint32(os.Geteuid())
	fix := "use a directory of your own that only you can write (mode 0700), or leave state_dir out for <agent>/tmp/pi-actors/runs/<id>"
	p := abs
	st, err := os.Stat(p)
	if err == nil {
		owner, mode := ownerOf(st)
		if owner != uid {
			return fmt.Errorf("%w: state_dir=%s belongs to uid %d, not you (uid %d): its owner could change the run's files, run.json (what a restart runs) included; %s", ErrStateDir, dir, owner, uid, fix)
		}
		if mode&0o002 != 0 {
			return fmt.Errorf("%w: state_dir=%s is writable by others (mode %04o): they could plant its files; chmod 700 it, or %s", ErrStateDir, dir, mode.Perm(), fix)
		}
	}
	for p = filepath.Dir(p); ; p = filepath.Dir(p) {
		st, err := os.Stat(p)
		if err == nil {
			owner, mode := ownerOf(st)
			if owner != uid && owner != 0 {
				return fmt.Errorf("%w: state_dir=%s is in %s, which belongs to uid %d: its owner could replace the state dir; %s", ErrStateDir, dir, p, owner, fix)
			}
			if mode&0o002 != 0 && mode&fs.ModeSticky == 0 {
				return fmt.Errorf("%w: state_dir=%s is in %s, which others can write (mode %04o, not sticky): they could replace the state dir; %s", ErrStateDir, dir, p, mode.Perm(), fix)
			}
			return nil
		}
		if filepath.Dir(p) == p {
			return nil
		}
	}
}

// ownerOf is a file's owner uid and mode.
func ownerOf(st os.FileInfo) (uint32, fs.FileMode) {
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		return s.Uid, st.Mode()
	}
	return uint32(os.Geteuid()), st.Mode()
}
