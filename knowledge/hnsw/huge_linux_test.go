package hnsw

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
	"unsafe"
)

// TestAdviseHuge checks that a big slab's mapping carries the huge-page
// advice (VmFlags "hg" in /proc/self/smaps) and that its contents survive.
func TestAdviseHuge(t *testing.T) {
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || strings.Contains(string(mode), "[never]") {
		t.Skipf("transparent huge pages unavailable (%q, %v)", mode, err)
	}
	s := make([]float32, 0, 3*hugePage) // 12 MiB
	adviseHuge(s)
	s = s[:cap(s)]
	for i := range s {
		s[i] = float32(i)
	}
	mid := uintptr(unsafe.Pointer(&s[len(s)/2]))
	flags, err := vmFlags(mid)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(" "+flags+" ", " hg ") {
		t.Errorf("VmFlags of the slab's mapping = %q, want hg (MADV_HUGEPAGE)", flags)
	}
	for i, f := range s {
		if f != float32(i) {
			t.Fatalf("s[%d] = %v after the advice", i, f)
		}
	}
	small := make([]float32, 1024)
	adviseHuge(small) // below the threshold: nothing to do, no panic
}

// vmFlags returns the VmFlags line of the mapping holding addr.
func vmFlags(addr uintptr) (string, error) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return "", err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	in := false
	for sc.Scan() {
		line := sc.Text()
		var lo, hi uintptr
		if n, _ := fmt.Sscanf(line, "%x-%x", &lo, &hi); n == 2 {
			in = lo <= addr && addr < hi
			continue
		}
		if in && strings.HasPrefix(line, "VmFlags:") {
			return strings.TrimSpace(strings.TrimPrefix(line, "VmFlags:")), nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("no mapping holds %#x", addr)
}
