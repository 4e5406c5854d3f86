package actors

import (
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/pi-actors/pi-actors/internal/config"
)

// liveSettings is pi-actors.toml as the kernel read it last. What applies
// per run or per request ([exec] limits, [runs] log and retention limits,
// [knowledge] capture) comes from here, so an edit of the file reaches new
// runs without a kernel restart, as it reaches every CLI call; [cluster]
// and the knowledge embedder are taken once, at start.
type liveSettings struct {
	mu    sync.Mutex
	path  string
	stamp fileStamp
	cur   config.Config
	err   error // why the file last failed to load (the settings before it stay)
}

// fileStamp tells a changed file from the one read before: a rewrite
// (temp and rename) changes the inode, an edit in place the time or size.
// A missing file has the zero stamp.
type fileStamp struct {
	Inode uint64 `json:"inode"`
	Size  int64  `json:"size"`
	MTime int64  `json:"mtime_ns"`
}

func stampOf(path string) fileStamp {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}
	}
	st := fileStamp{Size: fi.Size(), MTime: fi.ModTime().UnixNano()}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.Inode = sys.Ino
	}
	return st
}

func newLiveSettings(agentDir string, loaded config.Config) *liveSettings {
	path := filepath.Join(agentDir, config.FileName)
	return &liveSettings{path: path, stamp: stampOf(path), cur: loaded}
}

// get returns the settings, reading the file again when it changed since
// it was read (one stat when it did not). A file that no longer loads
// leaves the settings as they were; loadError says why.
func (l *liveSettings) get() config.Config {
	l.mu.Lock()
	defer l.mu.Unlock()
	st := stampOf(l.path)
	if st == l.stamp {
		return l.cur
	}
	l.stamp = st
	c, err := config.Load(filepath.Dir(l.path))
	if l.err = err; err == nil {
		l.cur = c
	}
	return l.cur
}

// loadError is why the file's last version did not load, or nil.
func (l *liveSettings) loadError() error {
	l.get()
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.err
}

// conf is the settings that apply now (see liveSettings).
func (k *Kernel) conf() config.Config {
	if k.settings == nil {
		return k.cfg.Settings
	}
	return k.settings.get()
}
