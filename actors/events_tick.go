package actors

import (
	"bytes"
	"errors"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"syscall"
	"time"

	"github.com/pi-actors/pi-actors/runs"
	"github.com/pi-actors/pi-actors/verbs"
)

// indexEvery is how often the runs index is looked at for archived and
// pruned runs (a stat; read only when it changed).
const indexEvery = 5 * time.Second

// stalledEvery is how often the stalled marker of silent running runs is
// rechecked (three stats a run; the threshold is minutes).
const stalledEvery = 10 * time.Second

// liveDirs is the state dirs of the runs the kernel follows now.
func (k *Kernel) liveDirs() map[string]bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	out := make(map[string]bool, len(k.live))
	for d := range k.live {
		out[d] = true
	}
	return out
}

func (h *eventsHub) stalledAfter() time.Duration {
	return time.Duration(h.k.conf().Runs.StalledAfterS) * time.Second
}

// maxEnded is the most ended runs any stream asked for.
func (h *eventsHub) maxEnded() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for s := range h.subs {
		n = max(n, s.ended)
	}
	return n
}

// init readies the tick's state (under tickMu).
func (h *eventsHub) init() {
	if h.rows != nil {
		return
	}
	h.rows, h.live, h.usage = map[string]verbs.RunRow{}, map[string]int{}, newUsageSampler()
	h.lastUse = h.usage.sample() // RSS now; the baseline CPU is measured from
	h.lastSample = time.Now()
	h.indexStamp = indexStamp(h.k.index)
	h.lastIndex = time.Now()
}

// snapshot is every live run and the newest ended ones, loaded now.
func (h *eventsHub) snapshot(ended int) []verbs.RunRow {
	h.tickMu.Lock()
	defer h.tickMu.Unlock()
	h.init()
	now := time.Now()
	var out []verbs.RunRow
	for d := range h.k.liveDirs() {
		in, err := runs.Load(runs.Dir(d))
		if err != nil {
			continue
		}
		row := verbs.RowOf(in, now, h.stalledAfter(), true)
		if in.Live() && row.Pid > 0 {
			u := h.lastUse[row.Pid]
			row.CPUPercent, row.RSSBytes = math.Round(u.cpu*10)/10, u.rss
		}
		h.rows[d], h.live[d] = row, row.Pid
		out = append(out, row)
	}
	entries, _ := h.k.index.Entries()
	for _, e := range entries {
		if ended <= 0 {
			break
		}
		if !runs.Terminal(e.Status) || h.live[e.StateDir] != 0 {
			continue
		}
		ended--
		row, ok := h.rows[e.StateDir]
		if !ok || row.Status != e.Status {
			in, err := runs.Load(runs.Dir(e.StateDir))
			if err != nil {
				continue
			}
			row = verbs.RowOf(in, now, 0, true)
			h.rows[e.StateDir] = row
		}
		out = append(out, row)
	}
	return out
}

// tick gathers what changed since the last one and hands it to every
// stream.
func (h *eventsHub) tick() {
	h.tickMu.Lock()
	defer h.tickMu.Unlock()
	h.init()
	now := time.Now()
	_, usageEvery, _ := h.settings()
	h.mu.Lock()
	dirty := h.dirty
	h.dirty = make(map[string]uint8, len(dirty))
	h.mu.Unlock()
	cur := h.k.liveDirs()
	for d := range cur {
		if _, ok := h.live[d]; !ok {
			dirty[d] |= changedStatus | changedOutput
		}
	}
	for d := range h.live {
		if !cur[d] {
			dirty[d] |= changedStatus
			delete(h.live, d)
		}
	}
	sampleDue := now.Sub(h.lastSample) >= usageEvery
	if h.k.fsw == nil && sampleDue {
		for d := range cur {
			dirty[d] |= changedStatus | changedOutput // no inotify: look at each live run per sample
		}
	}
	changed := map[string]verbs.RunRow{}
	var gone []string
	for d, what := range dirty {
		if _, known := h.rows[d]; !known && !cur[d] {
			continue // not a run the streams list
		}
		if h.reload(d, what, now, changed) {
			gone = append(gone, d)
		}
	}
	var figures *verbs.KernelFigures
	if sampleDue {
		h.lastSample = now
		stalled := now.Sub(h.lastStalled) >= stalledEvery
		if stalled {
			h.lastStalled = now
		}
		h.applyUsage(now, stalled, changed)
		figures = h.kernelFigures()
	}
	if now.Sub(h.lastIndex) >= indexEvery {
		h.lastIndex = now
		gone = append(gone, h.checkIndex(now, changed)...)
	}
	h.broadcast(changed, gone, figures)
}

