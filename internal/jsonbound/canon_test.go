package jsonbound

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
)

// refDigest is the digest as the decoding way computes it: json.Decoder
// with UseNumber, then encoding/json without HTML escaping (what
// redact.DigestJSON did before it streamed).
func refDigest(raw []byte) string {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		v = string(raw)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		b.Reset()
		b.WriteString("null")
	}
	sum := sha256.Sum256(bytes.TrimSuffix(b.Bytes(), []byte{'\n'}))
	return hex.EncodeToString(sum[:16])
}

var digestCases = []string{
	`{"command":"ls -la"}`,
	`{"b":1,"a":2}`,
	`{"a":1,"a":2}`,
	`{"a":{"z":1,"y":[3,2,{"q":null,"p":true}]},"B":"x"}`,
	`  [1, 2.50, -0, 1e400, 12345678901234567890]  trailing`,
	`"<html> & \u2028 \u2029 \ud83d\ude00 \ud800 x \udc00 \ud800\u0041 \/ \b\f\n\r\t \u0000 \u001f \u007f"`,
	"\"caf\xc3\xa9 \xff\xfe \xe2\x82 \xe2\x80\xa8\"",
	"{\"k\xff\":1,\"k\":2,\"\\u006b\":3}",
	`{"é":1,"e":2,"\u00e9x":3}`,
	`{}`, `[]`, `{"a":{}}`, `[[[]]]`, `null`, `true`, `0`,
	``, `{`, `{"a":}`, `nul`, `"abc`, `[1,]`, "\"a\x01b\"", `{"a":1}}`, `01`,
}

func TestDigestMatchesDecoding(t *testing.T) {
	for _, c := range digestCases {
		if got, want := Digest([]byte(c)), refDigest([]byte(c)); got != want {
			t.Errorf("Digest(%q) = %s, want %s", c, got, want)
		}
	}
	// The documented example.
	if d := Digest([]byte(`{"command":"ls -la"}`)); d != "1df8bccaec747dc615b50678f35bf5b5" {
		t.Errorf("example digest %s", d)
	}
}

// TestDigestDepth: at encoding/json's depth limit the canonical digest
// holds; one past it the value is digested as its bytes, as decoding did;
// and 15 million levels cost neither the stack nor more than linear time.
func TestDigestDepth(t *testing.T) {
	for _, n := range []int{MaxDigestDepth, MaxDigestDepth + 1} {
		raw := []byte(strings.Repeat(`{"a":[`, n/2) + strings.Repeat(`]}`, n/2))
		if n%2 == 1 {
			raw = []byte(strings.Repeat("[", n) + strings.Repeat("]", n))
		}
		if got, want := Digest(raw), refDigest(raw); got != want {
			t.Errorf("depth %d: %s, want %s", n, got, want)
		}
	}
	deep := 15_000_000
	if raceEnabled {
		deep = 1_000_000
	}
	raw := []byte(strings.Repeat("[", deep) + strings.Repeat("]", deep))
	if got, want := Digest(raw), DigestString(raw); got != want {
		t.Errorf("15M deep: %s, want the digest of its bytes %s", got, want)
	}
	if !Valid(raw) {
		t.Error("15M deep array not valid")
	}
}

func FuzzDigest(f *testing.F) {
	for _, c := range digestCases {
		f.Add([]byte(c))
	}
	f.Add([]byte(strings.Repeat(`{"b":[{"a":1,`, 50) + `"z":0` + strings.Repeat(`}]}`, 50)))
	f.Fuzz(func(t *testing.T, raw []byte) {
		if bytes.Contains(raw, markerKey) {
			return // placeholders are Bound's
		}
		if got, want := Digest(raw), refDigest(raw); got != want {
			t.Fatalf("Digest(%q) = %s, want %s", raw, got, want)
		}
		if Valid(raw) != json.Valid(raw) {
			t.Fatalf("Valid(%q) = %v, json.Valid says otherwise", raw, Valid(raw))
		}
	})
}

// valueSpans lists where raw's values start and end, in document order.
func valueSpans(raw []byte) [][2]int {
	t := NewTokenizer(raw)
	var out [][2]int
	var open []int // indexes into out of the containers open
	for {
		k, s, e := t.Next()
		switch k {
		case End:
			return out
		case ObjectStart, ArrayStart:
			open = append(open, len(out))
			out = append(out, [2]int{s, -1})
		case ObjectEnd, ArrayEnd:
			out[open[len(open)-1]][1] = e
			open = open[:len(open)-1]
		case String, Number, Literal:
			out = append(out, [2]int{s, e})
		}
	}
}

// FuzzDigestChain: the digests tapped from one canonical pass over a
// value are those of the values inside it digested on their own.
func FuzzDigestChain(f *testing.F) {
	for _, c := range digestCases {
		f.Add([]byte(c))
	}
	f.Add([]byte(`{"tool_response":{"z":1,"content":[{"type":"text","text":"a"},{"b":[1,{"y":2,"x":3}]}]}}`))
	f.Fuzz(func(t *testing.T, raw []byte) {
		if bytes.Contains(raw, markerKey) || !Valid(raw) {
			return
		}
		spans := valueSpans(raw)
		if len(spans) == 0 || spans[0][1] < 0 {
			return
		}
		if len(spans) > 6 {
			spans = spans[:6]
		}
		got, err := digestChain(raw, spans, nil)
		if err != nil {
			return // over the reordering budget
		}
		for i, sp := range spans {
			if want := digestOriginal(raw[sp[0]:sp[1]]); got[i] != want {
				t.Fatalf("span %d %q of %q: tapped %s, alone %s", i, raw[sp[0]:sp[1]], raw, got[i], want)
			}
		}
	})
}
