package hnsw

import "math/bits"

// idTable maps caller ids to slots: open addressing with linear probing over
// a power-of-two array of slot+1 values (0 = empty), the keys themselves
// read from the index's ids slice. It costs 4-8 bytes per live id, a
// fraction of a Go map of the same size.
type idTable struct {
	cells []uint32
	shift uint8 // 64 - log2(len(cells))
	n     int   // live entries
}

func hashID(id uint64) uint64 { return (id ^ id>>29) * 0x9E3779B97F4A7C15 }

// init sizes the table for at least want entries at a load of at most 1/2.
func (t *idTable) init(want int) {
	size := 16
	for size < 2*want {
		size <<= 1
	}
	t.cells = make([]uint32, size)
	t.shift = uint8(64 - bits.TrailingZeros(uint(size)))
	t.n = 0
}

// find returns the slot of id, or false.
func (t *idTable) find(id uint64, ids []uint64) (uint32, bool) {
	if len(t.cells) == 0 {
		return 0, false
	}
	mask := uint64(len(t.cells) - 1)
	for p := hashID(id) >> t.shift; ; p = (p + 1) & mask {
		c := t.cells[p]
		if c == 0 {
			return 0, false
		}
		if ids[c-1] == id {
			return c - 1, true
		}
	}
}

// insert records id → slot; the caller has checked id is absent.
func (t *idTable) insert(id uint64, slot uint32, ids []uint64) {
	if 2*(t.n+1) > len(t.cells) {
		t.reserve(2*(t.n+1), ids)
	}
	t.place(id, slot)
	t.n++
}

func (t *idTable) place(id uint64, slot uint32) {
	mask := uint64(len(t.cells) - 1)
	p := hashID(id) >> t.shift
	for t.cells[p] != 0 {
		p = (p + 1) & mask
	}
	t.cells[p] = slot + 1
}

// reserve rehashes the table, if needed, so that it holds want entries at
// a load of at most 1/2.
func (t *idTable) reserve(want int, ids []uint64) {
	if 2*want <= len(t.cells) {
		return
	}
	old := t.cells
	n := t.n
	t.init(want)
	for _, c := range old {
		if c != 0 {
			t.place(ids[c-1], c-1)
		}
	}
	t.n = n
}

// remove deletes id (backward-shift deletion, no tombstones) and reports
// whether it was present.
func (t *idTable) remove(id uint64, ids []uint64) bool {
	if len(t.cells) == 0 {
		return false
	}
	mask := uint64(len(t.cells) - 1)
	p := hashID(id) >> t.shift
	for {
		c := t.cells[p]
		if c == 0 {
			return false
		}
		if ids[c-1] == id {
			break
		}
		p = (p + 1) & mask
	}
	// Shift later members of the probe run back over the hole.
	hole := p
	for q := (hole + 1) & mask; t.cells[q] != 0; q = (q + 1) & mask {
		home := hashID(ids[t.cells[q]-1]) >> t.shift
		// Move q into the hole if its home is not cyclically in (hole, q].
		if (q-home)&mask >= (q-hole)&mask {
			t.cells[hole] = t.cells[q]
			hole = q
		}
	}
	t.cells[hole] = 0
	t.n--
	return true
}

// bytes is the table's memory footprint.
func (t *idTable) bytes() int { return 4 * len(t.cells) }
