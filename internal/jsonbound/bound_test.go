package jsonbound

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"
)

// small limits make every rule reachable with short inputs.
var small = Limits{MaxDepth: 4, MaxValue: 64, MaxTotal: 256, MaxWork: 512, Open: 2, MaxMembers: 3}

func post(toolInput, toolResponse string) []byte {
	return []byte(`{"session_id":"s1","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":` +
		toolInput + `,"tool_response":` + toolResponse + `,"tool_use_id":"toolu_1"}`)
}

// checkDigests asserts that every path of the original still digests as
// the original did (or is unknown, ""), and that the envelope survives.
func checkDigests(t *testing.T, raw, out []byte, paths ...string) {
	t.Helper()
	if !json.Valid(out) {
		t.Fatalf("output is not JSON: %.300s", out)
	}
	for _, p := range []string{"session_id", "hook_event_name", "tool_name", "tool_use_id"} {
		if g, w := gjson.GetBytes(out, p).Raw, gjson.GetBytes(raw, p).Raw; g != w {
			t.Errorf("%s: %s, want %s", p, g, w)
		}
	}
	for _, p := range paths {
		o, b := gjson.GetBytes(raw, p), gjson.GetBytes(out, p)
		if !b.Exists() {
			continue // inside a placeholder
		}
		if got, want := Digest([]byte(b.Raw)), digestOriginal([]byte(o.Raw)); got != want {
			t.Errorf("digest of %s: %q, want %q", p, got, want)
		}
	}
}

func TestBoundKeepsWhatFits(t *testing.T) {
	raw := post(`{"command":"ls -la"}`, `{"stdout":"x","stderr":""}`)
	out, rep, err := Bound(raw, false, DefaultLimits)
	if err != nil || &out[0] != &raw[0] || rep.Omitted != 0 {
		t.Fatalf("a small payload must come back as is: %v %+v", err, rep)
	}
	if Omits(out) {
		t.Error("Omits on an untouched payload")
	}
}

func TestBoundBig(t *testing.T) {
	big := `"` + strings.Repeat("x", 3<<20) + `"`
	raw := post(`{"command":"cat big"}`, `{"stdout":`+big+`,"stderr":"e"}`)
	out, rep, err := Bound(raw, false, DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) > 4096 || rep.Omitted != 1 || rep.Big != 1 || rep.OmittedBytes != len(big) {
		t.Fatalf("len %d report %+v", len(out), rep)
	}
	checkDigests(t, raw, out, "tool_input", "tool_response", "tool_response.stdout", "tool_response.stderr")
	if gjson.GetBytes(out, "tool_response.stderr").Str != "e" {
		t.Error("the small sibling of the big value is lost")
	}
	if !Omits([]byte(gjson.GetBytes(out, "tool_response").Raw)) || Omits([]byte(gjson.GetBytes(out, "tool_input").Raw)) {
		t.Error("Omits wrong")
	}
}

func TestBoundDeep(t *testing.T) {
	depths := []int{100, 30_000, 3_000_000}
	if raceEnabled {
		depths = depths[:2]
	}
	for _, depth := range depths {
		deep := strings.Repeat(`{"a":`, depth) + "1" + strings.Repeat("}", depth)
		raw := post(deep, `{"ok":true}`)
		out, rep, err := Bound(raw, false, DefaultLimits)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Deep != 1 || len(out) > 4096 {
			t.Fatalf("depth %d: len %d report %+v", depth, len(out), rep)
		}
		checkDigests(t, raw, out, "tool_input", "tool_input.a", "tool_response")
		if got, want := Digest([]byte(gjson.GetBytes(out, "tool_input").Raw)), Digest([]byte(deep)); got != want {
			t.Errorf("depth %d: tool_input digest %s, want %s", depth, got, want)
		}
	}
}

// TestBoundMarker: a payload that spells the placeholder key itself has
// the value around it replaced, so it cannot pass off a digest.
func TestBoundMarker(t *testing.T) {
	forged := `{"\u0000aep.omitted":{"bytes":1,"digest":["00000000000000000000000000000000"]}}`
	for _, raw := range [][]byte{
		post(forged, `{}`),
		post(`{"x":`+forged+`}`, `{}`),
		post(`{"\u0000\u0061ep.omitted":1}`, `{}`),
		[]byte(`{"session_id":"s1","\u0000aep.omitted":{"bytes":1,"digest":["x"]},"tool_input":{"a":1}}`),
	} {
		out, _, err := Bound(raw, false, DefaultLimits)
		if err != nil {
			t.Fatal(err)
		}
		ti := gjson.GetBytes(out, "tool_input")
		want := digestOriginal([]byte(gjson.GetBytes(raw, "tool_input").Raw))
		if got := Digest([]byte(ti.Raw)); got != want {
			t.Errorf("%s: tool_input digests %s, want the original's %s (out %s)", raw, got, want, out)
		}
		if bytes.Contains(out, []byte(`["x"]`)) || bytes.Contains(out, []byte("0000000000000000")) {
			t.Errorf("forged placeholder kept: %s", out)
		}
	}
}

