// Command benchtool is the timing and polling helper of scripts/bench-runs.sh.
// Bash cannot time a process and poll /proc or a few hundred state files
// at millisecond resolution, so each measurement is a subcommand here;
// bench-runs.sh builds it into its temp dir and prints the figures.
//
// Every subcommand prints its results as key=value lines (times in ms with
// one decimal, memory in KiB) for the script to read; progress and
// problems go to stderr. It uses the standard library only and reads the
// run state files directly, so it does not depend on the pi-actors
// packages it measures.
//
//	benchtool latency  BIN AGENT N           N sequential `spawn as=run:lat-<i> template='sleep 30'`
//	benchtool batch    BIN AGENT N PREFIX    one `spawn -` of N `sleep 30` runs, until every leaf runs
//	benchtool mem      AGENT PREFIX          PSS/RSS of the supervisors of PREFIX-* runs and of the kernel
//	benchtool kill     BIN AGENT PREFIX      one `message -` of control.kill to every PREFIX-* run, until every pid is gone
//	benchtool gen      AGENT N               N terminal run dirs (run.json + result.json), no index
//	benchtool time     N -- CMD ARGS…        CMD once (first) and N more times (warm)
//	benchtool followup BIN AGENT N           N runs of `sleep 0.2` owned by a session, watched
//	benchtool startwait PARENT COMM N -- CMD ARGS…   CMD, then until PARENT has N live descendants named COMM
//	benchtool stopwait PIDFILE -- CMD ARGS…  CMD, then until every pid of PIDFILE is gone
//	benchtool descendants PARENT COMM        pids of PARENT's live descendants named COMM
//	benchtool pss PID                        rss_kb=, pss_kb= of one process
//	benchtool syscalls BIN AGENT ID          file system calls of the kernel and the new supervisor for one spawn (strace)
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

func main() {
	if len(os.Args) < 2 {
		fatalf("usage: benchtool latency|batch|mem|kill|gen|time|followup|startwait|stopwait|descendants|fscost|pss|syscalls|mcp …")
	}
	args := os.Args[2:]
	switch os.Args[1] {
	case "latency":
		need(args, 3)
		latency(args[0], args[1], atoi(args[2]))
	case "batch":
		need(args, 4)
		batch(args[0], args[1], atoi(args[2]), args[3])
	case "mem":
		need(args, 2)
		mem(args[0], args[1])
	case "kill":
		need(args, 3)
		killBatch(args[0], args[1], args[2])
	case "gen":
		need(args, 2)
		gen(args[0], atoi(args[1]))
	case "time":
		n, cmd := atoi(args[0]), afterDashes(args)
		timeCmd(n, cmd)
	case "followup":
		need(args, 3)
		followup(args[0], args[1], atoi(args[2]))
	case "startwait":
		need(args, 3)
		startWait(atoi(args[0]), args[1], atoi(args[2]), afterDashes(args))
	case "stopwait":
		stopWait(args[0], afterDashes(args))
	case "descendants":
		need(args, 2)
		for _, p := range descendants(atoi(args[0]), args[1]) {
			fmt.Println(p)
		}
	case "fscost":
		need(args, 1)
		fsCost(args[0])
	case "mcp":
		need(args, 3)
		mcpBench(args[0], atoi(args[1]), atoi(args[2]))
	case "syscalls":
		need(args, 3)
		syscalls(args[0], args[1], args[2])
	case "pss":
		need(args, 1)
		rss, pss := memOf(atoi(args[0]))
		fmt.Printf("rss_kb=%d\npss_kb=%d\n", rss, pss)
	default:
		fatalf("unknown subcommand %q", os.Args[1])
	}
}

// --- fscost ----------------------------------------------------------------

// fsCost measures what the filesystem under dir charges for the small
// files every run creates: the mean create+write+close of 200 new files
// and the median fsync of one of them (the files are removed after).
func fsCost(dir string) {
	d, err := os.MkdirTemp(dir, "fscost")
	if err != nil {
		fatalf("fscost: %v", err)
	}
	defer os.RemoveAll(d)
	const n = 200
	t0 := time.Now()
	for i := range n {
		if err := os.WriteFile(filepath.Join(d, strconv.Itoa(i)), []byte("{}\n"), 0o600); err != nil {
			fatalf("fscost: %v", err)
		}
	}
	create := time.Since(t0) / n
	var syncs []time.Duration
	for i := range 9 {
		f, err := os.OpenFile(filepath.Join(d, strconv.Itoa(i)), os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			fatalf("fscost: %v", err)
		}
		f.WriteString("{}\n")
		t := time.Now()
		f.Sync()
		syncs = append(syncs, time.Since(t))
		f.Close()
	}
	fmt.Printf("create_us=%.0f\nfsync_ms=%s\n", float64(create.Nanoseconds())/1e3, ms(percentile(syncs, 50)))
}

