package recipes

import (
	"os"
	"syscall"
	"time"
)

// birthTime approximates a file's creation time: Linux stat has no birth
// time, so the earlier of change and modification time stands in.
func birthTime(st os.FileInfo) time.Time {
	t := st.ModTime()
	if s, ok := st.Sys().(*syscall.Stat_t); ok {
		if c := time.Unix(s.Ctim.Sec, s.Ctim.Nsec); c.Before(t) {
			t = c
		}
	}
	return t.UTC()
}

// sharedOrReadOnly reports whether a recipe file is one usage counters
// must not rewrite: read-only to its owner (the user keeps it as is), or
// hard-linked elsewhere (a rewrite by rename would leave the other names
// on the old content).
func sharedOrReadOnly(st os.FileInfo) bool {
	if st.Mode().Perm()&0o200 == 0 {
		return true
	}
	s, ok := st.Sys().(*syscall.Stat_t)
	return ok && s.Nlink > 1
}
