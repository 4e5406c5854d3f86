package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/pi-actors/pi-actors/internal/config"
	"github.com/pi-actors/pi-actors/internal/lazyre"
	"github.com/pi-actors/pi-actors/mailbox"
	"github.com/pi-actors/pi-actors/runs"
)

// The steps of the demo tour, in order.

// tour is the demo itself, step by step.
func (d *demo) tour() error {
	d.printf("pi-actors demo: a guided tour of supervised runs (about 8 s)\n\n")
	d.printf("Everything below runs in a private agent root, written $DEMO, with its own kernel;\n")
	d.printf("the demo stops all of it at the end and removes $DEMO.\n")
	d.printf("Each step shows the command it ran and what the command printed (long lines wrapped,\n")
	d.printf("their next= hints left out). The runs work in $DEMO, next to their scripts.\n")
	d.printf("  $DEMO   = %s\n", d.root)
	d.printf("  session = %s   (the coordinator session: the runs belong to it and report to it)\n", d.session)

	for name, text := range map[string]string{"service.sh": demoServiceScript, "worker.sh": demoWorkerScript, config.FileName: demoConfig} {
		if err := os.WriteFile(filepath.Join(d.root, name), []byte(text), 0o600); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
	}

	steps := []func() error{d.stepKernel, d.stepService, d.stepFanout, d.stepWorker, d.stepDoomed, d.stepStop, d.stepSwarm, d.stepMemory, d.stepFollowups}
	for _, s := range steps {
		if err := d.ctx.Err(); err != nil {
			return err
		}
		if err := s(); err != nil {
			return err
		}
	}
	return nil
}

func (d *demo) stepKernel() error {
	d.header("Start the kernel.",
		"One kernel per agent root hosts the run actors and each session's follow-up queue.",
		"Any verb that needs it starts it; here we start it explicitly.")
	_, err := d.show("kernel", "start")
	return err
}

func (d *demo) stepService() error {
	d.header("A service with a restart policy.",
		"service.sh crashes on its first start (exit 3) and stays up from the second one on. Its",
		"restart policy (on-failure, 200 ms backoff) lets its supervisor bring it back. (sh is the",
		"run's program here: pi-actors itself never runs anything through a shell.)")
	if _, err := d.show("spawn", "as=run:service", "template=sh service.sh {state_dir}",
		`restart:={"policy":"on-failure","backoff_ms":200}`); err != nil {
		return err
	}
	if _, err := d.show("inspect", "target=run:service", "view=status"); err != nil {
		return err
	}
	d.note("… half a second later it crashes; the supervisor waits 200 ms and starts it again:")
	dir := runs.StateDirFor(d.root, "service")
	err := d.waitFor("run:service to be up again after its crash", func() bool {
		in, err := runs.Load(dir)
		if err != nil || in.Status != runs.StatusRunning || in.Progress == nil || in.Progress.Restarts < 1 || in.Progress.Phase != runs.StatusRunning {
			return false
		}
		data, _ := os.ReadFile(dir.Path(runs.StdoutLog))
		return bytes.Contains(data, []byte("second start"))
	})
	if err != nil {
		return err
	}
	if _, err := d.show("inspect", "target=run:service", "view=status"); err != nil {
		return err
	}
	args := []string{"inspect", "target=run:service", "view=events"}
	out, code := d.capture(args...)
	d.command(args, condenseEvents(d.abbrev(out)), "(each JSON line shown as its event and key fields)")
	if code != exitOK {
		return d.failed(args, code)
	}
	if _, err := d.show("inspect", "target=run:service", "view=tail"); err != nil {
		return err
	}
	if err := d.waitSettled("service", false); err != nil {
		return err
	}
	d.note("Your session was told about the crash, with a follow-up (reading them drains the queue):")
	return d.showFollowups()
}