// --- helpers ---------------------------------------------------------------

func fatalf(format string, a ...any) {
	fmt.Fprintf(os.Stderr, "benchtool: "+format+"\n", a...)
	os.Exit(1)
}

func need(args []string, n int) {
	if len(args) < n {
		fatalf("%s needs %d arguments", os.Args[1], n)
	}
}

func atoi(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		fatalf("not a number: %q", s)
	}
	return n
}

func afterDashes(args []string) []string {
	for i, a := range args {
		if a == "--" {
			if i+1 >= len(args) {
				break
			}
			return args[i+1:]
		}
	}
	fatalf("%s needs -- CMD ARGS…", os.Args[1])
	return nil
}

func ms(d time.Duration) string {
	return strconv.FormatFloat(float64(d.Microseconds())/1000, 'f', 1, 64)
}

// percentile by nearest rank over a copy of ds (p in 0..100).
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	if p == 50 && len(s)%2 == 0 {
		return (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	k := int(math.Ceil(p/100*float64(len(s)))) - 1
	return s[max(0, min(k, len(s)-1))]
}

func maxOf(ds []time.Duration) time.Duration {
	var m time.Duration
	for _, d := range ds {
		m = max(m, d)
	}
	return m
}

func runsRoot(agent string) string { return filepath.Join(agent, "tmp", "pi-actors", "runs") }

func readJSON(path string, v any) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}

// procStat is the part of /proc/<pid>/stat we need.
type procStat struct {
	state string
	ppid  int
	start uint64
	comm  string
}

func statOf(pid int) (procStat, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return procStat{}, false
	}
	s := string(b)
	open, close := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
	if open < 0 || close < 0 {
		return procStat{}, false
	}
	f := strings.Fields(s[close+1:])
	if len(f) < 20 {
		return procStat{}, false
	}
	ppid, _ := strconv.Atoi(f[1])
	start, _ := strconv.ParseUint(f[19], 10, 64)
	return procStat{state: f[0], ppid: ppid, start: start, comm: s[open+1 : close]}, true
}

// proc is a process we wait for: pid plus start time (a reused pid is not
// the same process).
type proc struct {
	pid   int
	start uint64
}

// alive: the process exists, is the same one, and is not a zombie.
func (p proc) alive() bool {
	st, ok := statOf(p.pid)
	if !ok || st.state == "Z" || st.state == "X" {
		return false
	}
	return p.start == 0 || st.start == p.start
}

func anyAlive(ps []proc) int {
	n := 0
	for _, p := range ps {
		if p.alive() {
			n++
		}
	}
	return n
}

// memOf reads Rss and Pss (KiB) from /proc/<pid>/smaps_rollup.
func memOf(pid int) (rss, pss int64) {
	f, err := os.Open("/proc/" + strconv.Itoa(pid) + "/smaps_rollup")
	if err != nil {
		return 0, 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 2 {
			continue
		}
		n, _ := strconv.ParseInt(fs[1], 10, 64)
		switch fs[0] {
		case "Rss:":
			rss = n
		case "Pss:":
			pss = n
		}
	}
	return rss, pss
}

// children lists the direct children of pid (all its threads).
func children(pid int) []int {
	var out []int
	tasks, _ := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	for _, t := range tasks {
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + t.Name() + "/children")
		if err != nil {
			continue
		}
		for _, f := range strings.Fields(string(b)) {
			if c, err := strconv.Atoi(f); err == nil {
				out = append(out, c)
			}
		}
	}
	return out
}

// descendants lists the live descendants of parent whose comm is comm.
func descendants(parent int, comm string) []int {
	var out []int
	stack := children(parent)
	for len(stack) > 0 {
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if st, ok := statOf(p); ok && st.comm == comm && st.state != "Z" {
			out = append(out, p)
		}
		stack = append(stack, children(p)...)
	}
	return out
}

// cmdTimeout bounds every command benchtool runs, so a stuck kernel or
// supervisord cannot hold the bench (and CI) hostage.
const cmdTimeout = 90 * time.Second

