package actors

import (
	"strconv"
	"testing"
)

// recentSet skips repeats and stays bounded: a key is forgotten only
// after two generations of newer keys.
func TestRecentSetBounded(t *testing.T) {
	var s recentSet
	if !s.add("a") || s.add("a") {
		t.Fatal("a repeat was not skipped")
	}
	for i := range 10 * recentMax {
		s.add(strconv.Itoa(i))
		if s.len() > 2*recentMax {
			t.Fatalf("%d keys remembered", s.len())
		}
	}
	if !s.add("a") {
		t.Fatal("an old key was never forgotten")
	}
	if s.add(strconv.Itoa(10*recentMax - 1)) {
		t.Fatal("a recent key was forgotten")
	}
}

// len is the number of keys remembered.
func (s *recentSet) len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.cur) + len(s.old)
}
