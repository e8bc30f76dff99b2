package shim

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/redact"
)

// scripted is a vendor whose moments are their own drafts: {"session": S,
// "drafts": [...]}, so emitter behaviour is tested without any real table.
func scripted() mapping.Vendor {
	return mapping.Vendor{
		Name: "test-agent",
		Identify: func(m mapping.Moment) (string, string) {
			return "Moment", mapping.Str(m.Raw, "session")
		},
		Map: func(m mapping.Moment, st *mapping.State) ([]mapping.Draft, error) {
			var in struct {
				Drafts []mapping.Draft `json:"drafts"`
			}
			err := json.Unmarshal(m.Raw, &in)
			return in.Drafts, err
		},
	}
}

type lines struct {
	mu  sync.Mutex
	out []string
}

func (l *lines) Write(_, _ string, ls [][]byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, b := range ls {
		l.out = append(l.out, string(b))
	}
	return nil
}

func testEmitter(sink Sink, store Store) *Emitter {
	clock := time.Date(2026, 7, 3, 10, 15, 4, 221_000_000, time.UTC)
	return &Emitter{
		Host: "host-a", Policy: redact.DefaultPolicy(), Pipeline: redact.NewPipeline(redact.Options{}),
		Store: store, Sink: sink, IDs: NewIDs(),
		Now: func() time.Time { clock = clock.Add(time.Millisecond); return clock },
	}
}