// runCmd runs a command with the given stdin, returning its stdout, wall
// time from just before the start to its exit, and error.
func runCmd(cmd []string, stdin []byte, env []string) ([]byte, time.Duration, error) {
	ctx, cancel := context.WithTimeout(context.Background(), cmdTimeout)
	defer cancel()
	c := exec.CommandContext(ctx, cmd[0], cmd[1:]...)
	if stdin != nil {
		c.Stdin = bytes.NewReader(stdin)
	}
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	if env != nil {
		c.Env = env
	}
	t0 := time.Now()
	err := c.Run()
	d := time.Since(t0)
	if err != nil {
		err = fmt.Errorf("%s: %v: %s", strings.Join(cmd, " "), err, strings.TrimSpace(firstLines(errb.String()+out.String(), 3)))
	}
	return out.Bytes(), d, err
}

func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = lines[:n]
	}
	return strings.Join(lines, "\n")
}

// runMeta and progress are the fields of run.json / progress.json we read.
type runMeta struct {
	Pid      int    `json:"pid"`
	PidStart uint64 `json:"pid_start_time"`
}

// leafOf returns the first recorded leaf of a run, if it is alive.
// leafOf finds the run's first leaf from its command.start event (written
// the moment the leaf starts; progress.json is only rewritten every 250 ms).
func leafOf(dir string) (proc, bool) {
	data, err := os.ReadFile(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		return proc{}, false
	}
	for _, line := range bytes.Split(data, []byte("\n")) {
		var ev struct {
			Event string `json:"event"`
			Pid   int    `json:"pid"`
		}
		if json.Unmarshal(line, &ev) == nil && ev.Event == "command.start" && ev.Pid > 0 {
			l := proc{pid: ev.Pid}
			return l, l.alive()
		}
	}
	return proc{}, false
}

// spawnResult is one line of `spawn --json` output.
type spawnResult struct {
	OK     bool `json:"ok"`
	Result struct {
		Run    string `json:"run"`
		Status string `json:"status"`
		Pid    int    `json:"pid"`
	} `json:"result"`
	Error any `json:"error"`
}

func parseResults(out []byte) []spawnResult {
	var rs []spawnResult
	dec := json.NewDecoder(bytes.NewReader(out))
	for {
		var r spawnResult
		if err := dec.Decode(&r); err != nil {
			break
		}
		rs = append(rs, r)
	}
	return rs
}

// --- latency ---------------------------------------------------------------

// latency: N sequential spawns on a warm kernel. Per spawn: CLI start →
// CLI exit with status running (the spawn answers once the supervisor is
// up), and CLI start → the leaf process started (its command.start event,
// the leaf alive).
func latency(bin, agent string, n int) {
	var cli, leaf []time.Duration
	var phases [4][]time.Duration
	ok := 0
	for i := 1; i <= n; i++ {
		id := fmt.Sprintf("lat-%d", i)
		t0 := time.Now()
		out, d, err := runCmd([]string{bin, "spawn", "as=run:" + id, "template=sleep 30", "--json"}, nil, nil)
		if err != nil {
			fmt.Fprintln(os.Stderr, "benchtool latency:", err)
			continue
		}
		rs := parseResults(out)
		if len(rs) != 1 || rs[0].Result.Status != "running" {
			fmt.Fprintf(os.Stderr, "benchtool latency: %s: unexpected answer %s\n", id, out)
			continue
		}
		ok++
		cli = append(cli, d)
		dir := filepath.Join(runsRoot(agent), id)
		// Where the time went, from the run's own timestamps: CLI start →
		// run.json createdAt (CLI start-up, dial, kernel checks) → run.start
		// (a pooled supervisor took the run) → command.start (the leaf's
		// exec succeeded); and the CLI's exit after CLI start.
		var m struct {
			CreatedAt time.Time `json:"createdAt"`
		}
		if readJSON(filepath.Join(dir, "run.json"), &m) == nil {
			taken, ok1 := eventTS(dir, "run.start")
			leafAt, ok2 := eventTS(dir, "command.start")
			if ok1 && ok2 {
				for k, p := range [][2]time.Time{{t0, m.CreatedAt}, {m.CreatedAt, taken}, {taken, leafAt}, {t0, t0.Add(d)}} {
					phases[k] = append(phases[k], p[1].Sub(p[0]))
				}
			}
		}
		// CLI start → leaf running: the supervisor's command.start event
		// is written the moment the leaf's exec succeeded, whether before
		// or after the CLI exits; the leaf must still be alive.
		deadline := t0.Add(5 * time.Second)
		for time.Now().Before(deadline) {
			if _, alive := leafOf(dir); alive {
				if ts, ok := eventTS(dir, "command.start"); ok {
					leaf = append(leaf, ts.Sub(t0))
				}
				break
			}
			time.Sleep(200 * time.Microsecond)
		}
	}
	fmt.Printf("ok=%d\nn=%d\n", ok, n)
	fmt.Printf("spawn_median_ms=%s\nspawn_p95_ms=%s\nspawn_max_ms=%s\n", ms(percentile(cli, 50)), ms(percentile(cli, 95)), ms(maxOf(cli)))
	fmt.Printf("leaf_n=%d\nleaf_median_ms=%s\nleaf_p95_ms=%s\n", len(leaf), ms(percentile(leaf, 50)), ms(percentile(leaf, 95)))
	for k, name := range []string{"cli_to_created", "created_to_taken", "taken_to_leaf", "cli_exit"} {
		fmt.Printf("phase_%s_median_ms=%s\n", name, ms(percentile(phases[k], 50)))
	}
}

