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