func emit(t *testing.T, e *Emitter, raw string) Result {
	t.Helper()
	res, err := e.Handle(scripted(), mapping.Moment{Raw: []byte(raw)})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestEnvelope(t *testing.T) {
	sink := &lines{}
	e := testEmitter(sink, NewMemStore())
	emit(t, e, `{"session":"s/1","drafts":[{"Type":"run.started","Run":"r1"},{"Type":"agent.idle","Run":"r1"},{"Type":"run.finished","Run":"r1"}]}`)
	if len(sink.out) != 3 {
		t.Fatalf("got %d lines", len(sink.out))
	}
	var evs []map[string]any
	for _, l := range sink.out {
		if !strings.HasSuffix(l, "\n") || strings.Count(l, "\n") != 1 {
			t.Fatalf("line not newline-terminated once: %q", l)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		evs = append(evs, m)
	}
	start, idle, fin := evs[0], evs[1], evs[2]
	if start["aep"] != "0.1" || len(start["id"].(string)) != 26 {
		t.Errorf("aep/id: %v %v", start["aep"], start["id"])
	}
	if start["time"] != "2026-07-03T10:15:04.222Z" {
		t.Errorf("time = %v", start["time"])
	}
	if start["source"] != "aep://host-a/agent/test-agent/session/s%2F1" || start["session"] != "s/1" {
		t.Errorf("source/session = %v %v", start["source"], start["session"])
	}
	if start["seq"] != 0.0 || fin["seq"] != 1.0 || start["epoch"] != 0.0 {
		t.Errorf("seq: %v %v epoch %v", start["seq"], fin["seq"], start["epoch"])
	}
	for _, k := range []string{"session", "run", "step", "seq", "epoch"} {
		if _, ok := idle[k]; ok {
			t.Errorf("agent-scoped event carries %s", k)
		}
	}
	if idle["source"] != "aep://host-a/agent/test-agent" {
		t.Errorf("agent source = %v", idle["source"])
	}
	if fin["cause"] != start["id"] {
		t.Errorf("terminal cause %v, want the start %v", fin["cause"], start["id"])
	}
	if start["capture"] != "metadata" {
		t.Errorf("capture = %v", start["capture"])
	}
	// spec attribute order
	keys := []string{`"aep"`, `"id"`, `"type"`, `"time"`, `"source"`, `"agent"`, `"session"`, `"run"`, `"seq"`, `"epoch"`, `"cause"`, `"capture"`}
	last := -1
	for _, k := range keys {
		i := strings.Index(sink.out[2], k)
		if i < last {
			t.Errorf("attribute %s out of spec order in %s", k, sink.out[2])
		}
		last = i
	}
	if strings.Contains(sink.out[0], "null") {
		t.Errorf("null attribute: %s", sink.out[0])
	}
}

func TestTerminalExclusivity(t *testing.T) {
	sink := &lines{}
	e := testEmitter(sink, NewMemStore())
	emit(t, e, `{"session":"s","drafts":[{"Type":"run.started","Run":"r"},{"Type":"run.finished","Run":"r"}]}`)
	res := emit(t, e, `{"session":"s","drafts":[{"Type":"run.started","Run":"r"},{"Type":"run.cancelled","Run":"r"},{"Type":"session.ended"},{"Type":"session.ended"}]}`)
	if res.Suppressed != 3 || len(sink.out) != 3 {
		t.Fatalf("suppressed %d, lines %d: %v", res.Suppressed, len(sink.out), sink.out)
	}
}

func TestRefs(t *testing.T) {
	sink := &lines{}
	e := testEmitter(sink, NewMemStore())
	emit(t, e, `{"session":"s","drafts":[{"Type":"attention.requested","Mark":"attn:1","Subject":"Bash"},{"Type":"tool.requested","Data":{"tool":{"name":"Bash","call_id":"c1"}}}]}`)
	emit(t, e, `{"session":"s","drafts":[{"Type":"attention.resolved","SubjectRef":"attn:1","CauseRef":"attn:1","Data":{"resolution":"dismissed"}},{"Type":"tool.completed","Data":{"tool":{"name":"Bash","call_id":"c1"}}}]}`)
	var ev [4]map[string]any
	for i, l := range sink.out {
		json.Unmarshal([]byte(l), &ev[i])
	}
	if ev[2]["subject"] != ev[0]["id"] || ev[2]["cause"] != ev[0]["id"] {
		t.Errorf("attention lifecycle subject/cause = %v/%v, want %v", ev[2]["subject"], ev[2]["cause"], ev[0]["id"])
	}
	if ev[3]["cause"] != ev[1]["id"] {
		t.Errorf("tool terminal cause = %v, want %v", ev[3]["cause"], ev[1]["id"])
	}
	if ev[0]["severity"] != "notice" || ev[0]["capture"] != "redacted" {
		t.Errorf("attention.requested severity/capture = %v/%v", ev[0]["severity"], ev[0]["capture"])
	}
}

// TestFileStoreRecovery: whatever happened to a session's state (lost,
// swept, truncated, corrupt) and to its log (rotated away, emptied), the
// next event takes a position in a higher epoch than any used before, by
// one clock rule.
func TestFileStoreRecovery(t *testing.T) {
	home := t.TempDir()
	log := &JSONL{Root: filepath.Join(home, "logs")}
	clock := steppingClock()
	newEmitter := func() *Emitter {
		return testEmitter(log, &FileStore{Dir: filepath.Join(home, "state"), Log: log, Now: clock})
	}
	e := newEmitter()
	for range 3 {
		emit(t, e, `{"session":"s","drafts":[{"Type":"progress.status"}]}`)
	}
	statePath := filepath.Join(home, "state", "test-agent", "s.state")
	logPath := log.Path("test-agent", "s")
	var all []Position
	rotate := func() {
		all = append(all, logPositions(t, logPath)...)
		os.Remove(logPath)
	}
	steps := []struct {
		name string
		do   func()
	}{
		{"state lost, log kept", func() { os.Remove(statePath) }},
		{"state swept, log rotated away", func() { os.Remove(statePath); rotate() }},
		{"state truncated, log rotated away", func() { os.WriteFile(statePath, nil, 0o600); rotate() }},
		{"state corrupt, log emptied", func() {
			os.WriteFile(statePath, []byte("{garbage"), 0o600)
			all = append(all, logPositions(t, logPath)...)
			os.WriteFile(logPath, nil, 0o600)
		}},
		{"state corrupt, log kept", func() { os.WriteFile(statePath, []byte(`{"epoch":-1}`), 0o600) }},
	}
	for _, st := range steps {
		st.do()
		emit(t, newEmitter(), `{"session":"s","drafts":[{"Type":"progress.status"}]}`)
		ps := append(append([]Position(nil), all...), logPositions(t, logPath)...)
		last, prev := ps[len(ps)-1], ps[len(ps)-2]
		if last.Seq != 0 || last.Epoch <= prev.Epoch {
			t.Errorf("%s: %v after %v, want a higher epoch", st.name, last, prev)
		}
		increasing(t, ps)
	}
}

func TestFileStoreConcurrent(t *testing.T) {
	home := t.TempDir()
	log := &JSONL{Root: filepath.Join(home, "logs")}
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e := testEmitter(log, &FileStore{Dir: filepath.Join(home, "state"), Log: log})
			for range 25 {
				if _, err := e.Handle(scripted(), mapping.Moment{Raw: []byte(`{"session":"s","drafts":[{"Type":"progress.status"},{"Type":"progress.status"}]}`)}); err != nil {
					t.Errorf("worker %d: %v", w, err)
				}
			}
		}()
	}
	wg.Wait()
	b, _ := os.ReadFile(log.Path("test-agent", "s"))
	ls := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(ls) != 400 {
		t.Fatalf("%d lines", len(ls))
	}
	for i, l := range ls {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %d torn: %v", i, err)
		}
		if m["seq"].(float64) != float64(i) {
			t.Fatalf("line %d has seq %v", i, m["seq"])
		}
	}
}