// eventTS is the ts of the first event of a kind in a run's events.jsonl.
func eventTS(dir, event string) (time.Time, bool) {
	b, err := os.ReadFile(filepath.Join(dir, "events.jsonl"))
	if err != nil {
		return time.Time{}, false
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		var ev struct {
			Event string    `json:"event"`
			TS    time.Time `json:"ts"`
		}
		if json.Unmarshal(line, &ev) == nil && ev.Event == event {
			return ev.TS, true
		}
	}
	return time.Time{}, false
}

// --- batch -----------------------------------------------------------------

// batch: one `spawn -` of n runs. cli_ms is the batch command's wall time
// (every spawn answered status running); running_ms is from its start
// until every run's leaf (`sleep 30`) is recorded and alive.
// BENCH_SPAWN_PARAMS, a JSON object, adds its parameters to every spawn
// (the health-check figures of bench-runs.sh).
func batch(bin, agent string, n int, prefix string) {
	var in bytes.Buffer
	dirs := make([]string, n)
	extra := strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(os.Getenv("BENCH_SPAWN_PARAMS")), "{"), "}"))
	if extra != "" {
		extra = "," + extra
	}
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("%s-%d", prefix, i+1)
		fmt.Fprintf(&in, `{"as":"run:%s","template":"sleep 30"%s}`+"\n", id, extra)
		dirs[i] = filepath.Join(runsRoot(agent), id)
	}
	kpid := kernelPid(agent)
	k0 := cpuNS(kpid)
	t0 := time.Now()
	out, d, err := runCmd([]string{bin, "spawn", "-", "--json"}, in.Bytes(), nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchtool batch:", err)
	}
	k1 := cpuNS(kpid)
	running := 0
	for _, r := range parseResults(out) {
		if r.Result.Status == "running" {
			running++
		}
	}
	pending := map[int]bool{}
	for i := range dirs {
		pending[i] = true
	}
	deadline := t0.Add(20 * time.Second)
	for len(pending) > 0 && time.Now().Before(deadline) {
		for i := range pending {
			if _, alive := leafOf(dirs[i]); alive {
				delete(pending, i)
			}
		}
		if len(pending) > 0 {
			time.Sleep(time.Millisecond)
		}
	}
	all := time.Since(t0)
	fmt.Printf("n=%d\ncli_ms=%s\nreported_running=%d\nleaves_running=%d\n", n, ms(d), running, n-len(pending))
	if kpid > 0 && n > 0 {
		fmt.Printf("kernel_cpu_per_run_ms=%.1f\n", float64(k1-k0)/1e6/float64(n))
	}
	if len(pending) == 0 {
		fmt.Printf("running_ms=%s\n", ms(all))
	} else {
		fmt.Printf("running_ms=NA\n")
	}
}

// --- mem -------------------------------------------------------------------

