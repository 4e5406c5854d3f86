package filter

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
)

func TestTokens(t *testing.T) {
	keys := func(words ...string) []uint64 {
		var out []uint64
		for _, w := range words {
			out = append(out, Key(w))
		}
		return out
	}
	cases := []struct {
		text string
		want []uint64
	}{
		{"", nil},
		{"a b c", nil},
		{"Retry logic, retry LOGIC!", keys("retry", "logic")},
		{"retryPolicy2 x", keys("retry", "policy", "retrypolicy2")},
		{"snake_case-words/path.go", keys("snake", "case", "words", "path", "go")},
		{"Ünïcode straße 東京", keys("ünïcode", "straße", "東京")},
		{"HTTPServer utf8", keys("httpserver", "utf", "utf8")},
	}
	for _, c := range cases {
		if got := Tokens(c.text); !slices.Equal(got, c.want) {
			t.Errorf("Tokens(%q) = %v, want %v", c.text, got, c.want)
		}
	}
	// Many distinct words (past the linear-scan limit), each repeated.
	var text []byte
	var want []uint64
	for i := range 200 {
		w := fmt.Sprintf("word%c%c", 'a'+i%26, 'a'+i/26)
		want = append(want, Key(w))
		text = fmt.Appendf(text, "%s %s, ", w, strings.ToUpper(w))
	}
	if got := Tokens(string(text)); !slices.Equal(got, want) {
		t.Errorf("200 repeated words: %d keys, want %d", len(got), len(want))
	}
}

func randomKeys(n int, seed uint64) []uint64 {
	r := rand.New(rand.NewPCG(seed, 1))
	out := make([]uint64, n)
	for i := range out {
		out[i] = r.Uint64()
	}
	return out
}

// TestNoFalseNegatives is the property: every added key is found, before a
// rebuild (exact set), after a rebuild that includes it (filter), and keys
// added during and after a rebuild too.
func TestNoFalseNegatives(t *testing.T) {
	for _, n := range []int{0, 1, 2, 10, 1000, 50000} {
		var s Set
		keys := randomKeys(n, uint64(n))
		s.Add(keys...)
		for _, k := range keys {
			if !s.MayContain(k) {
				t.Fatalf("n=%d: added key missing before rebuild", n)
			}
		}
		if err := s.Rebuild(append(slices.Clone(keys), keys[:n/2]...)); err != nil {
			t.Fatal(err)
		}
		if st := s.Stats(); st.ExactKeys != 0 || st.Keys != n {
			t.Fatalf("n=%d after rebuild: %+v", n, st)
		}
		late := randomKeys(100, uint64(n)+1000)
		s.Add(late...)
		for _, k := range append(slices.Clone(keys), late...) {
			if !s.MayContain(k) {
				t.Fatalf("n=%d: key missing after rebuild", n)
			}
		}
		if !s.MayContainAny([]uint64{1, 2, late[3]}) {
			t.Fatal("MayContainAny missed")
		}
		// A rebuild from a source without the late keys keeps them in the
		// exact set.
		if err := s.Rebuild(keys); err != nil {
			t.Fatal(err)
		}
		if st := s.Stats(); st.ExactKeys != len(late) {
			t.Fatalf("n=%d: exact keys after second rebuild %d, want %d", n, st.ExactKeys, len(late))
		}
		for _, k := range late {
			if !s.MayContain(k) {
				t.Fatal("late key lost by a rebuild that did not include it")
			}
		}
	}
}

// TestRebuildConcurrent adds keys and probes them while rebuilds run:
// no key is ever reported absent after its Add returned.
func TestRebuildConcurrent(t *testing.T) {
	var s Set
	base := randomKeys(20000, 1)
	s.Add(base...)
	var mu sync.Mutex
	added := slices.Clone(base)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			mu.Lock()
			src := slices.Clone(added)
			mu.Unlock()
			if err := s.Rebuild(src); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	extra := randomKeys(3000, 2)
	for i, k := range extra {
		s.Add(k)
		mu.Lock()
		added = append(added, k)
		mu.Unlock()
		for _, p := range []uint64{k, extra[i/2], base[i]} {
			if !s.MayContain(p) {
				t.Fatalf("key %d reported absent during rebuilds", p)
			}
		}
	}
	close(stop)
	wg.Wait()
}

func TestFalsePositiveRate(t *testing.T) {
	var s Set
	if err := s.Rebuild(randomKeys(100000, 3)); err != nil {
		t.Fatal(err)
	}
	fp := 0
	probes := randomKeys(200000, 4)
	for _, k := range probes {
		if s.MayContain(k) {
			fp++
		}
	}
	rate := float64(fp) / float64(len(probes))
	t.Logf("false-positive rate %.5f (8-bit fingerprints: ~0.0039)", rate)
	if rate > 0.006 {
		t.Fatalf("false-positive rate %.5f, want about 1/256", rate)
	}
}

func TestDomains(t *testing.T) {
	var d Domains
	if d.MayMatch("code", "anything") {
		t.Fatal("an unknown domain matched")
	}
	d.Set("code").Add(Tokens("func retryWithBackoff(policy RetryPolicy)")...)
	d.Set("history").Add(Tokens("run 42 failed: backoff exhausted")...)
	if err := d.Set("academic").Rebuild(Tokens("Hierarchical navigable small world graphs")); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		domain, query string
		want          bool
	}{
		{"code", "retry", true},
		{"code", "how does RETRY work", true},
		{"code", "navigable", false},
		{"history", "backoff", true},
		{"history", "policy", false},
		{"academic", "small worlds graph", true},
		{"academic", "zebra", false},
		{"code", "a", true}, // nothing to rule out with
	}
	for _, c := range cases {
		if got := d.MayMatch(c.domain, c.query); got != c.want {
			t.Errorf("MayMatch(%s, %q) = %v, want %v", c.domain, c.query, got, c.want)
		}
	}
	if got := d.AlsoExistsIn("backoff", "code"); !slices.Equal(got, []string{"history"}) {
		t.Errorf("AlsoExistsIn(backoff, except code) = %v", got)
	}
	if got := d.AlsoExistsIn("backoff graphs", ""); !slices.Equal(got, []string{"academic", "code", "history"}) {
		t.Errorf("AlsoExistsIn(backoff graphs) = %v", got)
	}
	if got := d.Names(); !slices.Equal(got, []string{"academic", "code", "history"}) {
		t.Errorf("Names = %v", got)
	}
}
