package redact

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/tidwall/gjson"
)

// encodingJSONCanonical is what Canonical gave before it wrote the decoded
// values by hand: encoding/json, HTML characters not escaped.
func encodingJSONCanonical(v any) []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return []byte("null")
	}
	return bytes.TrimSuffix(b.Bytes(), []byte{'\n'})
}

var canonicalSeeds = []string{
	`{"command":"ls -la","description":"List","b":[1,2.5,-0,1e21,1e-7,123456789012345678901234,0.000001,5e-324,1.7976931348623157e308],"a":{"z":null,"y":true,"x":false}}`,
	`{"s":"quote \" backslash \\ slash / <html> & amp","ctl":"\u0000\u0001\b\f\n\r\t\u001f\u007f","ls":"\u2028\u2029","uni":"héllo 世界 🎉"}`,
	`{"":"empty key","é":"k","E":"K","a b":"space","a\"b":"quoted key"}`,
	`[]`, `{}`, `[[],{},[[]],{"a":{}}]`, `"just a string"`, `3.14`, `-1e-300`, `null`, `true`,
	`{"nested":{"deeper":{"deepest":[{"k":"v"},[1,[2,[3]]]]}}}`,
	"{\"bad\":\"\xff\xfe invalid \xc3\"}",
}

// TestCanonicalAsEncodingJSON holds the hand-written canonical encoding to
// encoding/json's, byte for byte, on values as the mappings decode them
// (gjson) and as encoding/json decodes them, and on values it leaves to
// encoding/json.
func TestCanonicalAsEncodingJSON(t *testing.T) {
	for _, s := range canonicalSeeds {
		checkCanonical(t, s)
	}
	for _, v := range []any{math.NaN(), math.Inf(1), map[string]any{"f": math.Inf(-1)}, json.Number("12"), []string{"typed"},
		map[string]any(nil), []any(nil), map[string]any{"n": map[string]any(nil), "s": []any(nil)}, 7, float32(0.1)} {
		if got, want := Canonical(v), encodingJSONCanonical(v); !bytes.Equal(got, want) {
			t.Errorf("%#v: %s, encoding/json %s", v, got, want)
		}
		checkDigest(t, v)
	}
	// Around the size of Digest's own buffer: encodings that fit it, fill
	// it and outgrow it.
	for _, n := range []int{2030, 2034, 2035, 2036, 2040, 5000} {
		checkDigest(t, map[string]any{"s": strings.Repeat("x", n)})
	}
	deep := any("leaf")
	for range maxCanonicalDepth + 10 {
		deep = []any{deep}
	}
	if got, want := Canonical(deep), encodingJSONCanonical(deep); !bytes.Equal(got, want) {
		t.Errorf("a value deeper than maxCanonicalDepth encodes differently")
	}
	checkDigest(t, deep)
}

func checkCanonical(t *testing.T, s string) {
	t.Helper()
	if !gjson.Valid(s) {
		return
	}
	vals := []any{gjson.Parse(s).Value()}
	var v any
	if json.Unmarshal([]byte(s), &v) == nil {
		vals = append(vals, v)
	}
	for _, v := range vals {
		if got, want := Canonical(v), encodingJSONCanonical(v); !bytes.Equal(got, want) {
			t.Errorf("%q: %s, encoding/json %s", s, got, want)
		}
		checkDigest(t, v)
	}
}

// checkDigest holds Digest, which encodes into a buffer of its own, to
// its definition: the digest of Canonical's bytes.
func checkDigest(t *testing.T, v any) {
	t.Helper()
	sum := sha256.Sum256(Canonical(v))
	if got, want := Digest(v), hex.EncodeToString(sum[:16]); got != want {
		t.Errorf("Digest(%.80v) = %s, want %s", v, got, want)
	}
}

// FuzzCanonicalAsEncodingJSON: on any JSON document, decoded either way,
// the hand-written canonical encoding is encoding/json's.
func FuzzCanonicalAsEncodingJSON(f *testing.F) {
	for _, s := range canonicalSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { checkCanonical(t, s) })
}