// mem: PSS and RSS of every live supervisor of prefix-* runs (average and
// max), and of the kernel (pid from kernel.json).
func mem(agent, prefix string) {
	dirs, _ := filepath.Glob(filepath.Join(runsRoot(agent), prefix+"-*"))
	var n, sumPss, sumRss, maxPss, cpu, leafCPU int64
	for _, d := range dirs {
		var m runMeta
		if readJSON(filepath.Join(d, "run.json"), &m) != nil || m.Pid == 0 {
			continue
		}
		if !(proc{m.Pid, m.PidStart}).alive() {
			continue
		}
		rss, pss := memOf(m.Pid)
		if pss == 0 {
			continue
		}
		cpu += cpuNS(m.Pid)
		if l, ok := leafOf(d); ok {
			leafCPU += cpuNS(l.pid)
		}
		n++
		sumPss += pss
		sumRss += rss
		maxPss = max(maxPss, pss)
	}
	fmt.Printf("sup_n=%d\n", n)
	if n > 0 {
		fmt.Printf("sup_pss_avg_kb=%d\nsup_pss_max_kb=%d\nsup_rss_avg_kb=%d\nsup_pss_total_kb=%d\n", sumPss/n, maxPss, sumRss/n, sumPss)
		// CPU each supervisor (start-up, setup, starting its leaf) and each
		// leaf (exec) used so far; both are idle once the leaf runs.
		fmt.Printf("sup_cpu_avg_ms=%.1f\nleaf_cpu_avg_ms=%.1f\n", float64(cpu)/1e6/float64(n), float64(leafCPU)/1e6/float64(n))
	}
	if kp := kernelPid(agent); kp > 0 {
		rss, pss := memOf(kp)
		fmt.Printf("kernel_pid=%d\nkernel_rss_kb=%d\nkernel_pss_kb=%d\n", kp, rss, pss)
	}
}

// kernelPid reads the kernel's pid from <agent>/tmp/pi-actors/kernel.json.
func kernelPid(agent string) int {
	var k struct {
		Pid int `json:"pid"`
	}
	if readJSON(filepath.Join(agent, "tmp", "pi-actors", "kernel.json"), &k) != nil {
		return 0
	}
	return k.Pid
}

// cpuNS is the CPU time a process's live threads have used, in ns, from
// /proc/<pid>/task/*/schedstat (exact; the clock-tick utime/stime of
// /proc/<pid>/stat misses most of a few-millisecond burst).
func cpuNS(pid int) int64 {
	if pid <= 0 {
		return 0
	}
	dir := "/proc/" + strconv.Itoa(pid) + "/task"
	tasks, _ := os.ReadDir(dir)
	var t int64
	for _, e := range tasks {
		b, err := os.ReadFile(dir + "/" + e.Name() + "/schedstat")
		if err != nil {
			continue
		}
		if f := strings.Fields(string(b)); len(f) > 0 {
			n, _ := strconv.ParseInt(f[0], 10, 64)
			t += n
		}
	}
	return t
}

// --- kill ------------------------------------------------------------------

// kill: one `message -` of control.kill to every prefix-* run; cli_ms is
// the batch command's wall time, gone_ms from its start until every
// supervisor and leaf pid has exited, measured while the command runs
// (pidfds opened beforehand, so waiting costs no CPU; a zombie counts as
// exited: it runs nothing; zombies_at_gone says how many were still
// unreaped).
func killBatch(bin, agent, prefix string) {
	dirs, _ := filepath.Glob(filepath.Join(runsRoot(agent), prefix+"-*"))
	sort.Strings(dirs)
	var in bytes.Buffer
	var ps []proc
	for _, d := range dirs {
		var m runMeta
		if readJSON(filepath.Join(d, "run.json"), &m) != nil {
			continue
		}
		fmt.Fprintf(&in, `{"to":"run:%s","type":"control.kill"}`+"\n", filepath.Base(d))
		ps = append(ps, proc{m.Pid, m.PidStart})
		if l, ok := leafOf(d); ok {
			ps = append(ps, l)
		}
	}
	// A pidfd per live process, checked against its start time after
	// opening (so a reused pid is never waited for).
	var fds []unix.PollFd
	for _, p := range ps {
		fd, err := unix.PidfdOpen(p.pid, 0)
		if err != nil {
			continue // already gone
		}
		if !p.alive() {
			unix.Close(fd)
			continue
		}
		fds = append(fds, unix.PollFd{Fd: int32(fd), Events: unix.POLLIN})
	}
	t0 := time.Now()
	type cmdOut struct {
		out []byte
		d   time.Duration
		err error
	}
	res := make(chan cmdOut, 1)
	go func() {
		out, d, err := runCmd([]string{bin, "message", "-", "--json"}, in.Bytes(), nil)
		res <- cmdOut{out, d, err}
	}()
	left := len(fds)
	deadline := t0.Add(20 * time.Second)
	for left > 0 && time.Now().Before(deadline) {
		n, err := unix.Poll(fds, int(time.Until(deadline).Milliseconds())+1)
		if err != nil && !errors.Is(err, unix.EINTR) {
			fatalf("poll pidfds: %v", err)
		}
		if n <= 0 {
			continue
		}
		for i := range fds {
			if fds[i].Fd >= 0 && fds[i].Revents != 0 {
				unix.Close(int(fds[i].Fd))
				fds[i].Fd = -1 // poll ignores negative fds
				left--
			}
		}
	}
	gone := time.Since(t0)
	zombies := 0
	for _, p := range ps {
		if st, ok := statOf(p.pid); ok && st.state == "Z" && (p.start == 0 || st.start == p.start) {
			zombies++
		}
	}
	r := <-res
	if r.err != nil {
		fmt.Fprintln(os.Stderr, "benchtool kill:", r.err)
	}
	okN := bytes.Count(r.out, []byte(`"ok":true`))
	fmt.Printf("runs=%d\npids=%d\nmessages_ok=%d\ncli_ms=%s\nleft=%d\nzombies_at_gone=%d\n", len(dirs), len(ps), okN, ms(r.d), left, zombies)
	if left == 0 {
		fmt.Printf("gone_ms=%s\n", ms(gone))
	} else {
		fmt.Printf("gone_ms=NA\n")
	}
}

