package redact

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"github.com/aep-hook/aep-hook/internal/jsonstr"
	"math"
	"slices"
	"strconv"

	"github.com/aep-hook/aep-hook/internal/jsonbound"
)

// Digest returns the AEP-0003 §9.3 digest of v: SHA-256 over its canonical
// JSON (sorted keys, compact, no HTML escaping), first 16 bytes as lower-case
// hex. Digests are always computed over the original value, before any
// redaction.
func Digest(v any) string {
	// The encoding is hashed and dropped, so it is written into a buffer
	// on the stack, big enough for a typical tool input's: grown on the
	// heap from nothing, it took a fresh span (a page fault, in a hook
	// process) for each size class it passed through.
	var buf [2048]byte
	b, ok := appendCanonical(buf[:0], v, 0)
	if !ok {
		b = encodeCanonical(v)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:16])
}

// Canonical returns the canonical JSON encoding of v used for digests.
// Maps encode with sorted keys (encoding/json's order); HTML characters are
// not escaped. A value that cannot be encoded yields "null".
//
// The values a JSON decoder makes (maps, slices, strings, float64s,
// booleans and nil) are written by hand, byte for byte as encoding/json
// writes them: its reflective encoders are set up on first use, which
// cost a hook process that digests one tool input a twentieth of its
// firing. Anything else, or deeper than maxCanonicalDepth, is left to
// encoding/json.
func Canonical(v any) []byte {
	if b, ok := appendCanonical(nil, v, 0); ok {
		return b
	}
	return encodeCanonical(v)
}

// encodeCanonical is [Canonical] by encoding/json, for the values the
// hand-written encoding leaves to it.
func encodeCanonical(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return []byte("null")
	}
	out := b.Bytes()
	return bytes.TrimSuffix(out, []byte{'\n'})
}

// DigestJSON is [Digest] over a raw JSON document as decoded with exact
// numbers (so large integers keep their spelling), computed in one
// streaming pass without decoding: linear time and no recursion whatever
// the size or depth. Invalid JSON, or JSON nested deeper than
// encoding/json decodes, is digested as a JSON string holding the raw
// bytes. A payload the hook runner bounded digests as the original did;
// "" means the digest is unknown (see jsonbound.Digest).
func DigestJSON(raw []byte) string { return jsonbound.Digest(raw) }

// maxCanonicalDepth bounds the hand-written encoding's recursion; deeper
// values (which the hook runner's bounding never lets through) go to
// encoding/json.
const maxCanonicalDepth = 200

// appendCanonical appends v's canonical JSON to b, as encoding/json (HTML
// characters not escaped, map keys sorted) would; ok is false for a value
// it leaves to encoding/json.
func appendCanonical(b []byte, v any, depth int) (_ []byte, ok bool) {
	if depth > maxCanonicalDepth {
		return b, false
	}
	switch t := v.(type) {
	case nil:
		return append(b, "null"...), true
	case bool:
		return strconv.AppendBool(b, t), true
	case string:
		return jsonstr.Append(b, t), true
	case float64:
		if math.IsInf(t, 0) || math.IsNaN(t) {
			return b, false
		}
		format := byte('f')
		if abs := math.Abs(t); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
			format = 'e'
		}
		b = strconv.AppendFloat(b, t, format, -1, 64)
		if n := len(b); format == 'e' && n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			// e-07 is written e-7
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
		return b, true
	case map[string]any:
		if t == nil {
			return append(b, "null"...), true
		}
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b = append(b, '{')
		for i, k := range keys {
			if i > 0 {
				b = append(b, ',')
			}
			b = jsonstr.Append(b, k)
			b = append(b, ':')
			if b, ok = appendCanonical(b, t[k], depth+1); !ok {
				return b, false
			}
		}
		return append(b, '}'), true
	case []any:
		if t == nil {
			return append(b, "null"...), true
		}
		b = append(b, '[')
		for i, x := range t {
			if i > 0 {
				b = append(b, ',')
			}
			if b, ok = appendCanonical(b, x, depth+1); !ok {
				return b, false
			}
		}
		return append(b, ']'), true
	}
	return b, false
}
