package opencode

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/aep-hook/aep-hook/adapters/forward"
	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/shim"
)

func TestDecodeForms(t *testing.T) {
	for _, tc := range []struct {
		name, line         string
		kind               mapping.Kind
		method, evName, id string
		thread, session    string
		raw                string
	}{
		{"plugin bus", `{"kind":"bus","event":{"id":"evt_1","type":"session.idle","properties":{"sessionID":"s"}}}`,
			mapping.KindEvent, "event", "session.idle", "evt_1", "", "", `{"id":"evt_1","type":"session.idle","properties":{"sessionID":"s"}}`},
		{"plugin tool hook", `{"kind":"tool.before","input":{"tool":"bash"},"output":{"args":{}}}`,
			mapping.KindEvent, "tool.execute.before", "", "", "", "", `{"kind":"tool.before","input":{"tool":"bash"},"output":{"args":{}}}`},
		{"plugin permission.ask", `{"kind":"permission.ask","permission":{"id":"p"}}`,
			mapping.KindEvent, "permission.ask", "", "", "", "", `{"id":"p"}`},
		{"stream event", `{"id":"evt_2","type":"server.connected","properties":{}}`,
			mapping.KindEvent, "", "server.connected", "evt_2", "", "", `{"id":"evt_2","type":"server.connected","properties":{}}`},
		{"global wrapper", `{"directory":"/p","project":"x","payload":{"id":"evt_3","type":"file.edited","properties":{}}}`,
			mapping.KindEvent, "", "file.edited", "evt_3", "/p", "", `{"id":"evt_3","type":"file.edited","properties":{}}`},
		{"catch-up record", `{"kind":"record","name":"message","session":"s","record":{"id":"m"}}`,
			mapping.KindRecord, "", "message", "", "", "s", `{"id":"m"}`},
		{"catch-up end", `{"kind":"end","session":"s","reason":"idle"}`,
			mapping.KindEnd, "", "", "", "", "s", ``},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ms, err := Decode([]byte(tc.line))
			if err != nil || len(ms) != 1 {
				t.Fatalf("Decode: %v %v", ms, err)
			}
			f := ms[0].Facts
			if f.Kind != tc.kind || f.Method != tc.method || f.Name != tc.evName || f.ID != tc.id || f.Thread != tc.thread || f.Session != tc.session {
				t.Errorf("facts %+v", f)
			}
			if string(ms[0].Raw) != tc.raw {
				t.Errorf("raw %s, want %s", ms[0].Raw, tc.raw)
			}
		})
	}
	for _, bad := range []string{`[]`, `{"kind":"nope"}`, `{"kind":"bus","event":1}`, `not json`} {
		if _, err := Decode([]byte(bad)); err == nil {
			t.Errorf("Decode(%s) accepted", bad)
		}
	}
}

func TestBridgeItemsDropTransport(t *testing.T) {
	b := &Bridge{}
	for _, data := range []string{
		`{"id":"evt_1","type":"server.heartbeat","properties":{}}`,
		`{"payload":{"id":"evt_1","type":"sync","syncEvent":{}}}`,
		`not json`,
	} {
		if it := b.item([]byte(data)); len(it.Moments) != 0 || it.Key != "" {
			t.Errorf("%s: item %+v, want a bare keep-alive", data, it)
		}
	}
	it := b.item([]byte(`{"id":"evt_22cff3127001x","type":"session.status","properties":{"sessionID":"s","status":{"type":"busy"}}}`))
	if len(it.Moments) != 1 || it.Key != "evt_22cff3127001x" || it.Cursor != it.Key {
		t.Fatalf("item %+v", it)
	}
	if !b.busySessions()["s"] {
		t.Error("a busy status must be remembered for the catch-up")
	}
}

func TestBridgeAuthAndErrors(t *testing.T) {
	var gotUser, gotPass string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, p, ok := r.BasicAuth()
		if !ok || p != "pw" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		gotUser, gotPass = u, p
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte("data: {\"id\":\"evt_1\",\"type\":\"server.connected\",\"properties\":{}}\n\n"))
	}))
	defer srv.Close()
	base, _ := url.Parse(srv.URL)
	ctx := context.Background()
	if _, err := (&Bridge{Base: base, User: "kilo", Password: "wrong"}).Open(ctx); err == nil || !strings.Contains(err.Error(), "401") || strings.Contains(err.Error(), "wrong") {
		t.Fatalf("bad password: %v", err)
	}
	st, err := (&Bridge{Base: base, User: "kilo", Password: "pw"}).Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	it, err := st.Next()
	if err != nil || len(it.Moments) != 1 || it.Moments[0].Facts.Name != "server.connected" {
		t.Fatalf("first item %+v %v", it, err)
	}
	if gotUser != "kilo" || gotPass != "pw" {
		t.Errorf("basic auth %q:%q", gotUser, gotPass)
	}
}

