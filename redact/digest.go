package redact

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
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

// DigestJSON is [Digest] over a raw JSON document, decoded with exact
// numbers so large integers keep their spelling. Invalid JSON is digested as
// a JSON string holding the raw bytes.
func DigestJSON(raw []byte) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return Digest(string(raw))
	}
	return Digest(v)
}