// --- gen -------------------------------------------------------------------

// gen writes n terminal run dirs the way a supervisor leaves them:
// run.json (with a template, values and limits) and result.json, across
// a few owner sessions and statuses. No index: the first listing builds it.
func gen(agent string, n int) {
	root := runsRoot(agent)
	base := time.Now().UTC().Add(-time.Duration(n) * time.Second)
	statuses := []string{"done", "done", "done", "failed", "killed", "cancelled"}
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("old-%05d", i)
		dir := filepath.Join(root, id)
		if err := os.MkdirAll(dir, 0o700); err != nil {
			fatalf("gen: %v", err)
		}
		created := base.Add(time.Duration(i) * time.Second)
		// Fields in the order of the supervisor's run.json (runs.Meta).
		meta := struct {
			Run          string         `json:"run"`
			Address      string         `json:"address"`
			StateDir     string         `json:"state_dir"`
			Cwd          string         `json:"cwd"`
			CreatedAt    time.Time      `json:"createdAt"`
			LaunchSource string         `json:"launch_source"`
			OwnerID      string         `json:"ownerId"`
			Pid          int            `json:"pid"`
			PidStart     int            `json:"pid_start_time"`
			Recipe       string         `json:"recipe,omitempty"`
			RecipeFile   string         `json:"recipe_file,omitempty"`
			Tool         string         `json:"tool,omitempty"`
			Template     any            `json:"template"`
			Values       map[string]any `json:"values"`
			Depth        int            `json:"depth"`
			Limits       map[string]any `json:"limits"`
		}{
			Run: id, Address: "run:" + id, StateDir: dir, Cwd: "/work", CreatedAt: created,
			LaunchSource: "spawn", OwnerID: fmt.Sprintf("session-%d", i%20), Pid: 100000 + i, PidStart: 1000 + i,
			Template: map[string]any{"template": fmt.Sprintf("echo run %d && sleep 0.1", i)},
			Values: map[string]any{"run_id": id, "state_dir": dir, "actor_address": "run:" + id, "default_room": "room:" + id,
				"communication_file": filepath.Join(dir, "communication.json")},
			Depth: 1, Limits: map[string]any{"max_parallel": 64, "max_leaves": 10000, "kill_grace_ms": 5000, "log_max_bytes": 10485760, "log_keep": 1},
		}
		if i%3 == 0 {
			meta.Recipe, meta.RecipeFile, meta.Tool = "utility-git-status", "/home/u/.pi/agent/recipes/utility-git-status.json", "utility-git-status"
			meta.LaunchSource = "tool"
		}
		st := statuses[i%len(statuses)]
		code := 0
		switch st {
		case "failed":
			code = 1
		case "killed":
			code = 137
		}
		// Fields in the order of the supervisor's result.json (runs.Result).
		res := struct {
			Status      string    `json:"status"`
			Code        int       `json:"code"`
			Command     string    `json:"command,omitempty"`
			Killed      bool      `json:"killed"`
			CompletedAt time.Time `json:"completedAt"`
			Run         string    `json:"run,omitempty"`
			OwnerID     string    `json:"ownerId,omitempty"`
			Recipe      string    `json:"recipe,omitempty"`
			Tool        string    `json:"tool,omitempty"`
		}{Status: st, Code: code, Command: fmt.Sprintf("echo run %d && sleep 0.1", i), Killed: st == "killed",
			CompletedAt: created.Add(150 * time.Millisecond), Run: id, OwnerID: meta.OwnerID, Recipe: meta.Recipe, Tool: meta.Tool}
		for name, v := range map[string]any{"run.json": meta, "result.json": res} {
			b, _ := json.MarshalIndent(v, "", "  ")
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
				fatalf("gen: %v", err)
			}
		}
	}
	fmt.Printf("generated=%d\n", n)
}

