package embed

import (
	"context"
	"math"
	"unicode"
	"unicode/utf8"
)

// LocalDim is the dimension of the Local embedder's vectors.
const LocalDim = 384

// LocalID names the Local embedder's algorithm and version.
const LocalID = "local-hash-384-v1"

// Feature weights: a shared word counts most, a shared word pair adds
// context, and the character n-grams of a word share one unit of weight
// between them, so long words do not drown short ones.
const (
	weightWord    = 1.0
	weightBigram  = 0.7
	weightNgrams  = 1.0
	minNgram      = 3
	maxNgram      = 5
	featureWord   = 0x9e3779b97f4a7c15 // per-kind hash seeds
	featureBigram = 0xc2b2ae3d27d4eb4f
	featureNgram  = 0x165667b19e3779f9
)

// Local is the deterministic feature-hashing embedder described in the
// package doc. The zero value is ready to use.
type Local struct{}

// NewLocal returns the Local embedder.
func NewLocal() *Local { return &Local{} }

// ID returns LocalID.
func (*Local) ID() string { return LocalID }

// Dim returns LocalDim.
func (*Local) Dim() int { return LocalDim }

// Embed returns one L2-normalised vector per text; a text without words
// gives the zero vector. It fails only when ctx is done.
func (l *Local) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if i%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		out[i] = l.Vector(t)
	}
	return out, nil
}

// Vector embeds one text.
func (*Local) Vector(text string) []float32 {
	acc := make([]float64, LocalDim)
	words := splitWords(text)
	for i, w := range words {
		hw := hashBytes(featureWord, w)
		addFeature(acc, hw, weightWord)
		if i > 0 {
			addFeature(acc, mix(hashBytes(featureBigram, words[i-1])^hw*31), weightBigram)
		}
		addNgrams(acc, w)
	}
	var norm float64
	for _, v := range acc {
		norm += float64(v * v) // the conversion forbids an FMA: same bits on every CPU
	}
	vec := make([]float32, LocalDim)
	if norm == 0 {
		return vec
	}
	inv := 1 / math.Sqrt(norm)
	for i, v := range acc {
		vec[i] = float32(v * inv)
	}
	return vec
}

// addNgrams adds the character 3..5-grams of "<w>", sharing weightNgrams.
func addNgrams(acc []float64, w []byte) {
	var runes [64]int // byte offsets of rune starts in "<w>", capped
	marked := make([]byte, 0, len(w)+2)
	marked = append(append(append(marked, '<'), w...), '>')
	n := 0
	for i := range marked {
		if n == len(runes) {
			break
		}
		if utf8.RuneStart(marked[i]) {
			runes[n] = i
			n++
		}
	}
	count := 0
	for size := minNgram; size <= maxNgram; size++ {
		count += max(0, n-size+1)
	}
	if count == 0 {
		return
	}
	weight := weightNgrams / math.Sqrt(float64(count))
	for size := minNgram; size <= maxNgram; size++ {
		for s := 0; s+size <= n; s++ {
			end := len(marked)
			if s+size < n {
				end = runes[s+size]
			}
			addFeature(acc, hashBytes(featureNgram, marked[runes[s]:end]), weight)
		}
	}
}

// addFeature adds ±weight to the dimension chosen by h; the sign is
// another bit of h, so unrelated features cancel out on average.
func addFeature(acc []float64, h uint64, weight float64) {
	d := (h >> 1) % LocalDim
	if h&1 == 1 {
		weight = -weight
	}
	acc[d] += weight
}

// hashBytes is FNV-1a from a per-kind seed, finished with a mixer.
func hashBytes(seed uint64, b []byte) uint64 {
	h := uint64(14695981039346656037) ^ seed
	for _, c := range b {
		h ^= uint64(c)
		h *= 1099511628211
	}
	return mix(h)
}

// mix is the splitmix64 finaliser.
func mix(h uint64) uint64 {
	h ^= h >> 30
	h *= 0xbf58476d1ce4e5b9
	h ^= h >> 27
	h *= 0x94d049bb133111eb
	return h ^ h>>31
}

// splitWords lowercases text and splits it into words at non-alphanumerics
// and at camelCase and letter/digit boundaries ("parseHTTP2Request" gives
// parse, http, 2, request).
func splitWords(text string) [][]byte {
	var words [][]byte
	var cur []byte
	var prev rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, cur)
			cur = nil
		}
	}
	for _, r := range text {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			flush()
			prev = 0
			continue
		}
		if prev != 0 && (unicode.IsLower(prev) && unicode.IsUpper(r) || unicode.IsDigit(prev) != unicode.IsDigit(r)) {
			flush()
		}
		cur = utf8.AppendRune(cur, unicode.ToLower(r))
		prev = r
	}
	flush()
	return words
}
