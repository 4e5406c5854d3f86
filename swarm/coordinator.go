package swarm

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/pi-actors/pi-actors/internal/fsutil"
	"github.com/pi-actors/pi-actors/rooms"
	"github.com/pi-actors/pi-actors/runs"
	"github.com/pi-actors/pi-actors/verbs"
)

// SummaryFile is the coordinator's report in its state dir.
const SummaryFile = "swarm-summary.json"

// defaultTask is a task when no task_file is given: n squared.
var defaultTask = "expr {n} * {n}"

// Summary is swarm-summary.json.
type Summary struct {
	Tasks      int            `json:"tasks"`
	Done       int            `json:"done"`
	Failed     int            `json:"failed"`
	Duplicates []string       `json:"duplicates"`
	Missing    []string       `json:"missing"`
	ByWorker   map[string]int `json:"by_worker"`
	Runs       []string       `json:"runs"`
	Seconds    float64        `json:"seconds"`
}

// coordinator runs one room swarm.
type coordinator struct {
	*actor
	workers   int
	lease     int
	poll      int
	timeout   time.Duration
	tasks     []map[string]any // {id, task: {template, values}}
	lockerRun string
	workerIDs []string
}

// Coordinate runs the room-swarm: a locker and N actor-workers in this
// run's room split the tasks; it returns once every task has a
// task.result in the room timeline (or timeout_s passed) and every run
// it started has ended. Parameters: tasks (30), workers (3), lease_ms
// (600000), poll_ms (the workers', 200), timeout_s (120), task_file (a
// JSON-lines file of tasks {id?, template, values?}, or one template per
// line; default n squared for n = 1..tasks).
func Coordinate(ctx context.Context, env *verbs.Env, o Options) error {
	if err := o.check("coordinate", "tasks", "workers", "lease_ms", "poll_ms", "timeout_s", "task_file"); err != nil {
		return err
	}
	a, err := newActor(env)
	if err != nil {
		return err
	}
	c := &coordinator{actor: a}
	n, err := o.int("tasks", 30)
	if err != nil {
		return err
	}
	if c.workers, err = o.int("workers", 3); err != nil {
		return err
	}
	if c.lease, err = o.int("lease_ms", 600000); err != nil {
		return err
	}
	if c.poll, err = o.int("poll_ms", 200); err != nil {
		return err
	}
	secs, err := o.int("timeout_s", 120)
	if err != nil {
		return err
	}
	if n < 1 || c.workers < 1 || secs < 1 {
		return usagef("tasks, workers and timeout_s must be at least 1")
	}
	c.timeout = time.Duration(secs) * time.Second
	if c.tasks, err = loadTasks(o.str("task_file", ""), n); err != nil {
		return err
	}
	c.lockerRun = a.run + "-locker"
	return c.drive(ctx)
}

// loadTasks reads task_file, or makes n default tasks. Each task is
// enqueued under its id, so ids are unique: a second task of one id was
// dropped as a retry of the first (and the swarm waited out its timeout
// for it), and a task without an id never takes one the file names.
func loadTasks(path string, n int) ([]map[string]any, error) {
	type entry struct {
		line   int
		id     string
		tmpl   any
		values map[string]any
	}
	var list []entry
	if path == "" {
		for i := 1; i <= n; i++ {
			list = append(list, entry{tmpl: defaultTask, values: map[string]any{"n": i}})
		}
	} else {
		f, err := os.Open(path)
		if err != nil {
			return nil, usagef("task_file: %v", err)
		}
		defer f.Close()
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for ln := 1; sc.Scan(); ln++ {
			line := strings.TrimSpace(sc.Text())
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			if !strings.HasPrefix(line, "{") {
				list = append(list, entry{line: ln, tmpl: line})
				continue
			}
			var t struct {
				ID       string         `json:"id"`
				Template any            `json:"template"`
				Values   map[string]any `json:"values"`
			}
			if err := json.Unmarshal([]byte(line), &t); err != nil || t.Template == nil {
				return nil, usagef("task_file %s: %q is not {id?, template, values?}", path, cutText(line, 80))
			}
			list = append(list, entry{line: ln, id: t.ID, tmpl: t.Template, values: t.Values})
		}
		if err := sc.Err(); err != nil {
			return nil, err
		}
		if len(list) == 0 {
			return nil, usagef("task_file %s has no tasks", path)
		}
	}
	named := map[string]int{} // id → its line
	for _, e := range list {
		if e.id == "" {
			continue
		}
		if at, dup := named[e.id]; dup {
			return nil, usagef("task_file %s: task id %q is on line %d and line %d; give each task an id of its own", path, e.id, at, e.line)
		}
		named[e.id] = e.line
	}
	out := make([]map[string]any, 0, len(list))
	for i, e := range list {
		id := e.id
		if id == "" {
			id = fmt.Sprintf("task-%02d", i+1)
			for _, taken := named[id]; taken; _, taken = named[id] {
				id += "_"
			}
			named[id] = e.line
		}
		out = append(out, map[string]any{"id": id, "task": map[string]any{"template": e.tmpl, "values": e.values}})
	}
	return out, nil
}