// --- time ------------------------------------------------------------------

// timeCmd runs cmd once (first_ms) and n more times (warm median/p95),
// stdout read through a pipe as an agent would; count= is the "count" of
// the first run's JSON answer, when it has one.
func timeCmd(n int, cmd []string) {
	out, first, err := runCmd(cmd, nil, nil)
	if err != nil {
		fatalf("%v", err)
	}
	var ans struct {
		Result struct {
			Count *int `json:"count"`
		} `json:"result"`
	}
	if json.Unmarshal(out, &ans) == nil && ans.Result.Count != nil {
		fmt.Printf("count=%d\n", *ans.Result.Count)
	}
	fmt.Printf("bytes=%d\n", len(out))
	var warm []time.Duration
	for i := 0; i < n; i++ {
		_, d, err := runCmd(cmd, nil, nil)
		if err != nil {
			fatalf("%v", err)
		}
		warm = append(warm, d)
	}
	fmt.Printf("first_ms=%s\nwarm_median_ms=%s\nwarm_p95_ms=%s\n", ms(first), ms(percentile(warm, 50)), ms(percentile(warm, 95)))
}

// --- followup --------------------------------------------------------------

// followup: `pi-actors watch` runs for a fresh session; then, one at a
// time, n runs of `sleep 0.2` owned by that session are spawned. For each:
// the leaf's exit (events.jsonl command.done ts), result.json completedAt,
// the follow-up's ts and queued_at (session queue file) and the moment the
// watch printed it.
func followup(bin, agent string, n int) {
	session := fmt.Sprintf("bench-fu-%d", os.Getpid())
	env := append(os.Environ(), "PI_ACTORS_SESSION="+session)
	w := exec.Command(bin, "watch")
	w.Env = env
	stdout, err := w.StdoutPipe()
	if err != nil {
		fatalf("followup: %v", err)
	}
	w.Stderr = os.Stderr
	if err := w.Start(); err != nil {
		fatalf("followup: %v", err)
	}
	defer func() {
		w.Process.Kill()
		w.Wait()
	}()
	type seen struct {
		run string
		at  time.Time
	}
	lines := make(chan seen, 64)
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			at := time.Now()
			var f struct {
				Run string `json:"run"`
			}
			if json.Unmarshal(sc.Bytes(), &f) == nil {
				lines <- seen{f.Run, at}
			}
		}
		close(lines)
	}()
	// The watch CLI swallows the kernel's "watching" answer; give it time
	// to subscribe (a late subscriber still gets every follow-up, queued
	// durably, but its receive time would be late).
	time.Sleep(300 * time.Millisecond)
	var queued, delivered, result []time.Duration
	for i := 1; i <= n; i++ {
		id := fmt.Sprintf("fu-%d", i)
		out, _, err := runCmd([]string{bin, "spawn", "as=run:" + id, "template=sleep 0.2", "--json"}, nil, env)
		if err != nil {
			fmt.Fprintln(os.Stderr, "benchtool followup:", err)
			continue
		}
		if rs := parseResults(out); len(rs) != 1 || rs[0].Result.Status != "running" {
			fmt.Fprintf(os.Stderr, "benchtool followup: %s: unexpected answer %s\n", id, out)
			continue
		}
		var got seen
		timeout := time.After(5 * time.Second)
	wait:
		for {
			select {
			case s, ok := <-lines:
				if !ok {
					fatalf("followup: watch ended")
				}
				if s.run == id {
					got = s
					break wait
				}
			case <-timeout:
				fmt.Fprintf(os.Stderr, "benchtool followup: no follow-up for %s within 5 s\n", id)
				break wait
			}
		}
		if got.run == "" {
			continue
		}
		dir := filepath.Join(runsRoot(agent), id)
		exit, ok := leafExit(dir)
		if !ok {
			fmt.Fprintf(os.Stderr, "benchtool followup: %s: no command.done event\n", id)
			continue
		}
		var res struct {
			CompletedAt time.Time `json:"completedAt"`
		}
		if readJSON(filepath.Join(dir, "result.json"), &res) == nil {
			result = append(result, res.CompletedAt.Sub(exit))
		}
		if ts, ok := queuedAt(filepath.Join(agent, "tmp", "pi-actors", "sessions", session+".jsonl"), id); ok {
			queued = append(queued, ts.Sub(exit))
		}
		delivered = append(delivered, got.at.Sub(exit))
	}
	fmt.Printf("n=%d\nsamples=%d\n", n, len(delivered))
	fmt.Printf("result_median_ms=%s\nresult_max_ms=%s\n", ms(percentile(result, 50)), ms(maxOf(result)))
	fmt.Printf("queued_median_ms=%s\nqueued_max_ms=%s\nqueued_samples=%d\n", ms(percentile(queued, 50)), ms(maxOf(queued)), len(queued))
	fmt.Printf("watch_median_ms=%s\nwatch_max_ms=%s\n", ms(percentile(delivered, 50)), ms(maxOf(delivered)))
}

