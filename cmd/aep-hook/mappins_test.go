package main

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/tidwall/gjson"

	"github.com/aep-hook/aep-hook/harness/pins"
	"github.com/aep-hook/aep-hook/mapping"
)

// TestMapVerbPins runs every entry of every implemented vendor's Annex A pin
// file through the real `aep-hook map` command, as a user trying a mapping
// would: one invocation per entry, the pinned input as one line on stdin,
// the entry's hook, mode, deltas, control and capture posture as flags. Vendors whose
// pins presume runtime state (Seed: Antigravity's seen conversation and open
// run) show their first-sight events first, so for them the pinned events
// must be the tail of the output; every other vendor's output must equal the
// pin exactly.
func TestMapVerbPins(t *testing.T) {
	dir, ok := pins.Dir("AEP_CONFORMANCE_DIR", "../shared/aep-spec/conformance/fixtures/mappings")
	if !ok {
		if os.Getenv("CI") == "true" {
			t.Fatal("conformance pins not found; mandatory under CI=true")
		}
		t.Skip("conformance pins not found")
	}
	for _, v := range mapping.Vendors() {
		cases, _, err := pins.LoadPins(dir, v.Name)
		if err != nil {
			continue // a vendor the pins do not cover
		}
		for _, c := range cases {
			t.Run(v.Name+"/"+c.Name, func(t *testing.T) {
				s := c.Steps[len(c.Steps)-1]
				args := []string{"aep-hook", "map", v.Name, "--capture", c.Policy.Default.String()}
				for _, o := range c.Policy.Overrides {
					args = append(args, "--capture-override", o.Pattern+"="+o.Level.String())
				}
				var line bytes.Buffer
				for _, p := range c.Steps[:len(c.Steps)-1] {
					// Earlier steps (a transition pin's prev) as earlier lines.
					json.Compact(&line, p.Input)
					line.WriteByte('\n')
				}
				if c.Seeded {
					line.WriteString(streamPrelude(v, s.Input))
				}
				if len(s.Join) > 0 && string(s.Join) != "null" {
					// The join the pin presumes, as the earlier moment that
					// makes it: a PreToolUse for the same step, named as joined.
					line.WriteString(joinMoment(t, s.Input, s.Join))
				}
				in := s.Input
				if v.HookFromArgv {
					in = json.RawMessage(`{"hook":` + strconvQuote(s.Hook) + `,"input":` + string(s.Input) + `}`)
				} else if s.Hook != "" {
					args = append(args, "--hook", s.Hook)
				}
				if c.Mode != "" {
					args = append(args, "--mode", string(c.Mode))
				}
				if c.Deltas {
					args = append(args, "--deltas")
				}
				if c.Control {
					args = append(args, "--control")
				}
				if err := json.Compact(&line, in); err != nil {
					t.Fatal(err)
				}
				line.WriteByte('\n')
				var out, errb bytes.Buffer
				code := run(args, Streams{In: &line, Out: &out, Err: &errb}, func(string) string { return "" })
				if code != 0 {
					t.Fatalf("map exit %d: %s", code, errb.String())
				}
				var lines [][]byte
				for _, l := range bytes.Split(bytes.TrimSpace(out.Bytes()), []byte("\n")) {
					if len(l) > 0 {
						lines = append(lines, append(l, '\n'))
					}
				}
				lines = s.Kept(lines)
				if v.Seed != nil && len(lines) > len(s.Expected) {
					lines = lines[len(lines)-len(s.Expected):]
				}
				diffs := pins.Compare(1, s.Expected, lines, nil)
				if why, ok := pins.Disagrees(v.Name, c.Name); ok {
					if len(diffs) == 0 {
						t.Errorf("the pin now passes; drop it from harness/pins/disagree.go (%s)", why)
					}
					return
				}
				if len(diffs) > 0 {
					t.Errorf("%s\n(map %s)", strings.Join(diffs, "\n"), strings.Join(args[2:], " "))
				}
			})
		}
	}
}

// busPrelude is the OpenCode / Kilo Code moment that makes the runtime
// state a pin presumes: the user message whose run a session.idle closes,
// the snapshot already seen for a todo list (a snapshot alone is no
// transition).
func busPrelude(input json.RawMessage) string {
	ev := gjson.GetBytes(input, "event")
	switch ev.Get("type").String() {
	case "session.idle":
		sess := ev.Get("properties.sessionID").String()
		return `{"kind":"bus","event":{"type":"message.updated","properties":{"sessionID":` + strconvQuote(sess) +
			`,"info":{"id":"msg_prelude","sessionID":` + strconvQuote(sess) + `,"role":"user"}}}}` + "\n"
	case "todo.updated":
		var b bytes.Buffer
		json.Compact(&b, input)
		return b.String() + "\n"
	}
	return ""
}

// streamPrelude is the earlier moment that makes the runtime state a
// stream table's pin presumes (its Seed in the conformance harness): the
// OpenCode / Kilo bus prelude, the loop start a pi agent_end closes, the turn start a kimi web turn.ended
// closes, the execution status an OpenHands state update already carries
// (its pin states the event alone, not a transition).
func streamPrelude(v mapping.Vendor, input json.RawMessage) string {
	var b bytes.Buffer
	switch v.Transport {
	case mapping.TransportOpenCode:
		return busPrelude(input)
	case mapping.TransportPi:
		if gjson.GetBytes(input, "event.type").String() == "agent_end" {
			json.Compact(&b, []byte(gjson.GetBytes(input, "session").Raw))
			return `{"session":` + b.String() + `,"event":{"type":"agent_start"}}` + "\n"
		}
	case mapping.TransportKimiWeb:
		if gjson.GetBytes(input, "type").String() == "turn.ended" {
			start, _ := sjsonTurnStarted(input)
			return start + "\n"
		}
	case mapping.TransportOpenHands:
		if gjson.GetBytes(input, "kind").String() == "ConversationStateUpdateEvent" {
			json.Compact(&b, input)
			return b.String() + "\n"
		}
	}
	return ""
}

// sjsonTurnStarted is the turn.started frame of the turn a turn.ended
// frame ends.
func sjsonTurnStarted(ended json.RawMessage) (string, error) {
	var f map[string]any
	if err := json.Unmarshal(ended, &f); err != nil {
		return "", err
	}
	p, _ := f["payload"].(map[string]any)
	f["type"] = "turn.started"
	f["payload"] = map[string]any{"type": "turn.started", "sessionId": p["sessionId"], "turnId": p["turnId"],
		"agentId": p["agentId"], "origin": map[string]any{"kind": "user"}}
	b, err := json.Marshal(f)
	return string(b), err
}

// joinMoment is the Antigravity PreToolUse line that a pin's join stands
// for: the same conversation and step, the joined tool name.
func joinMoment(t *testing.T, input, join json.RawMessage) string {
	t.Helper()
	var in, j map[string]any
	if json.Unmarshal(input, &in) != nil || json.Unmarshal(join, &j) != nil {
		t.Fatal("bad join pin")
	}
	pre := map[string]any{"conversationId": in["conversationId"], "stepIdx": in["stepIdx"], "toolCall": map[string]any{"name": j["name"]}}
	b, _ := json.Marshal(map[string]any{"hook": "PreToolUse", "input": pre})
	return string(b) + "\n"
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
