package mailbox

import (
	"encoding/binary"
	"encoding/hex"
	"math/rand/v2"
)

// NewID returns a new record id in the UUID version 4 text form (8-4-4-4-12
// lower-case hex digits, the form every id the mailbox, runs and rooms
// give has): 122 random bits from the runtime's generator, seeded from
// the operating system per process (math/rand/v2). It needs no uuid
// package, whose crypto and network dependencies every supervisor would
// initialise at start-up.
func NewID() string {
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], rand.Uint64())
	binary.LittleEndian.PutUint64(b[8:], rand.Uint64())
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // RFC 4122 variant
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:36], b[10:16])
	return string(s[:])
}