// leafExit is the ts of the run's command.done event.
func leafExit(dir string) (time.Time, bool) { return eventTS(dir, "command.done") }

// queuedAt finds the follow-up of run in a session queue: the later of
// its queued_at and body.ts (both are set when it is queued).
func queuedAt(path, run string) (time.Time, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return time.Time{}, false
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		var rec struct {
			QueuedAt time.Time `json:"queued_at"`
			Body     struct {
				Run  string    `json:"run"`
				Kind string    `json:"kind"`
				TS   time.Time `json:"ts"`
			} `json:"body"`
		}
		if json.Unmarshal(line, &rec) != nil || rec.Body.Run != run || rec.Body.Kind != "transition" {
			continue
		}
		t := rec.QueuedAt
		if rec.Body.TS.After(t) {
			t = rec.Body.TS
		}
		return t, true
	}
	return time.Time{}, false
}

// --- supervisord side ------------------------------------------------------

// startWait runs cmd (e.g. `supervisorctl start all`); cli_ms is its wall
// time, running_ms from its start until parent has n live descendants
// named comm.
func startWait(parent int, comm string, n int, cmd []string) {
	t0 := time.Now()
	_, d, err := runCmd(cmd, nil, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchtool startwait:", err)
	}
	got := 0
	deadline := t0.Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if got = len(descendants(parent, comm)); got >= n {
			break
		}
		time.Sleep(time.Millisecond)
	}
	all := time.Since(t0)
	fmt.Printf("cli_ms=%s\nrunning=%d\n", ms(d), got)
	if got >= n {
		fmt.Printf("running_ms=%s\n", ms(all))
	} else {
		fmt.Printf("running_ms=NA\n")
	}
}

// stopWait runs cmd; cli_ms is its wall time, gone_ms from its start until
// every pid listed in pidfile (one per line) has exited.
func stopWait(pidfile string, cmd []string) {
	b, err := os.ReadFile(pidfile)
	if err != nil {
		fatalf("stopwait: %v", err)
	}
	var ps []proc
	for _, f := range strings.Fields(string(b)) {
		pid := atoi(f)
		st, ok := statOf(pid)
		if !ok {
			continue
		}
		ps = append(ps, proc{pid, st.start})
	}
	t0 := time.Now()
	_, d, err := runCmd(cmd, nil, nil)
	if err != nil && !errors.Is(err, exec.ErrNotFound) {
		fmt.Fprintln(os.Stderr, "benchtool stopwait:", err)
	}
	deadline := t0.Add(30 * time.Second)
	for anyAlive(ps) > 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	gone := time.Since(t0)
	left := anyAlive(ps)
	fmt.Printf("pids=%d\ncli_ms=%s\nleft=%d\n", len(ps), ms(d), left)
	if left == 0 {
		fmt.Printf("gone_ms=%s\n", ms(gone))
	} else {
		fmt.Printf("gone_ms=NA\n")
	}
}