func (d *demo) stepFanout() error {
	d.header("A parallel fan-out.",
		"Four branches of one command run at the same time: branch i sleeps (5-i)/10 s, then prints a",
		"line, so they finish in reverse order, and the run takes about 0.4 s, not the 1 s its sleeps",
		"add up to. The run is done when all four branches are.")
	if _, err := d.show("spawn", "as=run:fanout", "parallel:=true", "repeat:=4",
		`template=sh -c "sleep 0.$1; echo branch $2 finished" sh {4-index} {index+1}`); err != nil {
		return err
	}
	if err := d.waitSettled("fanout", true); err != nil {
		return err
	}
	if _, err := d.show("inspect", "target=run:fanout", "view=status"); err != nil {
		return err
	}
	if _, err := d.show("inspect", "target=run:fanout", "view=tail"); err != nil {
		return err
	}
	d.note("Each branch that finished while others still ran was reported at once, then the run's end:")
	return d.showFollowups()
}

func (d *demo) stepWorker() error {
	d.header("A script actor fed through its mailbox.",
		"worker.sh loops on `pi-actors mailbox claim`: for each task.assign message it sums 1..N",
		"and reports the result to its coordinator (`pi-actors message to=coordinator`). It exits",
		"once its mailbox has stayed empty for 2 s.")
	if _, err := d.show("spawn", "as=run:worker", "template=sh worker.sh {pa}",
		`values:={"pa":`+strconv.Quote(d.self)+`}`); err != nil {
		return err
	}
	for _, n := range []string{"10", "100"} {
		if _, err := d.show("message", "to=run:worker", "type=task.assign", "body="+n); err != nil {
			return err
		}
	}
	dir := runs.StateDirFor(d.root, "worker")
	err := d.waitFor("run:worker to handle both tasks", func() bool {
		recs, _, err := mailbox.NewInbox(dir.Path(runs.InboxFile)).List(10)
		handled := 0
		for _, rec := range recs {
			if rec.Status() == mailbox.StatusHandled {
				handled++
			}
		}
		return err == nil && handled == 2
	})
	if err != nil {
		return err
	}
	if _, err := d.show("inspect", "target=run:worker", "view=mailbox"); err != nil {
		return err
	}
	d.note("… its mailbox stays empty for 2 s, so it exits:")
	if err := d.waitSettled("worker", true); err != nil {
		return err
	}
	if _, err := d.show("inspect", "target=run:worker", "view=tail"); err != nil {
		return err
	}
	d.note("Its results reached your session as follow-ups:")
	return d.showFollowups()
}

func (d *demo) stepDoomed() error {
	d.header("A run that is killed.",
		"control.kill SIGKILLs every process the run started, and its supervisor, at once.")
	if _, err := d.show("spawn", "as=run:doomed", "template=sleep 600"); err != nil {
		return err
	}
	dir := runs.StateDirFor(d.root, "doomed")
	var leaf runs.Leaf
	err := d.waitFor("run:doomed to start sleep", func() bool {
		p := dir.Progress()
		if p == nil || len(p.Leaves) == 0 {
			return false
		}
		leaf = p.Leaves[0]
		return true
	})
	if err != nil {
		return err
	}
	meta, err := dir.Meta()
	if err != nil {
		return err
	}
	if _, err := d.show("inspect", "target=run:doomed", "view=status"); err != nil {
		return err
	}
	if _, err := d.show("message", "to=run:doomed", "type=control.kill"); err != nil {
		return err
	}
	gone := func(pid int, start uint64) bool {
		deadline := time.Now().Add(2 * time.Second)
		for runs.Alive(pid, start) {
			if time.Now().After(deadline) {
				return false
			}
			time.Sleep(10 * time.Millisecond)
		}
		return true
	}
	if !gone(leaf.Pid, leaf.Start) {
		return fmt.Errorf("run:doomed was killed but its process %d (sleep 600) is still running", leaf.Pid)
	}
	if !gone(meta.Pid, meta.PidStart) {
		return fmt.Errorf("run:doomed was killed but its supervisor %d is still running", meta.Pid)
	}
	// The supervisor has written its last word: the status is final.
	if _, err := d.show("inspect", "target=run:doomed", "view=status"); err != nil {
		return err
	}
	d.note(fmt.Sprintf("checked: sleep 600 (pid %d) is gone, and so is the run's supervisor (pid %d).", leaf.Pid, meta.Pid))
	return nil
}

func (d *demo) stepStop() error {
	d.header("Stop the service.",
		"control.cancel sends SIGTERM (SIGKILL after a grace period); service.sh traps it and exits",
		"cleanly. Then the session's runs, as they ended:")
	if _, err := d.show("message", "to=run:service", "type=control.cancel"); err != nil {
		return err
	}
	_, err := d.show("inspect", "target=coordinator", "view=runs")
	return err
}