// holdAll is a transport that holds every request until its context
// ends, as a server still booting holds /event, and tells gone it ended.
type holdAll struct{ gone chan struct{} }

func (h holdAll) RoundTrip(r *http.Request) (*http.Response, error) {
	<-r.Context().Done()
	h.gone <- struct{}{}
	return nil, r.Context().Err()
}

// TestOpenGivesUpOnHeldHeaders: a server still booting accepts /event and
// never answers; Open ends that request, waits longer next time, and once
// a server answers starts again from the first wait. The held requests are
// held by the transport: one sent to a server could still be on its way
// when a 1 ms wait ends, and never be held at all.
func TestOpenGivesUpOnHeldHeaders(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write([]byte("data: {\"id\":\"evt_1\",\"type\":\"server.connected\",\"properties\":{}}\n\n"))
	}))
	defer srv.Close()
	base, _ := url.Parse(srv.URL)
	held := holdAll{gone: make(chan struct{}, 1)}
	b := &Bridge{Base: base, ConnectTimeout: time.Millisecond, Client: &http.Client{Transport: held}}
	for _, want := range []time.Duration{2 * time.Millisecond, 4 * time.Millisecond} {
		if _, err := b.Open(context.Background()); err == nil || !strings.Contains(err.Error(), "no answer within") {
			t.Fatalf("Open on a held request: %v", err)
		}
		<-held.gone // the held request was ended, not left behind
		if got := b.headerWait(); got != want {
			t.Errorf("next wait %v, want %v", got, want)
		}
	}
	for range 20 {
		b.gaveUp(b.headerWait())
	}
	if got := b.headerWait(); got != maxConnectTimeout {
		t.Errorf("wait after many give-ups %v, want the cap %v", got, maxConnectTimeout)
	}
	b.ConnectTimeout = time.Minute // the cap's wait stands until an answer
	b.Client = nil                 // the server answers
	st, err := b.Open(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	if got := b.headerWait(); got != time.Minute {
		t.Errorf("wait after an answer %v, want the first wait again", got)
	}
}

func TestEventTime(t *testing.T) {
	now := time.Date(2026, 11, 30, 16, 0, 0, 0, time.UTC)
	got, ok := EventTime("evt_22cff3127001c8Mn6WUqeGWfYe", now)
	want := time.Date(2026, 11, 30, 15, 7, 31, 495e6, time.UTC)
	if !ok || !got.Equal(want) {
		t.Fatalf("EventTime = %v %v, want %v", got.UTC(), ok, want)
	}
	for _, bad := range []string{"", "evt", "evt_zz", "evt_22cff"} {
		if _, ok := EventTime(bad, now); ok {
			t.Errorf("EventTime(%q) ok", bad)
		}
	}
}

type collect struct{ ms []mapping.Moment }

func (c *collect) handle(ms []mapping.Moment) ([]shim.Result, error) {
	c.ms = append(c.ms, ms...)
	return make([]shim.Result, len(ms)), nil
}

type failures struct{ stages []string }

func (f *failures) Record(x shim.Failure) bool { f.stages = append(f.stages, x.Stage); return true }