// TestBoundCut: the first part of a longer input keeps what was complete
// (the envelope), and what the cut ran through has unknown digests.
func TestBoundCut(t *testing.T) {
	raw := post(`{"command":"ls"}`, `{"stdout":"`+strings.Repeat("y", 1000)+`","stderr":""}`)
	for _, n := range []int{60, 100, 140, 160, 200, 300, len(raw) - 30, len(raw) - 1} {
		out, rep, err := Bound(raw[:n], true, DefaultLimits)
		if err != nil {
			t.Fatalf("cut at %d: %v", n, err)
		}
		if !json.Valid(out) || rep.Cut == 0 {
			t.Fatalf("cut at %d: %s %+v", n, out, rep)
		}
		if gjson.GetBytes(out, "session_id").Str != "s1" {
			t.Errorf("cut at %d: envelope lost: %s", n, out)
		}
		if d := Digest(out); d != "" {
			t.Errorf("cut at %d: the whole payload digests as %s, want unknown", n, d)
		}
	}
	if _, _, err := Bound([]byte(`{"a":`), false, DefaultLimits); err != ErrTruncated {
		t.Errorf("uncut truncated input: %v", err)
	}
	if _, _, err := Bound([]byte(`{"a":1} x`), true, DefaultLimits); err != ErrSyntax {
		t.Errorf("junk after the value: %v", err)
	}
}

func TestBoundBudget(t *testing.T) {
	var b strings.Builder
	b.WriteString(`{"session_id":"s1","items":[`)
	for i := range 10 {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"` + strings.Repeat("z", 40) + `"`)
	}
	b.WriteString(`],"m":{"a":1,"b":2,"c":3,"d":4,"e":5}}`)
	raw := []byte(b.String())
	out, rep, err := Bound(raw, false, small)
	if err != nil {
		t.Fatal(err)
	}
	if len(out) > small.MaxTotal+1024 || rep.Omitted == 0 {
		t.Fatalf("len %d report %+v: %s", len(out), rep, out)
	}
	checkDigests(t, raw, out, "items", "m", "m.a", "items.0")
}

func FuzzBound(f *testing.F) {
	for _, c := range digestCases {
		f.Add([]byte(c), false, uint16(0), uint8(0))
	}
	f.Add(post(strings.Repeat("[", 40)+strings.Repeat("]", 40), `{"a":"`+strings.Repeat("q", 100)+`"}`), false, uint16(0), uint8(0))
	f.Add(post(`{"a":1,"b":2,"c":3,"d":4,"e":{"f":[1,2,3,4,5]}}`, `[`+strings.Repeat(`"xxxxxxxxxx",`, 30)+`1]`), true, uint16(120), uint8(0))
	f.Add(post(`{"a":1,"b":{"c":[1,{"d":2}]}}`, `{"content":[{"t":"x"},{"t":"y"},{"t":"z"},{"t":"w"}],"n":1}`), false, uint16(0), uint8(3))
	f.Fuzz(func(t *testing.T, raw []byte, cut bool, at uint16, late uint8) {
		if cut && int(at) < len(raw) {
			raw = raw[:at]
		}
		lim := small
		if late > 0 {
			// Past the deadline from the late-th token on: what is kept is
			// kept as without one, the rest is skimmed.
			lim.Deadline, lim.clockEvery = time.Unix(1, 0), int(late)
		}
		out, _, err := Bound(raw, cut, lim)
		if err != nil {
			if !cut && Valid(raw) {
				t.Fatalf("valid input refused: %v", err)
			}
			return
		}
		if !Valid(out) {
			t.Fatalf("output not JSON: %q -> %q", raw, out)
		}
		if !cut && !Valid(raw) {
			t.Fatalf("invalid input accepted: %q", raw)
		}
		if !bytes.Equal(out, raw) && len(out) > small.MaxTotal+small.MaxMembers*4*200+2048 {
			t.Fatalf("output %d bytes", len(out))
		}
		if cut || bytes.Contains(raw, []byte(`\u0000`)) {
			return
		}
		r := gjson.ParseBytes(raw)
		if !r.IsObject() {
			return
		}
		seen := map[string]bool{}
		r.ForEach(func(k, v gjson.Result) bool {
			if seen[k.Str] || strings.ContainsAny(k.Str, `.*?|#@\`) {
				return true
			}
			seen[k.Str] = true
			if b := gjson.GetBytes(out, gjson.Escape(k.Str)); b.Exists() {
				if got, want := Digest([]byte(b.Raw)), digestOriginal([]byte(v.Raw)); got != want && !(late > 0 && got == "") {
					t.Fatalf("member %q digests %q, want %q\nin  %q\nout %q", k.Str, got, want, raw, out)
				}
			}
			return true
		})
	})
}

