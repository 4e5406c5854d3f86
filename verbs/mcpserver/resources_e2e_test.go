package mcpserver_test

import (
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// notify wakes wait without blocking when nobody waits.
func (c *client) notify() {
	select {
	case c.notified <- struct{}{}:
	default:
	}
}

func (c *client) sawUpdate(uri string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Contains(c.updated, uri)
}

// cli runs the pi-actors CLI against the client's agent root.
func (c *client) cli(session string, args ...string) string {
	c.t.Helper()
	cmd := exec.Command(filepath.Join(bin, "pi-actors"), args...)
	cmd.Env = append(env(c.agent), "PI_ACTORS_SESSION="+session)
	out, err := cmd.CombinedOutput()
	if err != nil {
		c.t.Fatalf("pi-actors %v: %v\n%s", args, err, out)
	}
	return string(out)
}

func (c *client) read(uri string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := c.session.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil {
		return "", err
	}
	if len(res.Contents) != 1 || res.Contents[0].MIMEType != "text/plain" {
		c.t.Fatalf("read %s: %+v", uri, res.Contents)
	}
	return res.Contents[0].Text, nil
}

func (c *client) listed() map[string]*mcp.Resource {
	c.t.Helper()
	out := map[string]*mcp.Resource{}
	for r, err := range c.session.Resources(context.Background(), nil) {
		if err != nil {
			c.t.Fatal(err)
		}
		out[r.URI] = r
	}
	return out
}

// TestMCPRunResources: every run the session may read is a resource
// (status and tail), readable, bounded, and followed by subscription —
// through the SDK's client over stdio, in both protocol generations.
func TestMCPRunResources(t *testing.T) {
	for _, version := range []string{"", "2025-06-18"} {
		t.Run("protocol="+version, func(t *testing.T) { runResources(t, version) })
	}
}

func runResources(t *testing.T, version string) {
	agent := t.TempDir()
	c := connectVersion(t, agent, version, "PI_ACTORS_SESSION=me")
	ctx := context.Background()
	caps := c.session.InitializeResult().Capabilities
	if caps.Resources == nil || !caps.Resources.Subscribe || !caps.Resources.ListChanged {
		t.Fatalf("resource capabilities: %+v", caps.Resources)
	}
	if !strings.Contains(c.session.InitializeResult().Instructions, "pi-actors://run/<id>/status") {
		t.Errorf("the instructions do not name the run resources")
	}
	tmpls, err := c.session.ListResourceTemplates(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	var uriTemplates []string
	for _, tm := range tmpls.ResourceTemplates {
		uriTemplates = append(uriTemplates, tm.URITemplate)
	}
	if !slices.Equal(uriTemplates, []string{"pi-actors://run/{id}/status", "pi-actors://run/{id}/tail"}) {
		t.Errorf("templates: %v", uriTemplates)
	}

	// Runs of this session and unowned ones are listed; another session's
	// are not. A run that printed 100 lines: its tail is bounded.
	c.cli("me", "spawn", "as=run:mine", "template=sleep 600")
	c.cli("", "spawn", "as=run:loose", "template=seq 100")
	c.cli("other", "spawn", "as=run:theirs", "template=sleep 600")
	t.Cleanup(func() {
		// Before the kernel stops (runs outlive it): every live run.
		cmd := exec.Command(filepath.Join(bin, "pi-actors"), "kill", "all")
		cmd.Env = append(env(agent), "PI_ACTORS_SESSION=")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("kill all: %v\n%s", err, out)
		}
	})
	c.wait("run:loose to end", func() bool {
		return strings.Contains(c.cli("", "inspect", "target=run:loose", "view=status"), "status=done")
	})
	var list map[string]*mcp.Resource
	c.wait("run:mine and run:loose listed", func() bool {
		list = c.listed()
		return list["pi-actors://run/mine/status"] != nil && list["pi-actors://run/loose/tail"] != nil
	})
	if r := list["pi-actors://run/mine/status"]; r.MIMEType != "text/plain" || !strings.Contains(r.Description, "sleep 600") {
		t.Errorf("mine's status resource: %+v", r)
	}
	if list["pi-actors://run/theirs/status"] != nil {
		t.Error("another session's run is listed")
	}
	text, err := c.read("pi-actors://run/mine/status")
	if err != nil || !strings.HasPrefix(text, "run=mine status=running") || !strings.Contains(text, "pi-actors://run/mine/tail") {
		t.Errorf("read mine/status: %v\n%s", err, text)
	}
	text, err = c.read("pi-actors://run/loose/tail")
	if err != nil || !strings.Contains(text, "\n100\n") || strings.Contains(text, "\n60\n") || !strings.Contains(text, filepath.Join("runs", "loose", "stdout.log")) || !strings.Contains(text, "at most 40 lines") {
		t.Errorf("read loose/tail (the last 40 of 100 lines, the log's path): %v\n%s", err, text)
	}
	// Through the template: any run; an unknown one is not found, another
	// session's is refused.
	if _, err := c.read("pi-actors://run/nope/status"); err == nil || !strings.Contains(err.Error(), "not found") {
		t.Errorf("read nope: %v", err)
	}
	_, err = c.read("pi-actors://run/theirs/status")
	var werr *jsonrpc.Error
	if err == nil || !strings.Contains(err.Error(), "session_mismatch") || !errors.As(err, &werr) || werr.Code != -32000 || !strings.Contains(string(werr.Data), `"exit":77`) {
		t.Errorf("read theirs (a JSON-RPC server error, code -32000, data exit 77): %v %#v", err, werr)
	}

	// Subscribe: a run that ends updates its status and tail; a new run
	// is announced by list_changed.
	for _, uri := range []string{"pi-actors://run/mine/status", "pi-actors://run/mine/tail"} {
		if err := c.session.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}); err != nil {
			t.Fatalf("subscribe %s: %v", uri, err)
		}
	}
	c.mu.Lock()
	changedBefore := c.listChanged
	c.mu.Unlock()
	res := c.call("message", map[string]any{"to": "run:mine", "type": "control.kill"})
	if res.IsError {
		t.Fatalf("kill: %s", text)
	}
	c.wait("resources/updated for mine's status", func() bool { return c.sawUpdate("pi-actors://run/mine/status") })
	c.wait("resources/updated for mine's tail", func() bool { return c.sawUpdate("pi-actors://run/mine/tail") })
	if text, err := c.read("pi-actors://run/mine/status"); err != nil || !strings.HasPrefix(text, "run=mine status=killed") {
		t.Errorf("after the kill: %v\n%s", err, text)
	}
	if c.sawUpdate("pi-actors://run/loose/status") {
		t.Error("an update for a resource nobody subscribed to")
	}
	c.cli("me", "spawn", "as=run:later", "template=sleep 600")
	c.wait("list_changed and run:later listed", func() bool {
		c.mu.Lock()
		n := c.listChanged
		c.mu.Unlock()
		return n > changedBefore && c.listed()["pi-actors://run/later/status"] != nil
	})
	// Pruned: no longer listed. (A live run is listed at once; one that
	// starts and ends between two ticks of the stream, when the kernel
	// next reads the runs index.)
	c.cli("me", "kill", "later")
	c.cli("me", "rm", "later", "--prune")
	c.wait("run:later unlisted", func() bool { return c.listed()["pi-actors://run/later/status"] == nil })

	// A subscription to a run that does not exist is refused. (Last: in
	// the newest protocol a subscription is a subscriptions/listen stream,
	// and go-sdk v1.8.0 drops the session's list_changed subscription when
	// any of its listen streams ends, this failed one included.)
	err = c.session.Subscribe(ctx, &mcp.SubscribeParams{URI: "pi-actors://run/nope/status"})
	if version != "" && (err == nil || !strings.Contains(err.Error(), "not found")) {
		t.Errorf("subscribe to a run that does not exist: %v", err)
	}
}