func TestFileStoreSweep(t *testing.T) {
	home := t.TempDir()
	log := &JSONL{Root: filepath.Join(home, "logs")}
	st := &FileStore{Dir: filepath.Join(home, "state"), Log: log}
	e := testEmitter(log, st)
	for _, s := range []string{"old", "fresh", "held"} {
		emit(t, e, `{"session":"`+s+`","drafts":[{"Type":"progress.status"}]}`)
	}
	dir := filepath.Join(home, "state", "test-agent")
	past := time.Now().Add(-48 * time.Hour)
	for _, s := range []string{"old", "held"} {
		os.Chtimes(filepath.Join(dir, s+".state"), past, past)
	}
	held, _ := os.OpenFile(filepath.Join(dir, "held.state"), os.O_RDWR, 0)
	defer held.Close()
	if err := lockFile(held); err != nil {
		t.Fatal(err)
	}
	if n := st.Sweep("test-agent", 24*time.Hour, 10); n != 1 {
		t.Fatalf("swept %d, want 1 (old; fresh is recent, held is locked)", n)
	}
	unlockFile(held)
	for s, want := range map[string]bool{"old": false, "fresh": true, "held": true} {
		if _, err := os.Stat(filepath.Join(dir, s+".state")); (err == nil) != want {
			t.Errorf("%s.state present = %v, want %v", s, err == nil, want)
		}
	}
	// the swept session comes back in a higher epoch, after its log
	before := logPositions(t, log.Path("test-agent", "old"))
	res := emit(t, e, `{"session":"old","drafts":[{"Type":"progress.status"}]}`)
	if ep := *res.Events[0].Epoch; ep <= before[0].Epoch {
		t.Errorf("returning session epoch %d, want above %d", ep, before[0].Epoch)
	}
}

// TestDraftSession: drafts addressed to another session land in that
// session's log with its own positions, references and terminal
// exclusivity, while the moment's session keeps its own order; a file store
// takes the two locks nested without waiting on itself.
func TestDraftSession(t *testing.T) {
	home := t.TempDir()
	log := &JSONL{Root: filepath.Join(home, "logs")}
	stores := map[string]func() Store{
		"mem":  func() Store { return NewMemStore() },
		"file": func() Store { return &FileStore{Dir: filepath.Join(home, "state"), Log: log} },
	}
	for name, store := range stores {
		t.Run(name, func(t *testing.T) {
			sink := &sessionLines{}
			e := testEmitter(sink, store())
			s, r := "s-"+name, "s-"+name+"~r1"
			res := emit(t, e, `{"session":"`+s+`","drafts":[{"Type":"progress.status"},{"Type":"session.ended"},`+
				`{"Type":"session.started","Session":"`+r+`"},{"Type":"run.started","Run":"p","Session":"`+r+`"}]}`)
			if len(res.Events) != 4 || res.Session != s {
				t.Fatalf("result: %d events, session %q", len(res.Events), res.Session)
			}
			emit(t, e, `{"session":"`+s+`","drafts":[{"Type":"run.finished","Run":"p","Session":"`+r+`"},`+
				`{"Type":"session.ended","Session":"`+r+`"},{"Type":"session.ended","Session":"`+r+`"},{"Type":"progress.status","Session":"`+s+`"}]}`)
			got := sink.positions()
			want := map[string][]string{
				s: {"progress.status 0", "session.ended 1", "progress.status 2"},
				r: {"session.started 0", "run.started 1", "run.finished 2", "session.ended 3"},
			}
			for _, sess := range []string{s, r} {
				if strings.Join(got[sess], ", ") != strings.Join(want[sess], ", ") {
					t.Errorf("%s: %v, want %v", sess, got[sess], want[sess])
				}
			}
			evs := sink.events(r)
			if evs[2]["cause"] != evs[1]["id"] || evs[1]["session"] != r ||
				evs[1]["source"] != "aep://host-a/agent/test-agent/session/"+r {
				t.Errorf("redirected run: cause %v (want %v), session %v, source %v", evs[2]["cause"], evs[1]["id"], evs[1]["session"], evs[1]["source"])
			}
		})
	}
}

// sessionLines is a sink keeping lines per session.
type sessionLines struct {
	mu  sync.Mutex
	got map[string][]string
}

func (l *sessionLines) Write(_, session string, ls [][]byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.got == nil {
		l.got = map[string][]string{}
	}
	for _, b := range ls {
		l.got[session] = append(l.got[session], string(b))
	}
	return nil
}

func (l *sessionLines) events(session string) []map[string]any {
	var out []map[string]any
	for _, s := range l.got[session] {
		var m map[string]any
		json.Unmarshal([]byte(s), &m)
		out = append(out, m)
	}
	return out
}

