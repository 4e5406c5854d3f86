// Command topbench measures `pi-actors top` against a live kernel, for
// scripts/bench-top.sh. It prints key=value lines.
//
//	topbench cpu <pid> <seconds>       the CPU share of a process over a window
//	topbench stream <agent> <seconds>  read the kernel's runs stream with top's
//	                                   own model and render 80×24 frames: the
//	                                   first frame's latency, frames and rows
//	                                   received, the time per frame (apply +
//	                                   render) and the frames/s it allows, and
//	                                   the kernel's CPU meanwhile
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/pi-actors/pi-actors/verbs"
	"github.com/pi-actors/pi-actors/verbs/top"
)

func main() {
	if len(os.Args) != 4 {
		fatalf("usage: topbench cpu <pid> <seconds> | topbench stream <agent> <seconds>")
	}
	secs, err := strconv.ParseFloat(os.Args[3], 64)
	if err != nil || secs <= 0 {
		fatalf("seconds: %q", os.Args[3])
	}
	window := time.Duration(secs * float64(time.Second))
	switch os.Args[1] {
	case "cpu":
		pid, _ := strconv.Atoi(os.Args[2])
		before, start := cpuNS(pid), time.Now()
		time.Sleep(window)
		fmt.Printf("cpu_pct=%.2f\n", pct(cpuNS(pid)-before, time.Since(start)))
	case "stream":
		stream(os.Args[2], window)
	default:
		fatalf("unknown subcommand %q", os.Args[1])
	}
}

func fatalf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "topbench: "+format+"\n", args...)
	os.Exit(2)
}

// pct is CPU time as a share of one core over wall.
func pct(cpu int64, wall time.Duration) float64 {
	return 100 * float64(cpu) / float64(wall.Nanoseconds())
}

// cpuNS is the CPU time of a process's threads (schedstat, ns).
func cpuNS(pid int) int64 {
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

func kernelPid(agent string) int {
	var k struct {
		Pid int `json:"pid"`
	}
	b, err := os.ReadFile(filepath.Join(agent, "tmp", "pi-actors", "kernel.json"))
	if err != nil || json.Unmarshal(b, &k) != nil {
		return 0
	}
	return k.Pid
}

func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

// stream reads the runs stream as top does for window, rendering a frame
// for every frame received and at 10 frames/s between them.
func stream(agent string, window time.Duration) {
	env, err := verbs.NewEnv()
	if err != nil {
		fatalf("%v", err)
	}
	env.AgentDir, env.Session = agent, ""
	kpid := kernelPid(agent)
	if kpid == 0 {
		fatalf("no kernel for %s", agent)
	}
	frames := make(chan *verbs.EventsFrame, 1024)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	t0 := time.Now()
	go func() {
		err := verbs.StreamEvents(ctx, env, &verbs.Events{}, func(f *verbs.EventsFrame) error {
			frames <- f
			return nil
		})
		if err != nil && ctx.Err() == nil {
			fatalf("stream: %v", err)
		}
	}()
	m := top.New(env, 80, 24, true)
	first := <-frames
	firstMS := time.Since(t0).Milliseconds()
	m.Apply(first)
	m.Render()
	var per []time.Duration
	received, rows := 0, []int{}
	k0, s0, start := cpuNS(kpid), cpuNS(os.Getpid()), time.Now()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(window)
	for done := false; !done; {
		select {
		case f := <-frames:
			received++
			rows = append(rows, len(f.Runs))
			t := time.Now()
			m.Apply(f)
			m.Render()
			per = append(per, time.Since(t))
		case <-tick.C:
			t := time.Now()
			m.Render()
			per = append(per, time.Since(t))
		case <-deadline:
			done = true
		}
	}
	wall := time.Since(start)
	kcpu, scpu := cpuNS(kpid)-k0, cpuNS(os.Getpid())-s0
	slices.Sort(rows)
	medRows := 0
	if len(rows) > 0 {
		medRows = rows[len(rows)/2]
	}
	med := median(per)
	fmt.Printf("first_frame_ms=%d\nsnapshot_runs=%d\nframes_received=%d\nframes_received_per_s=%.1f\nrows_per_frame_median=%d\n",
		firstMS, len(first.Runs), received, float64(received)/wall.Seconds(), medRows)
	fmt.Printf("frames_drawn=%d\nframe_ms_median=%.3f\nframe_ms_max=%.3f\nframes_per_s_possible=%.0f\n",
		len(per), float64(med.Microseconds())/1000, float64(slices.Max(append(per, 0)).Microseconds())/1000, float64(time.Second)/float64(max(med, time.Microsecond)))
	fmt.Printf("kernel_cpu_pct=%.2f\ntop_cpu_pct=%.2f\n", pct(kcpu, wall), pct(scpu, wall))
}
