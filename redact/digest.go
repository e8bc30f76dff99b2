package redact

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/aep-hook/aep-hook/internal/jsonbound"
)

// Digest returns the AEP-0003 §9.3 digest of v: SHA-256 over its canonical
// JSON (sorted keys, compact, no HTML escaping), first 16 bytes as lower-case
// hex. Digests are always computed over the original value, before any
// redaction.
func Digest(v any) string {
	sum := sha256.Sum256(Canonical(v))
	return hex.EncodeToString(sum[:16])
}

// Canonical returns the canonical JSON encoding of v used for digests.
// Maps encode with sorted keys (encoding/json's order); HTML characters are
// not escaped. A value that cannot be encoded yields "null".
func Canonical(v any) []byte {
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
