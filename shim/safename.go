package shim

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// maxName bounds an encoded file name, well inside every platform's limit
// once an extension is added.
const maxName = 160

// SafeName encodes an untrusted identifier (a vendor session id, an agent
// name) as one file-name component that stays inside its folder on every
// platform: bytes outside [a-z0-9._-] are percent-encoded (so "/", "..", NUL
// and "%" itself cannot survive), a leading "." is encoded, and upper-case
// letters are kept but mark the name with a digest suffix so case-insensitive
// file systems cannot merge two ids. Names longer than maxName are cut and
// suffixed with a digest of the whole id. Distinct ids give distinct names.
func SafeName(id string) string {
	if id == "" {
		return "%00empty"
	}
	var b strings.Builder
	upper := false
	for i := 0; i < len(id); i++ {
		c := id[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '_', c == '-':
			b.WriteByte(c)
		case c == '.' && i > 0:
			b.WriteByte(c)
		case c >= 'A' && c <= 'Z':
			upper = true
			b.WriteByte(c)
		default:
			const hexd = "0123456789ABCDEF"
			b.WriteByte('%')
			b.WriteByte(hexd[c>>4])
			b.WriteByte(hexd[c&15])
		}
	}
	name := b.String()
	if upper || len(name) > maxName || reservedWindows(name) {
		sum := sha256.Sum256([]byte(id))
		if len(name) > maxName {
			name = name[:maxName]
			name = strings.TrimRight(name, "%0123456789ABCDEF") // never end inside an escape
		}
		name += "~" + hex.EncodeToString(sum[:6])
	}
	return name
}

// reservedWindows reports names Windows refuses as file names whatever the
// extension (CON, NUL, COM1, ...).
func reservedWindows(name string) bool {
	base, _, _ := strings.Cut(strings.ToUpper(name), ".")
	switch base {
	case "CON", "PRN", "AUX", "NUL":
		return true
	}
	if len(base) == 4 && (strings.HasPrefix(base, "COM") || strings.HasPrefix(base, "LPT")) && base[3] >= '0' && base[3] <= '9' {
		return true
	}
	return false
}