// positions lists "type seq" per session, in write order.
func (l *sessionLines) positions() map[string][]string {
	out := map[string][]string{}
	for s := range l.got {
		for _, m := range l.events(s) {
			out[s] = append(out[s], fmt.Sprintf("%v %v", m["type"], m["seq"]))
		}
	}
	return out
}

// TestDraftSessionBatch: in one batch, each redirected event is reported
// in the result of the moment it came from.
func TestDraftSessionBatch(t *testing.T) {
	sink := &sessionLines{}
	e := testEmitter(sink, NewMemStore())
	ms := []mapping.Moment{
		{Raw: []byte(`{"session":"s","drafts":[{"Type":"progress.status","Session":"r"}]}`)},
		{Raw: []byte(`{"session":"s","drafts":[{"Type":"progress.status"}]}`)},
		{Raw: []byte(`{"session":"s","drafts":[{"Type":"session.started","Session":"r"},{"Type":"progress.status","Session":"r"}]}`)},
	}
	rs, err := e.HandleBatch(scripted(), ms)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{"r:0", "s:0", "r:1 r:2"} {
		var got []string
		for _, ev := range rs[i].Events {
			got = append(got, fmt.Sprintf("%s:%d", ev.Session, *ev.Seq))
		}
		if strings.Join(got, " ") != want {
			t.Errorf("moment %d: %v, want %s", i, got, want)
		}
	}
}

// TestDraftTime: a draft that says when its moment happened (an OTLP
// record's timestamp) gets that time, and its id sorts by it.
func TestDraftTime(t *testing.T) {
	sink := &lines{}
	e := testEmitter(sink, NewMemStore())
	res := emit(t, e, `{"session":"s","drafts":[{"Type":"progress.status","Time":"2026-07-01T15:17:20.123456Z"},{"Type":"progress.status"}]}`)
	if got := res.Events[0].Time; got != "2026-07-01T15:17:20.123Z" {
		t.Errorf("record time: %s", got)
	}
	if got := res.Events[1].Time; got != "2026-07-03T10:15:04.222Z" {
		t.Errorf("clock time: %s", got)
	}
	if res.Events[0].ID >= res.Events[1].ID {
		t.Errorf("ids %s, %s: the earlier moment's id should sort first", res.Events[0].ID, res.Events[1].ID)
	}
}

// TestDigestMissing: a digest a table could not fill is not written as a
// field: the event names it in digests_missing, beside its structural
// facts.
func TestDigestMissing(t *testing.T) {
	sink := &lines{}
	e := testEmitter(sink, NewMemStore())
	res := emit(t, e, `{"session":"s","drafts":[{"Type":"tool.completed","Data":{"tool":{"name":"Bash","call_id":"c1"},`+
		`"result_digest":"\u0000digest missing","args_digest":"1df8bccaec747dc615b50678f35bf5b5"}}]}`)
	d := res.Events[0].Data
	if _, ok := d["result_digest"]; ok {
		t.Errorf("the missing digest was written: %v", d)
	}
	if got, _ := d["digests_missing"].([]string); len(got) != 1 || got[0] != "result_digest" {
		t.Errorf("digests_missing = %v", d["digests_missing"])
	}
	if d["args_digest"] != "1df8bccaec747dc615b50678f35bf5b5" || d["tool"] == nil {
		t.Errorf("structural facts lost: %v", d)
	}
}

// TestMarkLost: a moment given up at its deadline leaves an error.raised
// in its session's log naming the hook, written without the session's
// lock (which its own process may hold), past the log's last position.
func TestMarkLost(t *testing.T) {
	home := t.TempDir()
	e, _, log := fileEmitter(home, 0)
	emit(t, e, moment)
	at := time.Unix(1_800_000_000, 0)
	if err := e.MarkLost(scripted(), "s", "PostToolUse", at, "deadline"); err != nil {
		t.Fatal(err)
	}
	emit(t, e, moment)
	ps := logPositions(t, log.Path("test-agent", "s"))
	increasing(t, ps)
	b, _ := os.ReadFile(log.Path("test-agent", "s"))
	ls := strings.Split(strings.TrimSpace(string(b)), "\n")
	var mark map[string]any
	json.Unmarshal([]byte(ls[1]), &mark)
	d, _ := mark["data"].(map[string]any)
	if mark["type"] != "error.raised" || mark["subject"] != "PostToolUse" || d["code"] != LostCode || d["hook"] != "PostToolUse" ||
		mark["time"] != "2027-01-15T08:00:00.000Z" {
		t.Errorf("mark %s", ls[1])
	}
}
