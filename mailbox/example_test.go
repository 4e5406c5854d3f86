package mailbox_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/pi-actors/pi-actors/mailbox"
)

func ExampleParse() {
	for _, s := range []string{"room:build/main", "branch:build/lint", "session:"} {
		a, err := mailbox.Parse(s)
		if err != nil {
			fmt.Println("error:", err)
			continue
		}
		fmt.Println(a.Kind, a)
	}
	// Output:
	// room room:build
	// branch branch:build/lint
	// error: session address is required: "session:" has an empty id; use session:<id>
}

func ExampleInbox() {
	dir, _ := os.MkdirTemp("", "mailbox-example")
	defer os.RemoveAll(dir)
	in := mailbox.NewInbox(filepath.Join(dir, "inbox.jsonl"))

	env, _ := mailbox.Normalize(map[string]any{
		"to": "run:build", "type": "task.review", "from": "coordinator",
		"body": map[string]any{"file": "main.go"}, "id": "review-1",
	})
	in.Append(env)
	_, dup, _ := in.Append(env) // a retried send
	fmt.Println("retry was a duplicate:", dup)

	rec, _ := in.Claim("reviewer")
	fmt.Println(rec.ID(), rec.Status(), rec["claimed_by"])
	in.Done(rec.ID(), mailbox.StatusHandled, map[string]any{"verdict": "ok"})

	in.Append(mailbox.Envelope{To: "run:build", Type: "control.kill"})
	n, stopped, _ := in.Drain(context.Background(), "", 0, true, func(ctx context.Context, r mailbox.Record) error {
		fmt.Println("handling", r.Type())
		return nil
	})
	fmt.Println(n, stopped)

	recs, malformed, _ := in.List(10)
	for _, r := range recs {
		fmt.Println(r.Type(), r.Status())
	}
	fmt.Println("malformed:", malformed)
	// Output:
	// retry was a duplicate: true
	// review-1 claimed reviewer
	// handling control.kill
	// 1 true
	// task.review handled
	// control.kill handled
	// malformed: 0
}