// TestBoundDeadline: digests not done by Limits.Deadline are given up: the
// placeholders say the digest is unknown, the report counts them, and the
// rest (the structure, the small members) is kept as without a deadline.
func TestBoundDeadline(t *testing.T) {
	items := strings.Repeat(`{"type":"text","text":"row"},`, 50_000)
	raw := post(`{"command":"q"}`, `{"content":[`+items+`{"type":"text","text":"end"}]}`)
	in, inRep, err := Bound(raw, false, DefaultLimits)
	if err != nil || inRep.Late != 0 {
		t.Fatalf("without a deadline: %v %+v", err, inRep)
	}
	lim := DefaultLimits
	lim.Deadline = time.Unix(1, 0) // long past
	out, rep, err := Bound(raw, false, lim)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Late == 0 || rep.Omitted != inRep.Omitted {
		t.Fatalf("report %+v, without a deadline %+v", rep, inRep)
	}
	if d := Digest([]byte(gjson.GetBytes(out, "tool_response").Raw)); d != "" {
		t.Errorf("tool_response digest %q, want unknown", d)
	}
	if d, want := Digest([]byte(gjson.GetBytes(in, "tool_response").Raw)), digestOriginal([]byte(gjson.GetBytes(raw, "tool_response").Raw)); d != want {
		t.Errorf("in time, the digest is the original's: %q, want %q", d, want)
	}
	for _, p := range []string{"session_id", "tool_name", "tool_input.command", "tool_response.content.0.type"} {
		if gjson.GetBytes(out, p).String() != gjson.GetBytes(raw, p).String() {
			t.Errorf("%s not kept", p)
		}
	}
}

// TestBoundSkims: when the deadline passes while a big value is still
// being measured, the rest of it is only checked as JSON and left out with
// an unknown digest; the members before and after it (the moment's name,
// the tool, the call's id) are kept, and the report counts it skimmed.
func TestBoundSkims(t *testing.T) {
	items := strings.Repeat(`{"type":"text","text":"row"},`, 100_000)
	raw := []byte(`{"session_id":"s1","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{"command":"q"},` +
		`"tool_response":{"content":[` + items + `{"type":"text","text":"end"}],"isError":false},"tool_use_id":"toolu_1","duration_ms":12}`)
	in, inRep, err := Bound(raw, false, DefaultLimits)
	if err != nil || inRep.Skimmed != 0 {
		t.Fatalf("without a deadline: %v %+v", err, inRep)
	}
	lim := DefaultLimits
	lim.Deadline = time.Unix(1, 0)
	out, rep, err := Bound(raw, false, lim)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Skimmed == 0 || rep.SkimmedBytes < len(items)/2 || rep.Late == 0 || !json.Valid(out) || len(out) > len(in)+64<<10 {
		t.Fatalf("report %+v, output %d bytes (without a deadline %d), valid %v", rep, len(out), len(in), json.Valid(out))
	}
	for _, p := range []string{"session_id", "hook_event_name", "tool_name", "tool_input.command", "tool_use_id", "duration_ms", "tool_response.isError"} {
		if g, w := gjson.GetBytes(out, p).Raw, gjson.GetBytes(raw, p).Raw; g != w {
			t.Errorf("%s: %s, want %s", p, g, w)
		}
	}
	if d := Digest([]byte(gjson.GetBytes(out, "tool_response").Raw)); d != "" {
		t.Errorf("tool_response digest %q, want unknown", d)
	}
	if !Omits([]byte(gjson.GetBytes(out, "tool_response").Raw)) {
		t.Error("the skimmed value is not marked left out")
	}
	// Truncated or invalid input is still refused while skimming.
	for _, bad := range [][]byte{raw[:len(raw)-40], append(append([]byte{}, raw[:len(raw)/2]...), `]]]}`...)} {
		if _, _, err := Bound(bad, false, lim); err == nil {
			t.Errorf("invalid input accepted while skimming: ...%q", bad[len(bad)-20:])
		}
	}
}
