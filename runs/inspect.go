package runs

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Read-only helpers for the inspect views. None of them writes a file or
// signals a process.

// FilesDir is where a run's files are: its state directory, or the
// archive directory of an archived run.
func (in *Info) FilesDir() Dir {
	if in.Archived != nil && in.Archived.ArchiveDir != "" {
		return Dir(in.Archived.ArchiveDir)
	}
	return in.Dir
}

// Artifact is one declared artifact as found on disk. SHA256 and Size are
// set only for an existing regular file (SHA256 only when hashing was
// asked for).
type Artifact struct {
	Exists    bool   `json:"exists"`
	Kind      string `json:"kind,omitempty"`
	MediaType string `json:"media_type,omitempty"`
	Path      string `json:"path"`
	Required  bool   `json:"required,omitempty"`
	SHA256    string `json:"sha256,omitempty"`
	Size      *int64 `json:"size,omitempty"`
}

// ArtifactNames returns the declared artifact names, sorted.
func ArtifactNames(arts map[string]any) []string {
	names := make([]string, 0, len(arts))
	for n := range arts {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// ArtifactPath is the path of a declared artifact (a path string, or an
// object with path).
func ArtifactPath(a any) string { return artifactPath(a) }

// Manifest checks every declared artifact of a run where it is on disk
// (Info.ArtifactFile: a relative path from the run's working directory,
// as prune preserves it): whether it exists and, for regular files, its
// size and (with hash) its SHA-256. Path is the path as declared.
func Manifest(in *Info, hash bool) map[string]Artifact {
	arts := in.Meta.Artifacts
	out := make(map[string]Artifact, len(arts))
	for name, a := range arts {
		e := Artifact{Path: artifactPath(a)}
		file := in.ArtifactFile(a)
		if m, ok := a.(map[string]any); ok {
			e.Kind, _ = m["kind"].(string)
			e.MediaType, _ = m["media_type"].(string)
			e.Required, _ = m["required"].(bool)
		}
		if file != "" {
			if st, err := os.Stat(file); err == nil {
				e.Exists = true
				if st.Mode().IsRegular() {
					size := st.Size()
					e.Size = &size
					if hash {
						e.SHA256 = fileSHA256(file)
					}
				}
			}
		}
		out[name] = e
	}
	return out
}

func fileSHA256(path string) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return ""
	}
	return hex.EncodeToString(h.Sum(nil))
}

// LastActivity is the newest modification time of the run's output and
// event files (stdout.log, stderr.log, events.jsonl): zero when none
// exists. A running run silent for longer than a threshold is stalled.
func LastActivity(d Dir) time.Time {
	var last time.Time
	for _, name := range []string{StdoutLog, StderrLog, EventsFile} {
		if st, err := os.Stat(d.Path(name)); err == nil && st.ModTime().After(last) {
			last = st.ModTime()
		}
	}
	return last
}

// LastOutput returns the last non-empty line the run wrote, from whichever
// of stdout.log and stderr.log was written last, and that stream's name
// ("stdout" or "stderr"); "" when the run wrote nothing.
func LastOutput(d Dir) (stream, line string) {
	type logFile struct {
		stream, name string
		mod          time.Time
	}
	var logs []logFile
	for _, l := range []logFile{{"stdout", StdoutLog, time.Time{}}, {"stderr", StderrLog, time.Time{}}} {
		if st, err := os.Stat(d.Path(l.name)); err == nil && st.Size() > 0 {
			l.mod = st.ModTime()
			logs = append(logs, l)
		}
	}
	sort.SliceStable(logs, func(i, j int) bool { return logs[i].mod.After(logs[j].mod) })
	for _, l := range logs {
		lines := tailLines(d.Path(l.name), 64)
		for i := len(lines) - 1; i >= 0; i-- {
			if s := strings.TrimSpace(lines[i]); s != "" {
				return l.stream, s
			}
		}
	}
	return "", ""
}

// Usage is the resource use of a run's process tree (the supervisor and
// every live descendant).
type Usage struct {
	Pids int `json:"pids"`
	// CPUPercent is the sum over the tree of each process's average CPU
	// use since it started (ps %CPU semantics: CPU time / wall time since
	// start), so it needs no sampling delay; 100 is one core.
	CPUPercent float64 `json:"cpu_percent"`
	RSSBytes   uint64  `json:"rss_bytes"`
}

// TreeUsage measures the process tree rooted at pid; the zero Usage when
// pid is not alive. It reads /proc/<pid>/stat itself rather than through
// gopsutil: linking gopsutil's cpu package costs every pi-actors process
// (each run's supervisor included) two reads of /proc/stat at start-up.
func TreeUsage(pid int) Usage {
	var u Usage
	if pid <= 0 {
		return u
	}
	up := uptimeTicks()
	page := uint64(os.Getpagesize())
	for _, p := range append([]int{pid}, Descendants(pid)...) {
		st, err := Stat(p)
		if err != nil {
			continue
		}
		u.Pids++
		u.RSSBytes += st.RSS * page
		if up > st.Start {
			u.CPUPercent += 100 * float64(st.CPU) / float64(up-st.Start)
		}
	}
	return u
}

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat times: 100 on every
// Linux architecture Go supports.
const clockTicks = 100

// uptimeTicks is the time since boot in clock ticks (/proc/uptime).
func uptimeTicks() uint64 {
	data, err := os.ReadFile("/proc/uptime")
	if err != nil {
		return 0
	}
	f := strings.Fields(string(data))
	if len(f) == 0 {
		return 0
	}
	secs, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return 0
	}
	return uint64(secs * clockTicks)
}

// LiveLeaves returns the run's leaves whose process is still the one
// that was started: those of progress.json (rewritten at most every
// 250 ms, the first time 1 s after the start) together with those the
// tail of events.jsonl (written at once) shows started and not done.
func LiveLeaves(in *Info) []Leaf {
	byPid := map[int]Leaf{}
	if in.Progress != nil {
		for _, l := range in.Progress.Leaves {
			byPid[l.Pid] = l
		}
	}
	for _, line := range tailLines(in.Dir.Path(EventsFile), 2000) {
		if !strings.Contains(line, `"command.`) {
			continue
		}
		var ev struct {
			Event   string `json:"event"`
			Pid     int    `json:"pid"`
			Start   uint64 `json:"start"`
			Command string `json:"command"`
		}
		if json.Unmarshal([]byte(line), &ev) != nil || ev.Pid <= 0 {
			continue
		}
		switch ev.Event {
		case "command.start":
			if ev.Start > 0 {
				byPid[ev.Pid] = Leaf{Pid: ev.Pid, Start: ev.Start, Command: ev.Command}
			}
		case "command.done":
			delete(byPid, ev.Pid)
		}
	}
	var out []Leaf
	for _, l := range byPid {
		// Never pid 1 or below: a leaf's group is signalled as -pid, and
		// kill(-1) reaches every process (a damaged progress.json).
		if l.Pid > 1 && Alive(l.Pid, l.Start) {
			out = append(out, l)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Pid < out[j].Pid })
	return out
}
