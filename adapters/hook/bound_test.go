package hook

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/aep-hook/aep-hook/harness/sinktest"
	"github.com/aep-hook/aep-hook/internal/jsonbound"
	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/shim"
)

// depthOf is the nesting depth of a valid JSON document.
func depthOf(raw []byte) int {
	t := jsonbound.NewTokenizer(raw)
	deepest := 0
	for {
		k, _, _ := t.Next()
		if k == jsonbound.End {
			return deepest
		}
		deepest = max(deepest, t.Depth())
	}
}

// TestRunnerBoundsWork: whatever the payload's size or depth, the table is
// handed a payload of bounded size and depth (gjson's Value rescans every
// level, so 30,000 levels cost seconds; a 16 MiB output was decoded whole),
// and the event still carries the original's digest. The hook's memory is
// cmd/aep-hook TestHookBigPayloads' subject.
func TestRunnerBoundsWork(t *testing.T) {
	claude, _ := mapping.Lookup("claude-code")
	lim := jsonbound.DefaultLimits
	cases := []struct {
		name, input, response string
	}{
		{"16 MiB output", `{"command":"cat"}`, `{"stdout":"` + strings.Repeat("x", 16<<20) + `","stderr":""}`},
		{"30 MiB output", `{"command":"cat"}`, `{"stdout":"` + strings.Repeat("x", 30<<20) + `"}`},
		{"30,000 deep input", strings.Repeat(`{"a":`, 30000) + "1" + strings.Repeat("}", 30000), `{}`},
	}
	if raceEnabled {
		// The race detector makes reading 16 MiB take seconds; 4 MiB (which
		// lost 3 of 8 events on a busy machine) shows the same bound. The
		// process tests, built without it, read 16 and 30 MiB.
		cases = append([]struct{ name, input, response string }{
			{"4 MiB output", `{"command":"cat"}`, `{"stdout":"` + strings.Repeat("x", 4<<20) + `"}`},
		}, cases[2])
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			payload := []byte(`{"session_id":"s1","hook_event_name":"PostToolUse","tool_name":"Bash","tool_use_id":"toolu_1","tool_input":` +
				c.input + `,"tool_response":` + c.response + `}`)
			v := claude
			seen, deepest := 0, 0
			v.Map = func(m mapping.Moment, st *mapping.State) ([]mapping.Draft, error) {
				seen, deepest = len(m.Raw), depthOf(m.Raw)
				return claude.Map(m, st)
			}
			sink := &sinktest.Sink{}
			r := Runner{Vendor: v, Emitter: memEmitter(sink), Errors: &shim.ErrorLog{}, Deadline: time.Minute}
			r.Run("", bytes.NewReader(payload), &bytes.Buffer{})
			if seen == 0 || seen > lim.MaxTotal || deepest > lim.MaxDepth+3 {
				t.Errorf("the table read %d bytes nested %d deep", seen, deepest)
			}
			evs := sink.Events("s1")
			if len(evs) != 1 || evs[0].Data["result_digest"] != jsonbound.Digest([]byte(c.response)) {
				t.Fatalf("events %v", evs)
			}
		})
	}
}

// FuzzRunnerBounds drives the whole runner (read, bound, identify, map,
// emit) with payloads of any shape, seeded with deep, big, cut and
// placeholder-forging ones: the run returns 0, the reply is the vendor's
// neutral one, every line written is an event, and the table never sees
// more than the bounds.
func FuzzRunnerBounds(f *testing.F) {
	lim := jsonbound.Limits{MaxDepth: 8, MaxValue: 256, MaxTotal: 1024, MaxWork: 2048, Open: 2, MaxMembers: 4}
	deep := func(n int) string { return strings.Repeat(`{"a":`, n) + "1" + strings.Repeat("}", n) }
	for _, s := range []string{
		`{"session_id":"s","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":` + deep(50) + `}`,
		`{"session_id":"s","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{},"tool_response":{"stdout":"` + strings.Repeat("x", 3000) + `"}}`,
		`{"session_id":"s","hook_event_name":"PostToolUse","tool_response":{"stdout":"` + strings.Repeat("x", 3000),
		`{"session_id":"s","hook_event_name":"PreToolUse","tool_input":{"\u0000aep.omitted":{"bytes":1,"digest":["x"]}}}`,
		`[` + strings.Repeat("[", 100) + strings.Repeat("]", 100) + `]`,
		`{"session_id":"s","hook_event_name":"Stop","a":1,"b":2,"c":3,"d":4,"e":5,"f":[1,2,3,4,5,6]}`,
	} {
		f.Add([]byte(s), uint8(0), uint16(0))
		f.Add([]byte(s), uint8(3), uint16(len(s)/2))
	}
	var vendors []mapping.Vendor
	for _, v := range mapping.Vendors() {
		if v.Transport == mapping.TransportHook {
			vendors = append(vendors, v)
		}
	}
	f.Fuzz(func(t *testing.T, raw []byte, which uint8, maxIn uint16) {
		v := vendors[int(which)%len(vendors)]
		table := v.Map
		v.Map = func(m mapping.Moment, st *mapping.State) ([]mapping.Draft, error) {
			if len(m.Raw) > lim.MaxTotal+64*1024 || depthOf(m.Raw) > lim.MaxDepth+3 {
				t.Fatalf("the table was handed %d bytes nested %d deep", len(m.Raw), depthOf(m.Raw))
			}
			return table(m, st)
		}
		var out bytes.Buffer
		r := Runner{Vendor: v, Emitter: memEmitter(&checkSink{t: t}), Errors: &shim.ErrorLog{},
			Deadline: time.Minute, Limits: lim, MaxInput: int64(maxIn)}
		hook := ""
		if v.HookFromArgv {
			hook = "PreToolUse"
		}
		if code := r.Run(hook, bytes.NewReader(raw), &out); code != 0 {
			t.Fatalf("exit %d", code)
		}
		if out.Len() > 0 && v.Reply != nil && !bytes.Equal(out.Bytes(), v.Reply(hook)) && !json.Valid(out.Bytes()) {
			t.Fatalf("reply %q", out.Bytes())
		}
	})
}
