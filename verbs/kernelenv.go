package verbs

import (
	"os"
	"strings"
)

// kernelGODEBUG is the runtime setting a kernel starts with: every new
// goroutine starts on the smallest stack. Go's default sizes new stacks
// by the average stack in use at the last collection, and in the kernel
// one goroutine of a dependency holds 64 KiB on its stack (fsnotify's
// read buffer): the average came to 8 KiB, and each goroutine a batch of
// spawns ran was then kept on an 8 KiB stack in the runtime's free lists
// — 1.2 to 1.8 MiB of the kernel's memory after 200 spawns, never given
// back (bench-runs: 25.9-26.2 MiB with 200 live runs, 24.1-25.1 with
// this setting).
const kernelGODEBUG = "adaptivestackstart=0"

// callerGODEBUG carries the caller's GODEBUG ("+" and its value, or "-"
// when it had none) past the kernel's own setting: the kernel puts it
// back in its environment as it starts (RestoreKernelEnv), so what it
// starts later — supervisors, a resumed workflow — sees the caller's.
const callerGODEBUG = "PI_ACTORS_CALLER_GODEBUG"

// kernelEnv is env with the kernel's runtime setting added to GODEBUG,
// unless the caller chose a value for it.
func kernelEnv(env []string) []string {
	orig, had := "", false
	out := make([]string, 0, len(env)+2)
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "GODEBUG="); ok {
			orig, had = v, true
			continue
		}
		if strings.HasPrefix(kv, callerGODEBUG+"=") {
			continue
		}
		out = append(out, kv)
	}
	name, _, _ := strings.Cut(kernelGODEBUG, "=")
	if strings.Contains(","+orig, ","+name+"=") {
		return env
	}
	godebug, caller := kernelGODEBUG, "-"
	if had {
		caller = "+" + orig
		if orig != "" {
			godebug = orig + "," + kernelGODEBUG
		}
	}
	return append(out, "GODEBUG="+godebug, callerGODEBUG+"="+caller)
}

// RestoreKernelEnv puts the caller's GODEBUG back in the kernel's
// environment (see kernelEnv); the runtime keeps the setting it started
// with. A kernel started some other way is left as it is.
func RestoreKernelEnv() {
	v, ok := os.LookupEnv(callerGODEBUG)
	if !ok {
		return
	}
	os.Unsetenv(callerGODEBUG)
	if orig, had := strings.CutPrefix(v, "+"); had {
		os.Setenv("GODEBUG", orig)
		return
	}
	os.Unsetenv("GODEBUG")
}
