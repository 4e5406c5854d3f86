package mcpserver

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/pi-actors/pi-actors/recipes"
	"github.com/pi-actors/pi-actors/verbs"
)

// startFollowups pumps the session's follow-ups from the kernel to the
// client as notifications/message while the connection lives. The kernel
// hands each over once (its queue is durable), so a follow-up reaches
// either this client or a later inspect view=followups, never both.
func (s *Server) startFollowups() {
	s.pump.Do(func() { go s.pumpFollowups() })
}

func (s *Server) pumpFollowups() {
	{
		ctx := context.Background()
		ss := s.session(ctx)
		if ss == nil {
			return
		}
		ctx, cancel := context.WithCancel(ctx)
		go func() { ss.Wait(); cancel() }()
		for ctx.Err() == nil {
			err := verbs.WatchFollowups(ctx, s.env, func(f verbs.Followup, bounded json.RawMessage) error {
				return ss.Log(ctx, &mcp.LoggingMessageParams{Level: logLevel(f.Level), Logger: "pi-actors.followup", Data: bounded})
			}, nil)
			// A session that is closing ends the watch (its Log fails) a
			// moment before Wait returns: no warning for that.
			select {
			case <-ctx.Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
			s.log.Warn("follow-up watch ended; reconnecting", "err", err)
			select {
			case <-ctx.Done():
				return
			case <-time.After(followupDelay):
			}
		}
	}
}

func logLevel(level string) mcp.LoggingLevel {
	switch level {
	case "warning", "error":
		return mcp.LoggingLevel(level)
	}
	return "info"
}

// refreshRecipes brings the recipe tools in line with the recipe files:
// tools of removed recipes go, new and changed ones are (re)added. The SDK
// sends notifications/tools/list_changed for each change.
func (s *Server) refreshRecipes() error {
	list, err := RecipeTools(s.env)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	want := map[string]ToolDef{}
	for _, t := range list {
		want[t.Name] = t
	}
	var gone []string
	for name, t := range s.tools {
		if t.Recipe == "" {
			continue
		}
		if w, ok := want[name]; !ok || !sameTool(w, t) {
			gone = append(gone, name)
		}
	}
	if len(gone) > 0 {
		s.srv.RemoveTools(gone...)
		for _, name := range gone {
			delete(s.tools, name)
		}
	}
	for name, t := range want {
		if _, ok := s.tools[name]; !ok {
			s.add(t)
		}
	}
	return nil
}

func sameTool(a, b ToolDef) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// watchRecipes refreshes the recipe tools when files under <agent>/recipes
// change (debounced); before that directory exists it watches the agent
// root for its creation. It returns a stop function.
func (s *Server) watchRecipes(ctx context.Context) func() {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		s.log.Warn("recipe watch unavailable", "err", err)
		return func() {}
	}
	root := recipes.UserRoot(s.env.AgentDir)
	watchRoot := func() bool { return w.Add(root) == nil }
	if !watchRoot() {
		os.MkdirAll(s.env.AgentDir, 0o700)
		if err := w.Add(s.env.AgentDir); err != nil {
			s.log.Warn("recipe watch", "err", err)
		}
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		var timer <-chan time.Time
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				if filepath.Dir(ev.Name) == s.env.AgentDir && filepath.Base(ev.Name) != filepath.Base(root) {
					continue
				}
				if ev.Name == root {
					watchRoot()
				}
				timer = time.After(100 * time.Millisecond)
			case <-timer:
				timer = nil
				if err := s.refreshRecipes(); err != nil {
					s.log.Warn("recipe tools", "err", err)
				}
			case err, ok := <-w.Errors:
				if !ok {
					return
				}
				s.log.Warn("recipe watch", "err", err)
			}
		}
	}()
	return func() { w.Close(); <-done }
}
