package swarm

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A task file's ids are unique: a second task of one id is refused (it was
// enqueued under the same id, dropped as a retry, and the swarm waited
// out its timeout for it), and a task without an id never takes an id the
// file names.
func TestLoadTasksIDs(t *testing.T) {
	write := func(lines ...string) string {
		p := filepath.Join(t.TempDir(), "tasks.jsonl")
		if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	_, err := loadTasks(write(`{"id":"a","template":"echo a"}`, `{"id":"a","template":"echo a2"}`), 0)
	if !errors.Is(err, ErrUsage) || !strings.Contains(err.Error(), `task id "a" is on line 1 and line 2`) {
		t.Fatalf("duplicate ids: %v", err)
	}
	tasks, err := loadTasks(write(`{"id":"task-02","template":"echo x"}`, `echo y`, `# a comment`, `{"template":"echo z"}`), 0)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, task := range tasks {
		ids = append(ids, task["id"].(string))
	}
	if got := strings.Join(ids, ","); got != "task-02,task-02_,task-03" {
		t.Fatalf("ids %s, want task-02,task-02_,task-03", got)
	}
	if tasks, err := loadTasks("", 3); err != nil || len(tasks) != 3 || tasks[2]["id"] != "task-03" {
		t.Fatalf("default tasks: %v %v", tasks, err)
	}
}
