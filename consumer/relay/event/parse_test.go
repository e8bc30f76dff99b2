package event

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

const good = `{"aep":"0.1","id":"01J","type":"tool.completed","time":"2026-07-03T10:15:04.221Z","source":"aep://h/agent/a/session/s","agent":"a","session":"s","seq":3,"epoch":1,"severity":"info","capture":"metadata","tenant":"acme","acmeteam":"blue","acmen":-2,"acmeb":true,"data":{"x":1}}`

// with replaces (or, with value "", removes) one attribute of good.
func with(t *testing.T, key, value string) string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(good), &m); err != nil {
		t.Fatal(err)
	}
	if value == "" {
		delete(m, key)
	} else {
		m[key] = json.RawMessage(value)
	}
	b, _ := json.Marshal(m)
	return string(b)
}

func TestParseGood(t *testing.T) {
	e, err := Parse([]byte(good + "\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	if string(e.Raw) != good {
		t.Errorf("raw not kept byte for byte: %s", e.Raw)
	}
	if !e.Sequenced || e.Pos != (Pos{1, 3}) || e.Tenant != "acme" || e.Session != "s" {
		t.Errorf("parsed %+v", e)
	}
	for k, want := range map[string]any{"type": "tool.completed", "epoch": json.Number("1"), "acmeteam": "blue", "acmen": json.Number("-2"), "acmeb": true} {
		if got, ok := e.Attr(k); !ok || got != want {
			t.Errorf("Attr(%s) = %v %v, want %v", k, got, ok, want)
		}
	}
	if _, ok := e.Attr("run"); ok {
		t.Error("absent run reported present")
	}
	pretty := "{\n  \"aep\": \"0.1\", \"id\": \"x\", \"type\": \"agent.idle\",\n \"time\": \"2026-07-03T10:15:04Z\", \"source\": \"aep://h/agent/a\", \"agent\": \"a\"\n}\n"
	e, err = Parse([]byte(pretty))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.ContainsAny(e.Raw, "\r\n") || e.Sequenced {
		t.Errorf("pretty input: %s sequenced=%v", e.Raw, e.Sequenced)
	}
}

func TestParseRules(t *testing.T) {
	cmd := `{"aep":"0.1","id":"c1","type":"control.attention.respond","time":"2026-07-03T10:15:04Z","source":"aep://h/agent/tg","agent":"tg","session":"s","data":{"answer":{"option":"allow"}}}`
	agent := `{"aep":"0.1","id":"g1","type":"agent.idle","time":"2026-07-03T10:15:04Z","source":"aep://h/agent/a","agent":"a"}`
	for _, c := range []struct {
		name, in, rule string
	}{
		{"not json", `{"aep":`, "AEP-0001 §5"},
		{"array", `[1]`, "AEP-0001 §5"},
		{"two objects", good + good, "AEP-0001 §5"},
		{"duplicate", strings.Replace(good, `"agent":"a"`, `"agent":"a","agent":"b"`, 1), "AEP-0001 §5"},
		{"escaped duplicate", strings.Replace(good, `"agent":"a"`, `"agent":"a","\u0061gent":"b"`, 1), "AEP-0001 §5"},
		{"null", with(t, "run", `null`), "AEP-0001 §5.1"},
		{"no id", with(t, "id", ""), "AEP-0001 §5.1"},
		{"empty agent", with(t, "agent", `""`), "AEP-0001 §5.1"},
		{"numeric id", with(t, "id", `7`), "AEP-0001 §5.1"},
		{"version", with(t, "aep", `"9.9"`), "AEP-0003 §3.1"},
		{"type case", with(t, "type", `"Tool.Completed"`), "AEP-0001 §6"},
		{"type one token", with(t, "type", `"tool"`), "AEP-0001 §6"},
		{"type empty token", with(t, "type", `"tool..x"`), "AEP-0001 §6"},
		{"vendor short", with(t, "type", `"x.acme.note"`), "AEP-0001 §6"},
		{"time", with(t, "time", `"yesterday"`), "AEP-0001 §5.1"},
		{"time zone", with(t, "time", `"2026-07-03T10:15:04"`), "AEP-0001 §5.1"},
		{"source", with(t, "source", `"not a uri"`), "AEP-0001 §5.1"},
		{"seq negative", with(t, "seq", `-1`), "AEP-0001 §5.1"},
		{"seq fraction", with(t, "seq", `1.5`), "AEP-0001 §5.1"},
		{"seq exponent", with(t, "seq", `1e3`), "AEP-0001 §5.1"},
		{"seq string", with(t, "seq", `"3"`), "AEP-0001 §5.1"},
		{"severity", with(t, "severity", `"loud"`), "AEP-0001 §8.1"},
		{"capture", with(t, "capture", `"some"`), "AEP-0001 §8.2"},
		{"data array", with(t, "data", `[1]`), "AEP-0001 §5.1"},
		{"traceparent", with(t, "traceparent", `"00-xyz"`), "AEP-0001 §5.1"},
		{"ext name", with(t, "Acme", `"x"`), "AEP-0001 §5.4"},
		{"ext long", with(t, "abcdefghijklmnopqrstu", `"x"`), "AEP-0001 §5.4"},
		{"ext object", with(t, "acme", `{"a":1}`), "AEP-0001 §5.4"},
		{"ext fraction", with(t, "acme", `1.5`), "AEP-0001 §5.4"},
		{"tenant number", with(t, "tenant", `3`), "AEP-0001 §5.4"},
		{"tenant case", with(t, "tenant", `"Acme"`), "AEP-0001 §5.4"},
		{"no session", with(t, "session", ""), "AEP-0001 §5.2"},
		{"no seq", with(t, "seq", ""), "AEP-0001 §5.2"},
		{"agent with session", strings.Replace(agent, `"agent":"a"`, `"agent":"a","session":"s"`, 1), "AEP-0001 §5.2"},
		{"command with seq", strings.Replace(cmd, `"session":"s"`, `"session":"s","seq":1`, 1), "AEP-0004 §2.2"},
		{"command without session", strings.Replace(cmd, `,"session":"s"`, ``, 1), "AEP-0004 §2.2"},
		{"routed with seq", strings.Replace(strings.Replace(cmd, "control.attention.respond", "attention.routed", 1), `"session":"s"`, `"session":"s","seq":1`, 1), "AEP-0002 §7.3"},
	} {
		_, err := Parse([]byte(c.in))
		inv, ok := err.(*Invalid)
		if !ok || inv.Rule != c.rule {
			t.Errorf("%s: got %v, want a refusal under %s", c.name, err, c.rule)
		}
	}
	for _, ok := range []string{cmd, agent,
		strings.Replace(good, "tool.completed", "x.acme-co.session.note", 1),
		strings.Replace(good, "tool.completed", "future.thing", 1),                    // unknown types are carried
		strings.Replace(cmd, "control.attention.respond", "control.accepted", 1) + "", // an ack without seq is refused below
	} {
		e, err := Parse([]byte(ok))
		if ok == strings.Replace(cmd, "control.attention.respond", "control.accepted", 1) {
			if err == nil {
				t.Error("an ack without seq was admitted: acks are ordinary sequenced events")
			}
			continue
		}
		if err != nil {
			t.Errorf("refused %s: %v", ok, err)
			continue
		}
		if e.Command() != strings.Contains(ok, "control.attention") {
			t.Errorf("Command() wrong for %s", e.Type)
		}
	}
}

func TestIsCommand(t *testing.T) {
	for typ, want := range map[string]bool{
		"control.cancel": true, "control.attention.respond": true, "control.accepted": false,
		"control.rejected": false, "x.acme.control.reboot": true, "x.acme.tool.control": false, "tool.completed": false,
	} {
		if IsCommand(typ) != want {
			t.Errorf("IsCommand(%s) != %v", typ, want)
		}
	}
}

func TestPosLess(t *testing.T) {
	if !(Pos{0, 9}).Less(Pos{1, 0}) || (Pos{1, 0}).Less(Pos{0, 9}) || (Pos{1, 1}).Less(Pos{1, 1}) {
		t.Error("order")
	}
}

// FuzzParse: any input is refused or admitted without panic, and what is
// admitted is one JSON object on one line whose attributes read back.
func FuzzParse(f *testing.F) {
	f.Add([]byte(good))
	f.Add([]byte(`{"aep":"0.1","id":"g1","type":"agent.idle","time":"2026-07-03T10:15:04Z","source":"aep://h/agent/a","agent":"a"}`))
	f.Add([]byte("{\n\"a\":1}"))
	f.Add([]byte(`{"aep":"0.1","\u0069d":"x","id":"y"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := Parse(b)
		if err != nil {
			if _, ok := err.(*Invalid); !ok {
				t.Fatalf("refusal of another kind: %v", err)
			}
			return
		}
		if bytes.ContainsAny(e.Raw, "\n\r") || !json.Valid(e.Raw) {
			t.Fatalf("admitted raw is not one JSON line: %q", e.Raw)
		}
		var m map[string]any
		if err := json.Unmarshal(e.Raw, &m); err != nil {
			t.Fatalf("admitted raw is not an object: %v", err)
		}
		if m["id"] != e.ID || m["type"] != e.Type || m["source"] != e.Source {
			t.Fatalf("attributes do not read back: %+v", e)
		}
	})
}
