package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// world is an agent root for the Go tests that go beyond what a testscript
// can (another user): the test binary linked as pi-actors,
// pi-actors-kernel, pi-actors-supervise, pi-actors-front, pa-helper and
// pa-probe in a directory every user may read, so a process running as
// another uid can start it too.
type world struct {
	t     *testing.T
	base  string // 0755: every user may look in
	bin   string
	agent string
	env   []string
}

// newWorld makes a world under a fresh directory; agent is the agent root
// (below base unless given). Its kernel and runs are killed when the test
// ends.
func newWorld(t *testing.T, agent string) *world {
	t.Helper()
	base, err := os.MkdirTemp("", "pa-world-")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	if agent == "" {
		agent = filepath.Join(base, "agent")
	}
	w := &world{t: t, base: base, bin: filepath.Join(base, "bin"), agent: agent}
	t.Cleanup(func() {
		w.run("kernel", "stop")
		stopAgent(agent)
		os.RemoveAll(base)
	})
	if err := os.Mkdir(w.bin, 0o755); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"pi-actors", "pi-actors-kernel", "pi-actors-supervise", "pi-actors-front", "pa-helper", "pa-probe"} {
		if err := linkOrCopy(self, filepath.Join(w.bin, name)); err != nil {
			t.Fatal(err)
		}
	}
	home := filepath.Join(base, "home")
	if err := os.Mkdir(home, 0o755); err != nil {
		t.Fatal(err)
	}
	w.env = append(os.Environ(), "PATH="+w.bin+":"+os.Getenv("PATH"), "HOME="+home,
		"PI_CODING_AGENT_DIR="+agent, "PI_ACTORS_SESSION=s1", "PI_ACTORS_MAX_PARALLEL_BRANCHES=",
		"PI_ACTORS_KERNEL_BIN=", "PI_ACTORS_BIN=", "PI_ACTORS_SUPERVISE_BIN="+filepath.Join(w.bin, "pi-actors-supervise"))
	return w
}

// linkOrCopy makes dst the file src: a hard link, or a copy across file
// systems; mode 0755.
func linkOrCopy(src, dst string) error {
	if err := os.Link(src, dst); err == nil {
		return os.Chmod(dst, 0o755)
	}
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// result is what one command did.
type result struct {
	code           int
	stdout, stderr string
}

func (r result) String() string {
	return fmt.Sprintf("exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
}

// run runs pi-actors with args as this process's user, in dir base.
func (w *world) run(args ...string) result {
	return w.runAs(nil, "", "pi-actors", args...)
}

// runAs runs a command of the world's bin as the given credential (nil:
// ours) with dir as its working directory ("" = base) and a minute's
// timeout.
func (w *world) runAs(cred *syscall.Credential, dir, name string, args ...string) result {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(w.bin, name), args...)
	cmd.Env = w.env
	cmd.Dir = w.base
	if dir != "" {
		cmd.Dir = dir
	}
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	var out, errb strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	r := result{stdout: out.String(), stderr: errb.String()}
	if ee, ok := err.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if err != nil {
		w.t.Fatalf("%s %v: %v", name, args, err)
	}
	return r
}

// must runs pi-actors and fails the test unless it exits 0.
func (w *world) must(args ...string) string {
	w.t.Helper()
	r := w.run(args...)
	if r.code != 0 {
		w.t.Fatalf("pi-actors %s: %s", strings.Join(args, " "), r)
	}
	return r.stdout
}

// waitFile waits up to 20 s for path to exist.
func waitFile(t *testing.T, path string) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); ; {
		if _, err := os.Stat(path); err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s did not appear", path)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// startAs starts a command of the world's bin as cred in the background;
// it is killed when the test ends.
func (w *world) startAs(cred *syscall.Credential, name string, args ...string) *exec.Cmd {
	w.t.Helper()
	cmd := exec.Command(filepath.Join(w.bin, name), args...)
	cmd.Env, cmd.Dir = w.env, w.base
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if err := cmd.Start(); err != nil {
		w.t.Fatal(err)
	}
	w.t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}