func TestForwarder(t *testing.T) {
	in := strings.Join([]string{
		`{"kind":"bus","event":{"type":"session.idle","properties":{"sessionID":"s"}}}`,
		``,
		`garbage`,
		`{"kind":"tool.after","input":{"tool":"bash","sessionID":"s","callID":"c"},"output":{"output":"ok"}}`,
		`{"kind":"bus","event":{"type":"x","properties":{"pad":"` + strings.Repeat("a", forward.DefaultMaxLine) + `"}}}`,
		`{"kind":"bus","event":{"type":"session.created","properties":{"info":{"id":"s"}}}}`,
	}, "\n")
	c, f := &collect{}, &failures{}
	fw := &forward.Forwarder{Decode: Decode, Handle: c.handle, Errors: f, Name: "opencode", Nonce: func() string { return "n" }}
	st, err := fw.Run(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if st.Lines != 5 || len(c.ms) != 3 {
		t.Fatalf("read %d lines, handled %d moments", st.Lines, len(c.ms))
	}
	if c.ms[1].Facts.Method != "tool.execute.after" || c.ms[2].Facts.Name != "session.created" || c.ms[0].Nonce != "n" {
		t.Errorf("moments %+v", c.ms)
	}
	if strings.Join(f.stages, ",") != "parse,read" && strings.Join(f.stages, ",") != "read,parse" {
		t.Errorf("failures %v, want the garbage line and the long line", f.stages)
	}
}

func TestPluginSource(t *testing.T) {
	for vendor, want := range map[string]string{"opencode": `["forward", "opencode"]`, "kilo": `server: AepHook`} {
		src, err := PluginSource(vendor, `/opt/a "b"/aep-hook`)
		if err != nil || !strings.Contains(src, want) || strings.Contains(src, "__") || !strings.HasPrefix(src, PluginMarker) ||
			!strings.Contains(src, `process.env.AEP_HOOK_BIN || "/opt/a \"b\"/aep-hook"`) {
			t.Errorf("%s plugin: %v\n%s", vendor, err, src)
		}
	}
	if _, err := PluginSource("nope", "aep-hook"); err == nil {
		t.Error("unknown vendor accepted")
	}
}

func TestTurnsOver(t *testing.T) {
	user := func(id string, created int) string {
		return fmt.Sprintf(`{"info":{"id":%q,"role":"user","time":{"created":%d}}}`, id, created)
	}
	asst := func(created, completed int, finish, errName string) string {
		info := fmt.Sprintf(`"role":"assistant","finish":%q,"time":{"created":%d`, finish, created)
		if completed > 0 {
			info += fmt.Sprintf(`,"completed":%d`, completed)
		}
		info += "}"
		if errName != "" {
			info += fmt.Sprintf(`,"error":{"name":%q}`, errName)
		}
		return "{\"info\":{" + info + "}}"
	}
	for _, tc := range []struct {
		name string
		msgs []string
		want []int // indexes of the user messages that start a new turn
	}{
		{"one turn", []string{user("u1", 1), asst(2, 3, "stop", "")}, nil},
		{"two finished turns", []string{user("u1", 1), asst(2, 3, "stop", ""), user("u2", 4), asst(5, 6, "stop", "")}, []int{2}},
		{"aborted then a new turn", []string{user("u1", 1), asst(2, 3, "", "MessageAbortedError"), user("u2", 4)}, []int{2}},
		{"cut by a restart, next turn answered", []string{user("u1", 1), asst(2, 0, "", ""), user("u2", 4), asst(5, 6, "stop", "")}, []int{2}},
		{"steer while a step runs", []string{user("u1", 1), asst(2, 0, "", ""), user("u2", 3)}, nil},
		{"steer between tool steps", []string{user("u1", 1), asst(2, 3, "tool-calls", ""), user("u2", 4), asst(5, 6, "stop", "")}, nil},
		{"steer answered in the same loop", []string{user("u1", 1), asst(2, 5, "stop", ""), user("u2", 4), asst(6, 7, "stop", "")}, nil},
		{"prompt before any answer", []string{user("u1", 1), user("u2", 2), asst(3, 4, "stop", "")}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var msgs []json.RawMessage
			for _, m := range tc.msgs {
				msgs = append(msgs, json.RawMessage(m))
			}
			over := turnsOver(msgs)
			var got []int
			for i := range msgs {
				if over[i] {
					got = append(got, i)
				}
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("new turns at %v, want %v", got, tc.want)
			}
		})
	}
}

// TestForwarderServerExited: at the end of the plugin's pipe (the server
// exited) the forwarder hands the table one shutdown end per session the
// pipe named, in first-seen order, with the channel's posture; lines
// naming no session add none.
func TestForwarderServerExited(t *testing.T) {
	v, _ := mapping.Lookup("opencode")
	in := strings.Join([]string{
		`{"kind":"bus","event":{"type":"session.created","properties":{"sessionID":"s1","info":{"id":"s1"}}}}`,
		`{"kind":"bus","event":{"type":"plugin.added","properties":{"id":"x"}}}`,
		`{"kind":"tool.before","input":{"tool":"bash","sessionID":"s2","callID":"c"},"output":{"args":{}}}`,
		`{"kind":"bus","event":{"type":"session.idle","properties":{"sessionID":"s1"}}}`,
	}, "\n")
	c := &collect{}
	fw := &forward.Forwarder{Decode: Decode, Handle: c.handle, Name: "opencode", Nonce: func() string { return "n" },
		Mode: mapping.Primary, Ended: ServerExited,
		Session: func(m mapping.Moment) string {
			if _, s := v.Identify(m); s != mapping.UnknownSession {
				return s
			}
			return ""
		}}
	if _, err := fw.Run(strings.NewReader(in)); err != nil {
		t.Fatal(err)
	}
	var ends []string
	for _, m := range c.ms {
		if m.Facts.Kind == mapping.KindEnd {
			if m.Facts.Reason != "shutdown" || m.Nonce != "n" || m.Mode != mapping.Primary {
				t.Errorf("end moment %+v", m)
			}
			ends = append(ends, m.Facts.Session)
		}
	}
	if strings.Join(ends, ",") != "s1,s2" {
		t.Errorf("ends for %v, want s1,s2", ends)
	}
}
