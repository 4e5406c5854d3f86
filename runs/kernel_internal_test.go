package runs

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/pi-actors/pi-actors/internal/config"
	"github.com/pi-actors/pi-actors/verbs/wire"
)

// kernelInfoPath finds kernel.json where the kernel writes it: in the tmp
// dir of config.AgentDir's agent root, with and without
// $PI_CODING_AGENT_DIR.
func TestKernelInfoPath(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	for _, env := range []string{"", filepath.Join(home, "agent"), "rel/agent", "~/agent", "~"} {
		t.Setenv("PI_CODING_AGENT_DIR", env)
		agent, err := config.AgentDir()
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(env, "~") && agent != filepath.Join(home, env[1:]) {
			t.Errorf("PI_CODING_AGENT_DIR=%q: agent root %q, want it under $HOME (%s)", env, agent, home)
		}
		got, ok := kernelInfoPath()
		if want := filepath.Join(wire.TmpDir(agent), "kernel.json"); !ok || got != want {
			t.Errorf("PI_CODING_AGENT_DIR=%q: %q, want %q", env, got, want)
		}
	}
}
