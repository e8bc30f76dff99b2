package shim

import (
	"encoding/binary"
	"time"
)

// ulid is a ULID's 128 bits: a 48-bit millisecond timestamp, then 80 bits
// of entropy, big-endian. Written here rather than taken from a library
// because every hook process mints a few: the library seeds a math/rand
// source at package init, which cost each hook process more than minting
// its ids (callgrind); the format is a few lines.
type ulid [16]byte

// crockford is the ULID alphabet: Crockford's base32.
const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"

// ulidMillis is t as a ULID timestamp: milliseconds since the Unix epoch.
func ulidMillis(t time.Time) uint64 { return uint64(t.UnixMilli()) }

func (u *ulid) setTime(ms uint64) {
	u[0], u[1], u[2], u[3], u[4], u[5] = byte(ms>>40), byte(ms>>32), byte(ms>>24), byte(ms>>16), byte(ms>>8), byte(ms)
}

// ulidLen is the length of a ULID's canonical form.
const ulidLen = 26

// String is the 26-character canonical form.
func (u ulid) String() string {
	var b [ulidLen]byte
	return string(u.appendTo(b[:0]))
}

// appendTo appends the canonical form to b.
func (u ulid) appendTo(b []byte) []byte {
	hi, lo := binary.BigEndian.Uint64(u[:8]), binary.BigEndian.Uint64(u[8:])
	n := len(b)
	b = append(b, make([]byte, ulidLen)...)
	for i := ulidLen - 1; i >= 0; i-- {
		b[n+i] = crockford[lo&31]
		lo = lo>>5 | hi<<59
		hi >>= 5
	}
	return b
}

// monotonic mints ULIDs that increase strictly within the process: within
// one millisecond each adds a random amount (1 to 2^32) to the last one's
// entropy; a fresh millisecond draws fresh entropy. Not safe for
// concurrent use (IDs holds the lock).
type monotonic struct {
	ms   uint64
	last ulid
	// ahead is entropy read in advance, its first used bytes spent: a
	// receiver mints a batch's ids at once, and one read then serves
	// several ids instead of one read each.
	ahead [64]byte
	used  int
}

// entropy fills b from the operating system's CSPRNG, through the
// read-ahead.
func (m *monotonic) entropy(b []byte) {
	if m.used == 0 || m.used+len(b) > len(m.ahead) {
		osRandom(m.ahead[:])
		m.used = 0
	}
	m.used += copy(b, m.ahead[m.used:])
}

func (m *monotonic) next(ms uint64) ulid {
	if ms == m.ms && m.ms != 0 {
		var r [4]byte
		m.entropy(r[:])
		if m.add(uint64(binary.BigEndian.Uint32(r[:])) + 1) {
			return m.last
		}
		// The entropy would overflow within this millisecond: fresh
		// entropy, still unique (as the library's fallback).
	}
	m.ms = ms
	m.last.setTime(ms)
	m.entropy(m.last[6:])
	return m.last
}

// add adds n to the 80-bit entropy; false when it would overflow.
func (m *monotonic) add(n uint64) bool {
	hi := uint64(binary.BigEndian.Uint16(m.last[6:8]))
	lo := binary.BigEndian.Uint64(m.last[8:])
	sum := lo + n
	if sum < lo {
		if hi == 0xffff {
			return false
		}
		hi++
	}
	binary.BigEndian.PutUint16(m.last[6:8], uint16(hi))
	binary.BigEndian.PutUint64(m.last[8:], sum)
	return true
}
