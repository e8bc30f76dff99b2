package relay_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSSE holds /stream to AEP-0003 §3.3: the filter (and an invalid one
// refused), the message shape (event, id session:epoch:seq, data as
// ingested; agent-scoped events without id), from with positions, all,
// live=0, and Last-Event-ID.
func TestSSE(t *testing.T) {
	p := startRelay(t, "")
	ask := mkEvent("attention.requested", "a", "s1", 0, `,"severity":"notice"`)
	tool := mkEvent("tool.completed", "a", "s1", 1, "")
	idle := mkEvent("agent.idle", "a", "", -1, "")
	other := mkEvent("tool.completed", "b", "s2", 0, "")
	attn := p.stream(q("filter", `{"type":["attention.*"],"severity":{"gte":"notice"}}`))
	every := p.stream(nil)
	p.post(strings.Join([]string{ask, tool, idle, other}, "\n"), "application/x-ndjson", "")
	if m := attn.next(false); m.Data != ask || m.Event != "attention.requested" || m.ID != "s1:0:0" {
		t.Errorf("filtered: %+v", m)
	}
	got := every.events(4)
	if got[2].Data != idle || got[2].HasID {
		t.Errorf("agent-scoped event: %+v (no id line: not a resumable position)", got[2])
	}
	if got[1].ID != "s1:0:1" || got[3].ID != "s2:0:0" {
		t.Errorf("ids %q %q", got[1].ID, got[3].ID)
	}

	for _, c := range []struct {
		query []string
		hdr   []string
		want  []string
	}{
		{[]string{"from", `[{"session":"s1","epoch":0,"seq":0}]`, "live", "0"}, nil, []string{tool}},
		{[]string{"from", `[{"session":"s1","epoch":0,"seq":0},{"session":"s2","epoch":0,"seq":-1}]`, "live", "0"}, nil, []string{tool, other}},
		{[]string{"from", "all", "live", "0", "filter", `{"agent":"a"}`}, nil, []string{ask, tool}},
		{[]string{"live", "0"}, []string{"Last-Event-ID", "s1:0:0"}, []string{tool}},
		{[]string{"live", "0", "from", `[{"session":"s2","epoch":0,"seq":-1}]`}, []string{"Last-Event-ID", "s1:0:0"}, []string{other}}, // from wins
	} {
		ms := p.stream(q(c.query...), c.hdr...).rest()
		var data []string
		for _, m := range ms {
			if m.Data != "" {
				data = append(data, m.Data)
			}
		}
		if strings.Join(data, "\n") != strings.Join(c.want, "\n") {
			t.Errorf("%v %v: got\n%s\nwant\n%s", c.query, c.hdr, strings.Join(data, "\n"), strings.Join(c.want, "\n"))
		}
	}

	for _, c := range []struct {
		query  []string
		hdr    []string
		status int
		code   string
	}{
		{[]string{"filter", `{"data":1}`}, nil, 400, "invalid-filter"},
		{[]string{"filter", `{"Bad-Key":1}`}, nil, 400, "invalid-filter"},
		{[]string{"filter", `not json`}, nil, 400, "invalid-filter"},
		{[]string{"capture", "most"}, nil, 400, "invalid-filter"},
		{[]string{"from", `{"session":"s1"}`}, nil, 400, "invalid-filter"},
		{[]string{"from", `[{"session":"s1"}]`}, nil, 400, "invalid-filter"},
		{[]string{"from", `[` + strings.Repeat(`{"session":"s","epoch":0,"seq":0},`, 600) + `{"session":"s","epoch":0,"seq":0}]`}, nil, 400, "limit-exceeded"},
		{nil, []string{"Last-Event-ID", "garbage"}, 400, "invalid-filter"},
	} {
		s := p.stream(q(c.query...), c.hdr...)
		var m map[string]any
		json.Unmarshal(s.Body, &m)
		if s.Status != c.status || m["error"] != c.code {
			t.Errorf("%v: %d %s", c.query, s.Status, s.Body)
		}
	}
}

// TestSSEReplayExhausted: a resume from before what the buffer still holds
// gets the replay-exhausted comment with the earliest held position
// before the events; replay-all never does.
func TestSSEReplayExhausted(t *testing.T) {
	p := startRelay(t, "", "--buffer", "3")
	var lines []string
	for i := 0; i < 6; i++ {
		lines = append(lines, mkEvent("progress.status", "a", "s", i, ""))
	}
	p.post(strings.Join(lines, "\n"), "application/x-ndjson", "")
	ms := p.stream(q("from", `[{"session":"s","epoch":0,"seq":0}]`, "live", "0")).rest()
	if len(ms) != 4 || ms[0].Comment != "replay-exhausted s 0:3" || ms[1].Data != lines[3] || ms[3].Data != lines[5] {
		t.Errorf("exhausted replay: %+v", ms)
	}
	ms = p.stream(q("from", "all", "live", "0")).rest()
	for _, m := range ms {
		if strings.HasPrefix(m.Comment, "replay-exhausted") {
			t.Errorf("replay-all declared a gap: %+v", ms)
		}
	}
	if countEvents(ms) != 3 {
		t.Errorf("replay-all: %+v", ms)
	}
}

// TestSSEPing: the heartbeat comment comes at the configured interval.
func TestSSEPing(t *testing.T) {
	p := startRelay(t, "", "--ping", "50ms")
	s := p.stream(nil)
	for {
		m := s.next(true)
		if m.Comment == "ping" {
			return
		}
	}
}

// TestSSECapture: a capture ceiling down-levels what is delivered
// (AEP-0003 §6.4): free text gated above metadata never reaches a metadata
// subscriber, capture says metadata, structural fields stay; an event
// already within the ceiling goes out byte for byte.
func TestSSECapture(t *testing.T) {
	p := startRelay(t, "")
	md := p.stream(q("capture", "metadata"))
	full := p.stream(nil)
	run := mkEvent("run.started", "a", "s", 0, `,"run":"r1","capture":"redacted","data":{"trigger":"user","prompt":"CANARY do not deliver"}`)
	meta := mkEvent("tool.completed", "a", "s", 1, `,"capture":"metadata","data":{"tool":{"name":"Bash"},"status":"success","duration_ms":3}`)
	p.post(run+"\n"+meta, "application/x-ndjson", "")
	got := md.events(2)
	if strings.Contains(got[0].Data, "CANARY") {
		t.Fatalf("free text leaked past a metadata ceiling: %s", got[0].Data)
	}
	var ev map[string]any
	json.Unmarshal([]byte(got[0].Data), &ev)
	data, _ := ev["data"].(map[string]any)
	if ev["capture"] != "metadata" || data["trigger"] != "user" || ev["id"] != "a-s-0" || ev["run"] != "r1" {
		t.Errorf("down-leveled: %s", got[0].Data)
	}
	if !strings.HasPrefix(got[0].Data, `{"aep":"0.1","id":"a-s-0","type":"run.started"`) {
		t.Errorf("attribute order not kept: %s", got[0].Data)
	}
	if got[1].Data != meta {
		t.Errorf("an event within the ceiling was rewritten: %s", got[1].Data)
	}
	if f := full.events(2); f[0].Data != run {
		t.Errorf("no ceiling: %s", f[0].Data)
	}
}

// TestFollowLogs: what a hook writes to $AEP_HOME/logs reaches a subscriber
// live, byte for byte, without any hook change.
func TestFollowLogs(t *testing.T) {
	home := t.TempDir()
	p := startRelay(t, home)
	s := p.stream(nil)
	dir := filepath.Join(home, "logs", "claude-code")
	os.MkdirAll(dir, 0o700)
	f, err := os.OpenFile(filepath.Join(dir, "sess.jsonl"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for i := 0; i < 3; i++ {
		line := mkEvent("tool.completed", "claude-code", "sess", i, "")
		fmt.Fprintln(f, line)
		if m := s.next(false); m.Data != line {
			t.Fatalf("event %d: %+v", i, m)
		}
	}
	// A line that is not an event is put aside, and the next one flows.
	fmt.Fprintln(f, `{"not":"an event"}`)
	line := mkEvent("tool.completed", "claude-code", "sess", 3, "")
	fmt.Fprintln(f, line)
	if m := s.next(false); m.Data != line {
		t.Fatalf("after a bad line: %+v", m)
	}
	b, _ := os.ReadFile(filepath.Join(home, "relay", "rejected", "local.jsonl"))
	if !strings.Contains(string(b), `"not":"an event"`) || !strings.Contains(string(b), "AEP-0001 §5.1") {
		t.Errorf("the bad line was not put aside with its rule: %s", b)
	}
}
