package verbs

import (
	"os"
	"slices"
	"testing"
)

func TestKernelEnv(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []string
		want []string
	}{
		{"no GODEBUG", []string{"A=1"}, []string{"A=1", "GODEBUG=adaptivestackstart=0", callerGODEBUG + "=-"}},
		{"empty GODEBUG", []string{"GODEBUG=", "A=1"}, []string{"A=1", "GODEBUG=adaptivestackstart=0", callerGODEBUG + "=+"}},
		{"other settings kept", []string{"GODEBUG=madvdontneed=1", "A=1"}, []string{"A=1", "GODEBUG=madvdontneed=1,adaptivestackstart=0", callerGODEBUG + "=+madvdontneed=1"}},
		{"caller's choice wins", []string{"GODEBUG=x=1,adaptivestackstart=1"}, []string{"GODEBUG=x=1,adaptivestackstart=1"}},
		{"a stale carrier is replaced", []string{callerGODEBUG + "=+old", "A=1"}, []string{"A=1", "GODEBUG=adaptivestackstart=0", callerGODEBUG + "=-"}},
	} {
		if got := kernelEnv(tc.in); !slices.Equal(got, tc.want) {
			t.Errorf("%s: kernelEnv(%q) = %q, want %q", tc.name, tc.in, got, tc.want)
		}
	}
}

func TestRestoreKernelEnv(t *testing.T) {
	for _, tc := range []struct {
		carried string
		want    string
		wantSet bool
	}{
		{"-", "", false},
		{"+", "", true},
		{"+madvdontneed=1", "madvdontneed=1", true},
	} {
		t.Setenv("GODEBUG", "adaptivestackstart=0")
		t.Setenv(callerGODEBUG, tc.carried)
		RestoreKernelEnv()
		got, set := os.LookupEnv("GODEBUG")
		if got != tc.want || set != tc.wantSet {
			t.Errorf("carried %q: GODEBUG = %q (set %v), want %q (set %v)", tc.carried, got, set, tc.want, tc.wantSet)
		}
		if _, left := os.LookupEnv(callerGODEBUG); left {
			t.Errorf("carried %q: %s is still set", tc.carried, callerGODEBUG)
		}
	}
	// A kernel started without the carrier keeps its environment.
	t.Setenv("GODEBUG", "x=1")
	os.Unsetenv(callerGODEBUG)
	RestoreKernelEnv()
	if got := os.Getenv("GODEBUG"); got != "x=1" {
		t.Errorf("without the carrier GODEBUG = %q, want x=1", got)
	}
}