// reload re-reads one run and records its row when it changed; true
// means the run is gone (pruned).
func (h *eventsHub) reload(d string, what uint8, now time.Time, changed map[string]verbs.RunRow) bool {
	old, known := h.rows[d]
	if what == changedOutput && known && old.Live() {
		// New output only: the last line, and the run is not silent.
		row := old
		row.LastStream, row.LastLine = verbs.LastLine(runs.Dir(d))
		row.Stalled = false
		if row != old {
			h.rows[d] = row
			changed[d] = row
		}
		return false
	}
	in, err := runs.Load(runs.Dir(d))
	if err != nil {
		if known && errors.Is(err, runs.ErrNotFound) {
			delete(h.rows, d)
			delete(h.live, d)
			return true
		}
		return false
	}
	output := what&changedOutput != 0 || !known
	row := verbs.RowOf(in, now, h.stalledAfter(), output)
	if !output {
		row.LastLine, row.LastStream = old.LastLine, old.LastStream
	}
	if in.Live() {
		row.CPUPercent, row.RSSBytes = old.CPUPercent, old.RSSBytes
		h.live[d] = row.Pid
	}
	if !known || row != old {
		h.rows[d] = row
		changed[d] = row
	}
	return false
}

// applyUsage samples CPU and RSS, and with stalled rechecks the stalled
// marker of every running run.
func (h *eventsHub) applyUsage(now time.Time, stalled bool, changed map[string]verbs.RunRow) {
	per := h.usage.sample()
	h.lastUse = per
	stalledAfter := h.stalledAfter()
	for d, pid := range h.live {
		row, ok := h.rows[d]
		if !ok || pid <= 0 {
			continue
		}
		u := per[pid]
		cpu := math.Round(u.cpu*10) / 10
		quiet := row.Stalled
		if stalled && row.Status == runs.StatusRunning && stalledAfter > 0 {
			since := runs.LastActivity(runs.Dir(d))
			if since.IsZero() {
				since = row.CreatedAt
			}
			quiet = !since.IsZero() && now.Sub(since) > stalledAfter
		}
		if cpu != row.CPUPercent || u.rss != row.RSSBytes || quiet != row.Stalled {
			row.CPUPercent, row.RSSBytes, row.Stalled = cpu, u.rss, quiet
			h.rows[d] = row
			changed[d] = row
		}
	}
}

// checkIndex follows archived and pruned runs through the runs index
// (read only when it changed): it returns the state dirs no longer
// indexed, and records the newest ended runs not yet listed.
func (h *eventsHub) checkIndex(now time.Time, changed map[string]verbs.RunRow) []string {
	stamp := indexStamp(h.k.index)
	if stamp == h.indexStamp {
		return nil
	}
	h.indexStamp = stamp
	entries, err := h.k.index.Entries()
	if err != nil {
		return nil
	}
	indexed := make(map[string]bool, len(entries))
	ended := h.maxEnded()
	for _, e := range entries {
		indexed[e.StateDir] = true
		if !runs.Terminal(e.Status) || h.live[e.StateDir] != 0 || ended <= 0 {
			continue
		}
		ended--
		if row, ok := h.rows[e.StateDir]; ok && row.Status == e.Status {
			continue
		}
		h.reload(e.StateDir, changedStatus|changedOutput, now, changed)
	}
	var gone []string
	for d := range h.rows {
		if !indexed[d] && h.live[d] == 0 {
			delete(h.rows, d)
			gone = append(gone, d)
		}
	}
	return gone
}

// indexStamp is the runs index file's size and modification time.
func indexStamp(x *runs.Index) [2]int64 {
	st, err := os.Stat(filepath.Join(x.Root, runs.IndexFile))
	if err != nil {
		return [2]int64{}
	}
	return [2]int64{st.Size(), st.ModTime().UnixNano()}
}

// broadcast merges changes into every stream's pending set.
func (h *eventsHub) broadcast(changed map[string]verbs.RunRow, gone []string, figures *verbs.KernelFigures) {
	if len(changed) == 0 && len(gone) == 0 && figures == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		s.mu.Lock()
		for d, r := range changed {
			s.pending[d] = r
			delete(s.gone, d)
		}
		for _, d := range gone {
			delete(s.pending, d)
			s.gone[d] = true
		}
		if figures != nil {
			f := *figures
			s.kernel = &f
		}
		s.mu.Unlock()
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
}