// drive is the swarm from start to end.
func (c *coordinator) drive(ctx context.Context) error {
	start := c.clock()
	cur, err := rooms.NewCursor(string(c.dir), "")
	if err != nil {
		return err
	}
	c.say(fmt.Sprintf("swarm: %d tasks for %d workers through a locker", len(c.tasks), c.workers))
	if err := c.spawn(c.lockerRun, "locker", map[string]any{"lease_ms": c.lease}); err != nil {
		return err
	}
	for _, t := range c.tasks {
		if _, err := c.send(&verbs.Message{To: "run:" + c.lockerRun, Type: "lock.enqueue", From: c.self, ID: "enqueue-" + t["id"].(string), Body: body(t)}); err != nil {
			return err
		}
	}
	for i := 1; i <= c.workers; i++ {
		id := fmt.Sprintf("%s-w%d", c.run, i)
		vals := map[string]any{"room": c.run, "branch": fmt.Sprintf("w%d", i), "locker": c.lockerRun, "poll_ms": c.poll, "notify_coordinator": false}
		if err := c.spawn(id, "actor-worker", vals); err != nil {
			return err
		}
		c.workerIDs = append(c.workerIDs, id)
	}
	sum := c.await(ctx, cur)
	sum.Seconds = c.clock().Sub(start).Seconds()
	sum.Runs = append([]string{"run:" + c.lockerRun}, prefixed("run:", c.workerIDs)...)
	if err := fsutil.WriteJSON(c.dir.Path(SummaryFile), sum, 0o600); err != nil {
		return err
	}
	text := fmt.Sprintf("swarm done: %d/%d tasks, %d failed, %d duplicates, by worker %s", sum.Done, sum.Tasks, sum.Failed, len(sum.Duplicates), byWorker(sum.ByWorker))
	c.say(text)
	c.stopAll()
	if _, err := c.send(&verbs.Message{To: "coordinator", Type: "swarm.done", From: c.self, Summary: verbs.Text(text), Body: body(sum)}); err != nil {
		fmt.Fprintln(os.Stderr, "coordinate:", err)
	}
	fmt.Println(text)
	if sum.Done != sum.Tasks || len(sum.Duplicates) > 0 {
		return fmt.Errorf("swarm incomplete: %s (missing %v)", text, sum.Missing)
	}
	return nil
}

// spawn starts a packaged recipe as a run of this session.
func (c *coordinator) spawn(id, recipe string, values map[string]any) error {
	var res verbs.SpawnResult
	if err := c.env.Call("spawn", &verbs.Spawn{Recipe: recipe, RunID: id, Values: values}, &res); err != nil {
		return fmt.Errorf("spawn %s as run:%s: %w", recipe, id, err)
	}
	return nil
}

// say posts a chat.message to the room.
func (c *coordinator) say(text string) {
	if _, err := c.send(&verbs.Message{To: "room:" + c.run, Type: "chat.message", From: c.self, Summary: verbs.Text(text), Body: body(text)}); err != nil {
		fmt.Fprintln(os.Stderr, "coordinate:", err)
	}
}

// await follows the room until every task has a task.result or the
// timeout passes.
func (c *coordinator) await(ctx context.Context, cur *rooms.Cursor) Summary {
	sum := Summary{Tasks: len(c.tasks), ByWorker: map[string]int{}, Duplicates: []string{}, Missing: []string{}}
	for i := 1; i <= c.workers; i++ {
		sum.ByWorker[fmt.Sprintf("w%d", i)] = 0 // a worker that did nothing shows as w3=0
	}
	seen := map[string]bool{}
	fw := watcher(rooms.RoomDir(string(c.dir)))
	if fw != nil {
		defer fw.Close()
	}
	deadline := c.clock().Add(c.timeout)
	for len(seen) < len(c.tasks) && ctx.Err() == nil && c.clock().Before(deadline) {
		entries, _ := cur.Next()
		for _, e := range entries {
			if e.Type != "task.result" {
				continue
			}
			b, _ := e.Body.(map[string]any)
			id, _ := b["id"].(string)
			if seen[id] {
				sum.Duplicates = append(sum.Duplicates, id)
				continue
			}
			seen[id] = true
			sum.ByWorker[strings.TrimPrefix(e.From, "branch:"+c.run+"/")]++
			if code := fmt.Sprint(b["code"]); code != "0" {
				sum.Failed++
			}
		}
		if len(entries) == 0 {
			waitChange(ctx, fw, 100*time.Millisecond)
		}
	}
	sum.Done = len(seen)
	for _, t := range c.tasks {
		if id := t["id"].(string); !seen[id] {
			sum.Missing = append(sum.Missing, id)
		}
	}
	return sum
}

// stopAll asks every worker to leave (control.kill to its branch) and
// the locker to stop, then kills whatever has not ended within 5 s.
func (c *coordinator) stopAll() {
	for i := range c.workerIDs {
		c.send(&verbs.Message{To: fmt.Sprintf("branch:%s/w%d", c.run, i+1), Type: "control.kill", From: c.self, Summary: "the swarm is done"})
	}
	c.send(&verbs.Message{To: "run:" + c.lockerRun, Type: "control.stop", From: c.self})
	all := append([]string{c.lockerRun}, c.workerIDs...)
	deadline := c.clock().Add(5 * time.Second)
	for _, id := range all {
		for !c.ended(id) && c.clock().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if !c.ended(id) {
			c.send(&verbs.Message{To: "run:" + id, Type: "control.kill", From: c.self})
		}
	}
}

// ended reports whether a run is over.
func (c *coordinator) ended(id string) bool {
	in, err := runs.Access(c.env.AgentDir, id, c.env.Session)
	return err != nil || runs.Terminal(in.Status)
}

func prefixed(p string, ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = p + id
	}
	return out
}

// byWorker renders counts as w1=10,w2=11,….
func byWorker(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%d", k, m[k])
	}
	return strings.Join(parts, ",")
}
