package jsonstr

import (
	"bytes"
	"encoding/json"
	"testing"
)

// asEncodingJSON is what encoding/json writes for s without HTML escaping.
func asEncodingJSON(t testing.TB, s string) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

func TestAppendAsEncodingJSON(t *testing.T) {
	for _, s := range []string{
		"", "plain", `quote " and \ backslash`, "\b\f\n\r\t\x00\x1f\x7f",
		"<html> & 'x'", "line\u2028sep\u2029para", "bad \xff\xfe utf-8", "\xe2\x82", "ünïcødé ✓ 𝄞",
	} {
		if got, want := Append(nil, s), asEncodingJSON(t, s); !bytes.Equal(got, want) {
			t.Errorf("%q: got %s, want %s", s, got, want)
		}
	}
	if got := Append([]byte("x:"), "y"); string(got) != `x:"y"` {
		t.Errorf("appends: %s", got)
	}
}

func FuzzAppendAsEncodingJSON(f *testing.F) {
	f.Add("a\"b\\c\n\u2028\xff")
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := Append(nil, s), asEncodingJSON(t, s); !bytes.Equal(got, want) {
			t.Fatalf("%q: got %s, want %s", s, got, want)
		}
	})
}
