package runs

import (
	"encoding/json"
	"os"
	"path/filepath"

	"github.com/pi-actors/pi-actors/internal/config"
	"github.com/pi-actors/pi-actors/verbs/wire"
)

// kernelPid is the agent root's kernel when it is alive, else 0. A kernel
// that a run's process started (any verb starts one on demand) is a
// descendant of the run's supervisor — the supervisor is a subreaper —
// but it is never part of the run: stopping a run must not stop it, nor
// the supervisors it started since.
func kernelPid() int {
	dir, err := config.AgentDir()
	if err != nil {
		return 0
	}
	data, err := os.ReadFile(filepath.Join(wire.TmpDir(dir), "kernel.json"))
	if err != nil {
		return 0
	}
	var info wire.Info
	if json.Unmarshal(data, &info) != nil || info.Pid <= 0 || !Alive(info.Pid, info.PidStart) {
		return 0
	}
	return info.Pid
}

// DescendantsBut lists every live descendant of pid, depth first, but
// skip and its own descendants (0 skips nothing).
func DescendantsBut(pid, skip int) []int {
	var out []int
	var walk func(int, int)
	walk = func(p, depth int) {
		if depth > 64 {
			return
		}
		for _, c := range Children(p) {
			if c == skip {
				continue
			}
			if st, err := Stat(c); err == nil && st.State != "Z" && st.State != "X" {
				out = append(out, c)
			}
			walk(c, depth+1)
		}
	}
	walk(pid, 0)
	return out
}
