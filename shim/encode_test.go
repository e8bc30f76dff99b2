package shim

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"
	"time"
)

// stdLine is what encoding/json writes for e (the reference).
func stdLine(e *Event) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	err := enc.Encode(e)
	return b.Bytes(), err
}

func checkSame(t *testing.T, e *Event) {
	t.Helper()
	want, werr := stdLine(e)
	got, gerr := e.MarshalLine()
	if (werr != nil) != (gerr != nil) {
		t.Fatalf("errors differ: std %v, ours %v (%+v)", werr, gerr, e)
	}
	if werr == nil && !bytes.Equal(got, want) {
		t.Fatalf("encodings differ\n std  %s\n ours %s", want, got)
	}
}

func TestEncodeMatchesJSON(t *testing.T) {
	seq, epoch := int64(7), int64(-1)
	for _, e := range []*Event{
		{AEP: "0.1", ID: "i", Type: "t", Time: "x", Source: "s", Agent: "a"},
		{AEP: "0.1", ID: "i", Type: "t", Subject: "<&>\u2028\u2029\x00\x1f\x7f\"\\\b\f\n\r\t", Time: "x", Source: "s",
			Agent: "a", Session: "\xff\xfe", Run: "r", Step: "1", Seq: &seq, Epoch: &epoch, Cause: "c",
			Traceparent: "tp", Severity: "debug", Capture: "metadata", Data: map[string]any{}},
		{Data: map[string]any{
			"s": "é", "b": true, "n": nil, "i": 1 << 62, "i64": int64(-3), "i32": int32(9), "u": uint64(1 << 63),
			"f": 1.5, "fi": 63.0, "big": 1e21, "small": 1e-7, "neg": -0.0, "tiny": 5e-324,
			"m": map[string]any{"z": 1.0, "a": []any{"x", nil, map[string]any{}}}, "nilm": map[string]any(nil),
			"nils": []any(nil), "es": []any{}, "ss": []string{"a<b"}, "ms": map[string]string{"k": "v&"},
			"num": json.Number("12.50"), "raw": json.RawMessage(`{"b":1, "a":2}`),
			"": "empty key", "\u2028k": "sep key",
		}},
		{Data: map[string]any{"nan": math.NaN()}},
		{Data: map[string]any{"inf": []any{math.Inf(-1)}}},
	} {
		checkSame(t, e)
	}
}

// FuzzEncodeMatchesJSON: for any payload JSON can carry and any envelope
// strings, the event encoder writes encoding/json's bytes.
func FuzzEncodeMatchesJSON(f *testing.F) {
	f.Add([]byte(`{"a":[1,2.5,-1e-9,1e300,"x\u2028"],"b":{"c":null,"d":true}}`), "s\x00<>", "\xff")
	f.Add([]byte(`{"k":12345678901234567890}`), "", "")
	f.Fuzz(func(t *testing.T, data []byte, s1, s2 string) {
		var v map[string]any
		if json.Unmarshal(data, &v) != nil {
			v = map[string]any{"raw": string(data)}
		}
		seq := int64(len(s1))
		checkSame(t, &Event{AEP: "0.1", ID: s1, Type: s2, Subject: s1 + s2, Time: s2, Source: s1, Agent: s2,
			Session: s1, Seq: &seq, Data: v})
	})
}

func TestFormatTime(t *testing.T) {
	for _, tm := range []time.Time{
		time.Date(2026, 1, 2, 3, 4, 5, 6e6+999, time.UTC),
		time.Date(1, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Unix(0, 0).UTC(),
	} {
		if got, want := formatTime(tm), tm.Format("2006-01-02T15:04:05.000Z"); got != want {
			t.Errorf("formatTime(%v) = %s, want %s", tm, got, want)
		}
	}
}
