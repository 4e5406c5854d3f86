package filter

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/FastFilter/xorfilter"
)

// Set is one topic filter: the last built BinaryFuse8 plus the exact keys
// added since. The zero value is an empty Set, ready to use.
type Set struct {
	built  atomic.Pointer[built]
	nExact atomic.Int64 // len(exact), read without the lock

	mu    sync.Mutex // guards exact
	exact map[uint64]struct{}

	rebuild sync.Mutex // one Rebuild at a time
}

// built is an immutable filter and what it was built from.
type built struct {
	f    *xorfilter.BinaryFuse8 // nil for an empty key list
	keys int
	at   time.Time
}

// Add records keys as present until the next Rebuild that lacks them.
func (s *Set) Add(keys ...uint64) {
	if len(keys) == 0 {
		return
	}
	s.mu.Lock()
	if s.exact == nil {
		s.exact = make(map[uint64]struct{}, len(keys))
	}
	for _, k := range keys {
		s.exact[k] = struct{}{}
	}
	s.nExact.Store(int64(len(s.exact)))
	s.mu.Unlock()
}

// MayContain reports whether key may be present: false means it is not.
//
// The exact set is consulted before the filter: Rebuild swaps the filter
// in before it clears exact keys, so a key missing from the exact set here
// is covered by whatever filter is loaded after.
func (s *Set) MayContain(key uint64) bool {
	if s.nExact.Load() != 0 {
		s.mu.Lock()
		_, ok := s.exact[key]
		s.mu.Unlock()
		if ok {
			return true
		}
	}
	b := s.built.Load()
	return b != nil && b.f != nil && b.f.Contains(key)
}

// MayContainAny reports whether any of keys may be present.
func (s *Set) MayContainAny(keys []uint64) bool {
	for _, k := range keys {
		if s.MayContain(k) {
			return true
		}
	}
	return false
}

// Rebuild builds a new filter from keys (the complete key source: every
// key that should stay present; duplicates are fine) without holding the
// Set's lock, swaps it in, then drops from the exact set the keys the list
// holds. Keys added while it runs stay in the exact set. keys is not
// modified. On error the Set is unchanged.
func (s *Set) Rebuild(keys []uint64) error {
	s.rebuild.Lock()
	defer s.rebuild.Unlock()
	sorted := slices.Clone(keys)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	nb := &built{keys: len(sorted), at: time.Now()}
	if len(sorted) > 0 {
		// The builder may reorder its argument: give it its own copy.
		f, err := xorfilter.PopulateBinaryFuse8(slices.Clone(sorted))
		if err != nil {
			return fmt.Errorf("rebuild filter of %d keys: %w", len(sorted), err)
		}
		nb.f = f
	}
	s.built.Store(nb)
	s.mu.Lock()
	for k := range s.exact {
		if _, ok := slices.BinarySearch(sorted, k); ok {
			delete(s.exact, k)
		}
	}
	s.nExact.Store(int64(len(s.exact)))
	s.mu.Unlock()
	return nil
}

// Stats describes a Set.
type Stats struct {
	Keys       int       // distinct keys in the built filter
	ExactKeys  int       // keys added since the last build
	Bytes      int       // the filter's fingerprint array
	BitsPerKey float64   // 8·Bytes / Keys (0 for an empty filter)
	BuiltAt    time.Time // zero before the first Rebuild
}

// Stats returns the current Stats.
func (s *Set) Stats() Stats {
	st := Stats{ExactKeys: int(s.nExact.Load())}
	if b := s.built.Load(); b != nil {
		st.Keys, st.BuiltAt = b.keys, b.at
		if b.f != nil {
			st.Bytes = len(b.f.Fingerprints)
		}
		if b.keys > 0 {
			st.BitsPerKey = float64(8*st.Bytes) / float64(b.keys)
		}
	}
	return st
}