func (d *demo) stepSwarm() error {
	d.header("A room swarm.",
		"The packaged room-swarm recipe coordinates without an LLM: its run starts a locker (a",
		"lease-based task queue) and three actor-workers in its room, enqueues 30 small tasks (n squared),",
		"waits until each task has its one result in the room, then stops every run it started.")
	if _, err := d.show("spawn", "as=run:swarm", "recipe=room-swarm", `values:={"tasks":30,"workers":3,"poll_ms":100}`); err != nil {
		return err
	}
	dir := runs.StateDirFor(d.root, "swarm")
	err := d.waitFor("run:swarm and the runs it started to finish", func() bool {
		for _, id := range []string{"swarm", "swarm-locker", "swarm-w1", "swarm-w2", "swarm-w3"} {
			in, err := runs.Load(runs.StateDirFor(d.root, id))
			if err != nil || !runs.Terminal(in.Status) {
				return false
			}
		}
		return dir.Exists(runs.ResultFile)
	})
	if err != nil {
		return err
	}
	if _, err := d.show("inspect", "target=run:swarm", "view=tail", "lines=1"); err != nil {
		return err
	}
	if _, err := d.show("inspect", "target=room:swarm", "view=status"); err != nil {
		return err
	}
	d.note("The end of the conversation in the room (every task.claim and task.result is there):")
	if _, err := d.show("inspect", "target=room:swarm", "view=previews", "lines=6"); err != nil {
		return err
	}
	if err := d.waitSettled("swarm", true); err != nil {
		return err
	}
	d.note("The swarm and the runs it stopped reported to your session:")
	return d.showFollowups()
}

func (d *demo) stepFollowups() error {
	d.header("The follow-up queue.",
		fmt.Sprintf("Your session received %d follow-ups, each shown above as it arrived. Runs stopped on", d.followups),
		"purpose (run:doomed, run:service) raise none, so once the kernel has seen every run end,",
		"the queue is empty:")
	// A run's last follow-ups are queued when the kernel sees its
	// supervisor exit; wait until no run is live.
	err := d.waitFor("the kernel to see every run end", func() bool {
		out, code := d.capture("kernel", "status", "--json")
		var env struct {
			Result struct {
				LiveRuns float64 `json:"live_runs"`
			} `json:"result"`
		}
		return code == exitOK && json.Unmarshal([]byte(out), &env) == nil && env.Result.LiveRuns == 0
	})
	if err != nil {
		return err
	}
	return d.showFollowups()
}

// waitSettled waits until the kernel has queued the follow-ups of what the
// run reported so far and, with ended, of the run's end: notified.json
// records how far it got.
func (d *demo) waitSettled(run string, ended bool) error {
	dir := runs.StateDirFor(d.root, run)
	what := "the kernel to take in run:" + run + "'s reports"
	if ended {
		what = "run:" + run + " to finish"
	}
	return d.waitFor(what, func() bool {
		var n struct {
			OutboxLines int    `json:"outbox_lines"`
			Terminal    string `json:"terminal"`
		}
		lines, err := mailbox.Read(dir.Path(runs.OutboxFile))
		if err != nil || dir.ReadJSON(runs.NotifiedFile, &n) != nil || n.OutboxLines < len(lines) {
			return false
		}
		if !ended {
			return true
		}
		in, err := runs.Load(dir)
		return err == nil && runs.Terminal(in.Status) && (n.Terminal != "" || in.Handled != nil)
	})
}

func (d *demo) showFollowups() error {
	// All of them: the view takes 50 by default and the swarm step queues
	// more than that on a busy machine.
	args := []string{"inspect", "target=coordinator", "view=followups", "lines=1000"}
	out, code := d.capture(args...)
	text, note := condenseFollowups(out)
	d.command(args, text, note)
	if code != exitOK {
		return d.failed(args, code)
	}
	if m := followupsRe.FindStringSubmatch(out); m != nil {
		n, _ := strconv.Atoi(m[1])
		d.followups += n
	}
	return nil
}

// followupsRe finds the count in the first line of view=followups.
var followupsRe = lazyre.New(`(?m)^session=\S+ followups=(\d+)`)