// kernelFigures are the kernel's own costs (from the last usage sample).
func (h *eventsHub) kernelFigures() *verbs.KernelFigures {
	_, _, n := h.settings()
	f := &verbs.KernelFigures{Pid: os.Getpid(), LiveRuns: h.k.liveTotal(), Streams: n}
	if h.usage != nil {
		f.CPUPercent, f.RSSBytes = math.Round(h.usage.selfCPU*10)/10, h.usage.selfRSS
	}
	return f
}

// sessionUse is the CPU (percent of one core since the previous sample)
// and resident memory of one session's processes.
type sessionUse struct {
	cpu float64
	rss uint64
}

// usageSampler measures every session's CPU and RSS in one pass over
// /proc: a run's supervisor leads its own session, and its leaves stay in
// it (a leaf that starts a session of its own is not counted).
type usageSampler struct {
	prev    map[int]uint64 // session → CPU ticks at the previous sample
	prevAt  time.Time
	self    int
	selfCPU float64
	selfRSS uint64
	page    uint64
	buf     [1024]byte
}

func newUsageSampler() *usageSampler {
	return &usageSampler{prev: map[int]uint64{}, self: os.Getpid(), page: uint64(os.Getpagesize())}
}

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat times.
const clockTicks = 100

// sample reads /proc and returns each session's use since the previous
// sample.
func (u *usageSampler) sample() map[int]sessionUse {
	ticks := map[int]uint64{}
	out := map[int]sessionUse{}
	ents, err := os.ReadDir("/proc")
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return out
	}
	var selfTicks uint64
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		st, ok := u.stat(pid)
		if !ok {
			continue
		}
		ticks[st.sid] += st.cpu
		o := out[st.sid]
		o.rss += st.rss * u.page
		out[st.sid] = o
		if pid == u.self {
			selfTicks, u.selfRSS = st.cpu, st.rss*u.page
		}
	}
	now := time.Now()
	if secs := now.Sub(u.prevAt).Seconds(); !u.prevAt.IsZero() && secs > 0 {
		for sid, t := range ticks {
			if p, ok := u.prev[sid]; ok && t > p {
				o := out[sid]
				o.cpu = 100 * float64(t-p) / clockTicks / secs
				out[sid] = o
			}
		}
		if p, ok := u.prev[-u.self]; ok && selfTicks > p {
			u.selfCPU = 100 * float64(selfTicks-p) / clockTicks / secs
		} else {
			u.selfCPU = 0
		}
	}
	ticks[-u.self] = selfTicks // the kernel's own process (its session holds nothing else)
	u.prev, u.prevAt = ticks, now
	return out
}

// procStat is what a sample needs of /proc/<pid>/stat.
type procStat struct {
	sid      int
	cpu, rss uint64
}

// stat reads /proc/<pid>/stat into a reused buffer and parses the session,
// CPU ticks and resident pages without allocating (a sample reads every
// process on the machine); false for a zombie or a process gone.
func (u *usageSampler) stat(pid int) (procStat, bool) {
	var path [32]byte
	p := append(strconv.AppendInt(append(path[:0], "/proc/"...), int64(pid), 10), "/stat"...)
	fd, err := syscall.Open(string(p), syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
	if err != nil {
		return procStat{}, false
	}
	n, err := syscall.Read(fd, u.buf[:])
	syscall.Close(fd)
	if err != nil || n <= 0 {
		return procStat{}, false
	}
	b := u.buf[:n]
	i := bytes.LastIndexByte(b, ')')
	if i < 0 || i+2 >= len(b) {
		return procStat{}, false
	}
	// Fields after the command: 0 state, 3 session, 11 utime, 12 stime,
	// 21 rss (counting from the state).
	var st procStat
	field, start := 0, i+2
	for j := start; j <= len(b) && field <= 21; j++ {
		if j < len(b) && b[j] != ' ' && b[j] != '\n' {
			continue
		}
		tok := b[start:j]
		switch field {
		case 0:
			if len(tok) > 0 && (tok[0] == 'Z' || tok[0] == 'X') {
				return procStat{}, false
			}
		case 3:
			st.sid = int(atou(tok))
		case 11, 12:
			st.cpu += atou(tok)
		case 21:
			st.rss = atou(tok)
		}
		field++
		start = j + 1
	}
	return st, field > 21
}

// atou parses a decimal number (0 for anything else).
func atou(b []byte) uint64 {
	var n uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0
		}
		n = n*10 + uint64(c-'0')
	}
	return n
}
