package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/aep-hook/aep-hook/consumer/answer"
	"github.com/aep-hook/aep-hook/harness/relaytest"
)

// The stream bridges answering over control, through the built binary: a
// real `aep-hook relay`, `aep-hook follow opencode|kimi-web --control`
// against a fake server that behaves as the real ones do on the routes
// the bridge writes (it broadcasts the reply it applied on its stream),
// and the AEP-0004 sender package.

const (
	ctlWait    = 30 * time.Second // a failure bound against a hang, never a measure
	ctlEmitTok = "emit-follow-token-0123456789"
	ctlAlice   = "alice-follow-token-0123456789"
	ctlHost    = "follow-host"
)

// ctlFleet is a relay with an emitter token for the follower and a
// commanding consumer, alice.
type ctlFleet struct {
	t    *testing.T
	home string
	url  string
}

func newCtlFleet(t *testing.T) *ctlFleet {
	t.Helper()
	home := t.TempDir()
	tokens := filepath.Join(t.TempDir(), "tokens")
	lines := []string{
		`{"token":"` + ctlEmitTok + `","identity":"emitter:` + ctlHost + `/*","scopes":["write:*"]}`,
		`{"token":"` + ctlAlice + `","identity":"consumer:alice","scopes":["subscribe:*","read:*","control:control.*"]}`,
	}
	if err := os.WriteFile(tokens, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, addr := relaytest.StartRelay(t, relaytest.Relay{
		Bin: bin, Env: append(os.Environ(), "AEP_HOME="+t.TempDir()), Args: []string{"--tokens", tokens}, Wait: ctlWait,
	})
	return &ctlFleet{t: t, home: home, url: "ws://" + addr + "/socket"}
}

// follow starts `aep-hook follow vendor --url server` with control on
// against relay (extra arguments last) and waits for the link.
func (f *ctlFleet) follow(vendor, server, relay string, up bool, extra ...string) *relaytest.Proc {
	f.t.Helper()
	env := []string{"PATH=" + os.Getenv("PATH"), "AEP_HOME=" + f.home, "AEP_HOST=" + ctlHost, "TMPDIR=" + f.t.TempDir(),
		"AEP_RELAY_TOKEN=" + ctlEmitTok}
	args := append([]string{"follow", vendor, "--url", server, "--control", "--relay", relay}, extra...)
	p := relaytest.Start(f.t, bin, env, args...)
	f.t.Cleanup(func() {
		p.Stop(os.Interrupt, ctlWait)
		p.Check(f.t, "follow")
	})
	line := "control link up"
	if !up {
		line = "control link down"
	}
	p.Await(f.t, "follow", regexp.MustCompile(regexp.QuoteMeta(line)), ctlWait)
	return p
}

func (f *ctlFleet) sender() *answer.Conn {
	f.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), ctlWait)
	defer cancel()
	cn, err := (&answer.Client{URL: f.url, Token: ctlAlice, Agent: "alice", Host: "sender-host", Window: 5 * time.Second}).Dial(ctx)
	if err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() { cn.Close() })
	return cn
}

// pending waits for the answerable request subject names (the vendor id)
// in session.
func (f *ctlFleet) pending(cn *answer.Conn, session, subject string) answer.Request {
	f.t.Helper()
	deadline := time.Now().Add(ctlWait)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), ctlWait)
		rs, err := cn.Pending(ctx)
		cancel()
		if err != nil {
			f.t.Fatal(err)
		}
		for _, r := range rs {
			if r.Session == session && r.Subject == subject && r.Answerable {
				return r
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	f.t.Fatalf("no answerable request %s in session %s", subject, session)
	return answer.Request{}
}

// events reads a session's log.
func (f *ctlFleet) events(agent, session string) []map[string]any {
	f.t.Helper()
	b, err := os.ReadFile(filepath.Join(f.home, "logs", agent, session+".jsonl"))
	if err != nil {
		f.t.Fatal(err)
	}
	var out []map[string]any
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var e map[string]any
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			f.t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

// waitLog waits until the session's log holds an event match accepts.
func (f *ctlFleet) waitLog(agent, session string, match func(e map[string]any) bool) []map[string]any {
	f.t.Helper()
	deadline := time.Now().Add(ctlWait)
	for time.Now().Before(deadline) {
		if _, err := os.Stat(filepath.Join(f.home, "logs", agent, session+".jsonl")); err == nil {
			evs := f.events(agent, session)
			for _, e := range evs {
				if match(e) {
					return evs
				}
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	f.t.Fatalf("the log of %s never held the event", session)
	return nil
}

func ofType(typ string) func(map[string]any) bool {
	return func(e map[string]any) bool { return e["type"] == typ }
}

// about are the attention events about request id (its own and those
// whose subject it is).
func about(evs []map[string]any, id string) []map[string]any {
	var out []map[string]any
	for _, e := range evs {
		if e["id"] == id || e["subject"] == id && strings.HasPrefix(fmt.Sprint(e["type"]), "attention.") {
			out = append(out, e)
		}
	}
	return out
}

func dataOf(e map[string]any) map[string]any {
	d, _ := e["data"].(map[string]any)
	return d
}

func respondTo(t *testing.T, cn *answer.Conn, r answer.Request, a answer.Answer) answer.Outcome {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), ctlWait)
	defer cancel()
	out, err := cn.Respond(ctx, r, a)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// fakeOpenCode is an OpenCode server as far as the bridge reads and
// writes it: the event stream the test feeds, empty REST lists, and the
// reply and abort routes, which record their bodies and broadcast what
// the real server does (permission.replied, question.replied,
// question.rejected; an abort ends the turn: the message aborted, then
// idle).
type fakeOpenCode struct {
	*httptest.Server
	events chan string
	mu     sync.Mutex
	posts  []string // "PATH BODY"
	n      int
}

func newFakeOpenCode(t *testing.T) *fakeOpenCode {
	f := &fakeOpenCode{events: make(chan string, 64)}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /event", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprintf(w, "data: %s\n\n", `{"id":"evt_000000000001aaaaaaaaaaaaaa","type":"server.connected","properties":{}}`)
		w.(http.Flusher).Flush()
		for {
			select {
			case <-r.Context().Done():
				return
			case e := <-f.events:
				fmt.Fprintf(w, "data: %s\n\n", e)
				w.(http.Flusher).Flush()
			}
		}
	})
	for _, p := range []string{"/session/status"} {
		mux.HandleFunc("GET "+p, func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "{}") })
	}
	for _, p := range []string{"/session", "/permission", "/question"} {
		mux.HandleFunc("GET "+p, func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "[]") })
	}
	mux.HandleFunc("POST /", func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.posts = append(f.posts, r.URL.Path+" "+string(body))
		f.mu.Unlock()
		parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
		switch {
		case len(parts) == 3 && parts[0] == "permission" && parts[2] == "reply":
			var b struct{ Reply string }
			json.Unmarshal(body, &b)
			f.send("permission.replied", `{"sessionID":"ses_ctl","requestID":"`+parts[1]+`","reply":"`+b.Reply+`"}`)
		case len(parts) == 3 && parts[0] == "question" && parts[2] == "reply":
			var b struct{ Answers json.RawMessage }
			json.Unmarshal(body, &b)
			f.send("question.replied", `{"sessionID":"ses_ctl","requestID":"`+parts[1]+`","answers":`+string(b.Answers)+`}`)
		case len(parts) == 3 && parts[0] == "question" && parts[2] == "reject":
			if len(body) != 0 || r.Header.Get("Content-Type") != "" {
				http.Error(w, "the reject route takes no body", http.StatusBadRequest)
				return
			}
			f.send("question.rejected", `{"sessionID":"ses_ctl","requestID":"`+parts[1]+`"}`)
		case len(parts) == 3 && parts[0] == "session" && parts[2] == "abort":
			f.send("message.updated", `{"info":{"id":"msg_0000000000a2","sessionID":"`+parts[1]+`","role":"assistant","parentID":"msg_0000000000a1","error":{"name":"MessageAbortedError"},"time":{"created":1,"completed":2}}}`)
			f.send("session.idle", `{"sessionID":"`+parts[1]+`"}`)
		default:
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, "true")
	})
	f.Server = httptest.NewServer(mux)
	t.Cleanup(f.Close)
	return f
}

// send puts a bus event on the stream, with a fresh evt_ id.
func (f *fakeOpenCode) send(typ, props string) {
	f.mu.Lock()
	f.n++
	id := fmt.Sprintf("evt_%012x%s", 0x100000+f.n, "bbbbbbbbbbbbbb")
	f.mu.Unlock()
	f.events <- `{"id":"` + id + `","type":"` + typ + `","properties":` + props + `}`
}

func (f *fakeOpenCode) posted() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.posts...)
}

// turn opens a session and a turn on the stream.
func (f *fakeOpenCode) turn() {
	f.send("session.created", `{"info":{"id":"ses_ctl","title":"t","directory":"/w","version":"1.18.33"}}`)
	f.send("message.updated", `{"info":{"id":"msg_0000000000a1","sessionID":"ses_ctl","role":"user","time":{"created":1}}}`)
}

func (f *fakeOpenCode) permission(id string) {
	f.send("permission.asked", `{"id":"`+id+`","sessionID":"ses_ctl","permission":"bash","patterns":["ls /"],"metadata":{},"always":["ls *"],"tool":{"messageID":"m","callID":"call_`+id+`"}}`)
}

// TestFollowOpenCodeControl: OpenCode's permission and question asks
// answered over the relay become the server's own reply calls (once,
// reject with the text as the model's message, the chosen labels, a
// question's reject route), the
// outcome recorded from the server's broadcast via control, by the
// sender, cause-linked to the command, one terminal each; an ask the TUI
// answered first settles out of band and a command after it is refused;
// control.cancel aborts the turn, whose end is the cancel's outcome.
func TestFollowOpenCodeControl(t *testing.T) {
	f := newCtlFleet(t)
	srv := newFakeOpenCode(t)
	f.follow("opencode", srv.URL, f.url, true)
	cn := f.sender()
	srv.turn()

	// Allow once.
	srv.permission("per_1")
	r := f.pending(cn, "ses_ctl", "bash")
	if fmt.Sprint(r.RespondVia) != "[control]" || len(r.Options) != 3 || r.Options[0].ID != "once" {
		t.Fatalf("request %+v", r)
	}
	out := respondTo(t, cn, r, answer.Answer{Option: "once"})
	if out.Ack != answer.Accepted || out.Answered == nil || out.Resolved == nil {
		t.Fatalf("outcome %+v", out)
	}
	evs := f.waitLog("opencode", "ses_ctl", ofType("attention.resolved"))
	got := about(evs, r.ID)
	if len(got) != 3 || got[1]["type"] != "attention.answered" || got[2]["type"] != "attention.resolved" {
		t.Fatalf("attention events %v", got)
	}
	if d := dataOf(got[1]); d["via"] != "control" || d["by"] != "alice" || fmt.Sprint(d["answer"]) != "map[option:once]" || got[1]["cause"] != out.Command {
		t.Errorf("answered %v", got[1])
	}
	if got[2]["cause"] != out.Command || dataOf(got[2])["resolution"] != "answered" {
		t.Errorf("resolved %v", got[2])
	}

	// Free text: a rejection carrying the text as the model's message.
	srv.permission("per_2")
	r = f.pending(cn, "ses_ctl", "bash")
	out = respondTo(t, cn, r, answer.Answer{Text: "use the staging registry"})
	if out.Ack != answer.Accepted || out.Answered == nil {
		t.Fatalf("outcome %+v", out)
	}

	// Answered in the TUI first: out of band, and a command after it is
	// refused.
	srv.permission("per_3")
	r = f.pending(cn, "ses_ctl", "bash")
	srv.send("permission.replied", `{"sessionID":"ses_ctl","requestID":"per_3","reply":"always"}`)
	f.waitLog("opencode", "ses_ctl", func(e map[string]any) bool {
		return e["type"] == "attention.answered" && e["subject"] == r.ID
	})
	out = respondTo(t, cn, r, answer.Answer{Option: "once"})
	if out.Ack != answer.Rejected || out.Reason != "invalid" {
		t.Fatalf("a command after the TUI's answer: %+v", out)
	}
	if got := about(f.events("opencode", "ses_ctl"), r.ID); len(got) != 3 || dataOf(got[1])["via"] != "oob" {
		t.Fatalf("the TUI's answer: %v", got)
	}

	// A question, answered with a choice id: the server gets its label.
	srv.send("question.asked", `{"id":"que_1","sessionID":"ses_ctl","questions":[{"question":"Which db?","header":"DB","options":[{"label":"PG","description":"postgres"},{"label":"SQLite","description":"file"}]}]}`)
	r = f.pending(cn, "ses_ctl", "que_1")
	out = respondTo(t, cn, r, answer.Answer{Values: map[string]any{"1": "2"}})
	if out.Ack != answer.Accepted || out.Answered == nil || out.Resolved == nil {
		t.Fatalf("question outcome %+v", out)
	}

	// A question refused: the server's own reject call, whose report is
	// the command's answer, via control.
	srv.send("question.asked", `{"id":"que_2","sessionID":"ses_ctl","questions":[{"question":"Which cache?","header":"Cache","options":[{"label":"Redis","description":"server"},{"label":"None","description":"skip"}]}]}`)
	r = f.pending(cn, "ses_ctl", "que_2")
	out = respondTo(t, cn, r, answer.Answer{Option: "reject"})
	if out.Ack != answer.Accepted || out.Answered == nil || out.Resolved == nil {
		t.Fatalf("reject outcome %+v", out)
	}
	got = about(f.events("opencode", "ses_ctl"), r.ID)
	if len(got) != 3 || fmt.Sprint(dataOf(got[1])["answer"]) != "map[option:reject]" || dataOf(got[1])["via"] != "control" ||
		got[1]["cause"] != out.Command || dataOf(got[2])["resolution"] != "answered" || got[2]["cause"] != out.Command {
		t.Fatalf("the refused question: %v", got)
	}

	// Cancel: the server's abort; the turn's end caused by the command.
	cancelID := sendCancel(t, f, "ses_ctl")
	evs = f.waitLog("opencode", "ses_ctl", ofType("run.cancelled"))
	for _, e := range evs {
		if e["type"] == "run.cancelled" && (e["cause"] != cancelID || dataOf(e)["by"] != "control") {
			t.Errorf("run.cancelled %v, want caused by %s", e, cancelID)
		}
	}

	want := []string{
		`/permission/per_1/reply {"reply":"once"}`,
		`/permission/per_2/reply {"message":"use the staging registry","reply":"reject"}`,
		`/question/que_1/reply {"answers":[["SQLite"]]}`,
		`/question/que_2/reject `,
		`/session/ses_ctl/abort {}`,
	}
	if got := srv.posted(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the server's writes:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	terminals := map[any]int{}
	for _, e := range f.events("opencode", "ses_ctl") {
		if e["type"] == "attention.resolved" {
			terminals[e["subject"]]++
		}
	}
	for id, n := range terminals {
		if n != 1 {
			t.Errorf("request %v has %d terminals", id, n)
		}
	}
}

// sendCancel sends control.cancel{scope run} for session as alice, over a
// raw consumer connection, and returns its id once it is accepted.
func sendCancel(t *testing.T, f *ctlFleet, session string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), ctlWait)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, f.url, &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + ctlAlice}}})
	if err != nil {
		t.Fatal(err)
	}
	defer ws.CloseNow()
	write := func(s string) {
		if err := ws.Write(ctx, websocket.MessageText, []byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"type":"hello","versions":["0.1"],"role":"consumer","identity":{"agent":"alice"},"capabilities":{}}`)
	write(`{"type":"subscribe","id":"s","filter":{}}`)
	id := "01KCANCEL0000000000000001"
	write(`{"aep":"0.1","id":"` + id + `","type":"control.cancel","time":"2026-12-01T10:00:00.000Z","source":"aep://sender-host/agent/alice","agent":"alice","session":"` + session + `","data":{"scope":"run"}}`)
	for {
		_, b, err := ws.Read(ctx)
		if err != nil {
			t.Fatalf("no ack of the cancel: %v", err)
		}
		var m struct{ Type, Cause string }
		json.Unmarshal(b, &m)
		switch {
		case m.Type == "error" && m.Cause == id:
			t.Fatalf("the relay refused the cancel: %s", b)
		case m.Type == "control.rejected" && m.Cause == id:
			t.Fatalf("the cancel was rejected: %s", b)
		case m.Type == "control.accepted" && m.Cause == id:
			return id
		}
	}
}

// TestFollowControlRelayDown: with no relay listening the bridge follows
// as ever, and its asks claim no way to answer (the read-only stream's
// posture); nothing is written to the server.
func TestFollowControlRelayDown(t *testing.T) {
	f := &ctlFleet{t: t, home: t.TempDir()}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "ws://" + l.Addr().String() + "/socket"
	l.Close()
	srv := newFakeOpenCode(t)
	f.follow("opencode", srv.URL, down, false)
	srv.turn()
	srv.permission("per_1")
	evs := f.waitLog("opencode", "ses_ctl", ofType("attention.requested"))
	for _, e := range evs {
		if e["type"] == "attention.requested" {
			if d := dataOf(e); d["respond_via"] != nil || d["options"] != nil {
				t.Errorf("a request with no live link claims an answer path: %v", d)
			}
		}
	}
	if p := srv.posted(); len(p) != 0 {
		t.Errorf("writes with no relay: %q", p)
	}
}

// fakeKimiWeb is a kimi web server as far as the bridge reads and writes
// it: one session listed, the WebSocket stream (hello, subscribe acked,
// the frames the test feeds), and the approval, question and abort
// routes, which record their bodies and broadcast what the real server
// does (event.approval.resolved; event.question.answered or dismissed;
// turn.ended cancelled).
type fakeKimiWeb struct {
	*httptest.Server
	frames chan string
	mu     sync.Mutex
	posts  []string
	seq    int
}

const kwSession = "session_ctl"

func newFakeKimiWeb(t *testing.T, token string) *fakeKimiWeb {
	f := &fakeKimiWeb{frames: make(chan string, 64)}
	mux := http.NewServeMux()
	authed := func(r *http.Request) bool { return r.Header.Get("Authorization") == "Bearer "+token }
	mux.HandleFunc("GET /api/v1/sessions", func(w http.ResponseWriter, r *http.Request) {
		if !authed(r) {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		io.WriteString(w, `{"code":0,"msg":"success","data":{"items":[{"id":"`+kwSession+`"}],"has_more":false}}`)
	})
	mux.HandleFunc("GET /api/v1/ws", func(w http.ResponseWriter, r *http.Request) {
		c, err := websocket.Accept(w, r, &websocket.AcceptOptions{Subprotocols: []string{"kimi-code.bearer." + token}})
		if err != nil {
			return
		}
		defer c.CloseNow()
		ctx := r.Context()
		c.Write(ctx, websocket.MessageText, []byte(`{"type":"server_hello","payload":{"protocol_version":2,"heartbeat_ms":10000}}`))
		go func() {
			for {
				_, b, err := c.Read(ctx)
				if err != nil {
					return
				}
				var m struct{ Type, ID string }
				json.Unmarshal(b, &m)
				switch m.Type {
				case "client_hello":
					c.Write(ctx, websocket.MessageText, []byte(`{"type":"ack","id":"`+m.ID+`","code":0,"payload":{"accepted_subscriptions":[],"cursors":{}}}`))
				case "subscribe":
					c.Write(ctx, websocket.MessageText, []byte(`{"type":"ack","id":"`+m.ID+`","code":0,"payload":{"accepted":["`+kwSession+`"],"not_found":[],"cursors":{"`+kwSession+`":{"seq":0,"epoch":"ep_1"}}}}`))
				}
			}
		}()
		for {
			select {
			case <-ctx.Done():
				return
			case fr := <-f.frames:
				if c.Write(ctx, websocket.MessageText, []byte(fr)) != nil {
					return
				}
			}
		}
	})
	mux.HandleFunc("POST /api/v1/sessions/{sid}/{what}/{id}", func(w http.ResponseWriter, r *http.Request) {
		if !authed(r) {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		body, _ := io.ReadAll(r.Body)
		f.mu.Lock()
		f.posts = append(f.posts, r.URL.Path+" "+string(body))
		f.mu.Unlock()
		id := r.PathValue("id")
		switch r.PathValue("what") {
		case "approvals":
			var b struct{ Decision, Feedback string }
			json.Unmarshal(body, &b)
			fb := ""
			if b.Feedback != "" {
				fb = `,"feedback":` + jsonString(b.Feedback)
			}
			f.send("event.approval.resolved", `"approval_id":"`+id+`","decision":"`+b.Decision+`"`+fb)
		case "prompts":
			f.send("turn.ended", `"turnId":0,"reason":"cancelled"`)
		case "questions":
			if qid, ok := strings.CutSuffix(id, ":dismiss"); ok {
				if len(body) != 0 || r.Header.Get("Content-Type") != "" {
					http.Error(w, "the dismiss route takes no body", http.StatusBadRequest)
					return
				}
				f.send("event.question.dismissed", `"question_id":"`+qid+`"`)
				// kimi-code 2.1.0 answers a dismissal it applied so.
				io.WriteString(w, `{"code":40909,"msg":"question `+qid+` dismissed","data":{"dismissed":true}}`)
				return
			}
			// The server reports the answers keyed by the question's text,
			// as the chosen labels (the test's one question).
			var b struct {
				Answers map[string]struct {
					OptionID string `json:"option_id"`
				}
			}
			json.Unmarshal(body, &b)
			labels := map[string]string{"opt_0_0": "dev", "opt_0_1": "prod"}
			f.send("event.question.answered", `"question_id":"`+id+`","answers":{"Which env?":`+jsonString(labels[b.Answers["q_0"].OptionID])+`}`)
		default:
			http.NotFound(w, r)
			return
		}
		io.WriteString(w, `{"code":0,"msg":"success","data":{}}`)
	})
	f.Server = httptest.NewServer(mux)
	t.Cleanup(f.Close)
	return f
}

// send puts a session event frame of the main agent on the stream.
func (f *fakeKimiWeb) send(typ, payload string) {
	f.mu.Lock()
	f.seq++
	seq := f.seq
	f.mu.Unlock()
	f.frames <- fmt.Sprintf(`{"type":%q,"seq":%d,"session_id":%q,"timestamp":"2026-12-01T10:00:00.000Z","payload":{"type":%q,"agentId":"main",%s},"epoch":"ep_1"}`,
		typ, seq, kwSession, typ, payload)
}

func (f *fakeKimiWeb) posted() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.posts...)
}

// TestFollowKimiWebControl: kimi web approvals answered over the relay
// become the server's decision call (approved; free text a rejection
// carrying the text as feedback), question cards its answer call (the
// choice ids as the server's option ids) or its dismiss call, the outcome
// recorded from the server's broadcast via control and cause-linked;
// control.cancel aborts the open turn's prompt, and the turn's end is the
// cancel's outcome.
func TestFollowKimiWebControl(t *testing.T) {
	f, srv, follow := kimiWebCtl(t)
	follow()
	cn := f.sender()
	srv.send("turn.started", `"turnId":0,"promptId":"msg_p1","origin":{"kind":"user"},"prompt":"go"`)
	approval := func(id string) {
		srv.send("event.approval.requested", `"approval_id":"`+id+`","tool_call_id":"call_`+id+`","tool_name":"Bash","action":"Running: ls"`)
	}

	approval("approval_1")
	r := f.pending(cn, kwSession, "approval_1")
	if fmt.Sprint(r.RespondVia) != "[control]" || len(r.Options) != 2 || r.Options[0].ID != "approved" {
		t.Fatalf("request %+v", r)
	}
	out := respondTo(t, cn, r, answer.Answer{Text: "yes"})
	if out.Ack != answer.Accepted || out.Answered == nil || out.Resolved == nil {
		t.Fatalf("outcome %+v", out)
	}
	approval("approval_2")
	r2 := f.pending(cn, kwSession, "approval_2")
	out2 := respondTo(t, cn, r2, answer.Answer{Text: "not on prod, use staging"})
	if out2.Ack != answer.Accepted || out2.Answered == nil {
		t.Fatalf("outcome %+v", out2)
	}
	evs := f.waitLog("kimi-code", kwSession, func(e map[string]any) bool {
		return e["type"] == "attention.resolved" && e["subject"] == r2.ID
	})
	got := about(evs, r2.ID)
	if len(got) != 3 || got[1]["type"] != "attention.answered" || got[1]["cause"] != out2.Command || got[2]["cause"] != out2.Command {
		t.Fatalf("attention events %v", got)
	}
	if d := dataOf(got[1]); d["via"] != "control" || d["by"] != "alice" ||
		fmt.Sprint(d["answer"]) != "map[option:rejected text:not on prod, use staging]" {
		t.Errorf("answered %v", d)
	}

	// A question card answered with a choice id, then one dismissed: the
	// server's own answer and dismiss calls, each reported outcome the
	// command's, via control.
	question := func(id string) {
		srv.send("event.question.requested", `"question_id":"`+id+`","questions":[{"id":"q_0","question":"Which env?","options":[{"id":"opt_0_0","label":"dev"},{"id":"opt_0_1","label":"prod"}],"multi_select":false,"allow_other":true}],"tool_call_id":"call_`+id+`"`)
	}
	for _, tc := range []struct {
		id     string
		a      answer.Answer
		answer string
	}{
		{"question_1", answer.Answer{Values: map[string]any{"q_0": "opt_0_1"}}, "map[values:map[q_0:prod]]"},
		{"question_2", answer.Answer{Option: "dismiss"}, "map[option:dismiss]"},
		{"question_3", answer.Answer{}, "map[option:decline]"}, // the sender's --deny
	} {
		question(tc.id)
		r := f.pending(cn, kwSession, tc.id)
		if fmt.Sprint(r.RespondVia) != "[control]" {
			t.Fatalf("question %+v", r)
		}
		if tc.a.Option == "" && tc.a.Values == nil {
			var err error
			if tc.a, err = answer.Deny(r, ""); err != nil {
				t.Fatal(err)
			}
		}
		out := respondTo(t, cn, r, tc.a)
		if out.Ack != answer.Accepted || out.Answered == nil || out.Resolved == nil {
			t.Fatalf("%s: outcome %+v", tc.id, out)
		}
		got := about(f.events("kimi-code", kwSession), r.ID)
		if len(got) != 3 || got[1]["cause"] != out.Command || got[2]["cause"] != out.Command || dataOf(got[2])["resolution"] != "answered" {
			t.Fatalf("%s: attention events %v", tc.id, got)
		}
		if d := dataOf(got[1]); d["via"] != "control" || d["by"] != "alice" || fmt.Sprint(d["answer"]) != tc.answer {
			t.Errorf("%s: answered %v", tc.id, d)
		}
	}

	cancelID := sendCancel(t, f, kwSession)
	evs = f.waitLog("kimi-code", kwSession, ofType("run.cancelled"))
	for _, e := range evs {
		if e["type"] == "run.cancelled" && (e["cause"] != cancelID || dataOf(e)["by"] != "control") {
			t.Errorf("run.cancelled %v, want caused by %s", e, cancelID)
		}
	}
	want := []string{
		`/api/v1/sessions/session_ctl/approvals/approval_1 {"decision":"approved"}`,
		`/api/v1/sessions/session_ctl/approvals/approval_2 {"decision":"rejected","feedback":"not on prod, use staging"}`,
		`/api/v1/sessions/session_ctl/questions/question_1 {"answers":{"q_0":{"kind":"single","option_id":"opt_0_1"}}}`,
		`/api/v1/sessions/session_ctl/questions/question_2:dismiss `,
		`/api/v1/sessions/session_ctl/questions/question_3:dismiss `,
		`/api/v1/sessions/session_ctl/prompts/msg_p1:abort {}`,
	}
	if got := srv.posted(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the server's writes:\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// TestFollowKimiWebControlPendingAtStart: a question card the server has
// when the follower starts, handed over the moment the stream opens (kimi
// web replays a session from the cursor on subscribe), is held over the
// relay like one asked later: respond_via control, and a dismissal sent
// over the relay is the server's dismiss call. The follower reads its
// stream only once its link's first dial has settled.
func TestFollowKimiWebControlPendingAtStart(t *testing.T) {
	f, srv, follow := kimiWebCtl(t)
	// Queued before the follower runs: written right after the server's
	// hello, ahead of anything the follower could wait for.
	srv.send("turn.started", `"turnId":0,"promptId":"msg_p1","origin":{"kind":"user"},"prompt":"go"`)
	srv.send("event.question.requested", `"question_id":"question_0","questions":[{"id":"q_0","question":"Which env?","options":[{"id":"opt_0_0","label":"dev"},{"id":"opt_0_1","label":"prod"}],"multi_select":false,"allow_other":true}],"tool_call_id":"call_question_0"`)
	follow()
	evs := f.waitLog("kimi-code", kwSession, func(e map[string]any) bool {
		return e["type"] == "attention.requested" && e["subject"] == "question_0"
	})
	var req map[string]any
	for _, e := range evs {
		if e["type"] == "attention.requested" && e["subject"] == "question_0" {
			req = e
		}
	}
	if via := fmt.Sprint(dataOf(req)["respond_via"]); via != "[control]" {
		t.Fatalf("the question pending at start says respond_via %s, want [control]: %v", via, req)
	}
	cn := f.sender()
	r := f.pending(cn, kwSession, "question_0")
	out := respondTo(t, cn, r, answer.Answer{Option: "dismiss"})
	if out.Ack != answer.Accepted || out.Answered == nil || out.Resolved == nil {
		t.Fatalf("outcome %+v", out)
	}
	want := `/api/v1/sessions/session_ctl/questions/question_0:dismiss `
	if got := srv.posted(); strings.Join(got, "\n") != want {
		t.Errorf("the server's writes:\n%s\nwant\n%s", strings.Join(got, "\n"), want)
	}
}

// kimiWebCtl is a control fleet and a fake kimi web server with its token
// on disk; follow starts the follower on them (primary mode, control on).
func kimiWebCtl(t *testing.T) (f *ctlFleet, srv *fakeKimiWeb, follow func()) {
	t.Helper()
	f = newCtlFleet(t)
	const token = "kimi-web-token-0123456789"
	tokFile := filepath.Join(t.TempDir(), "server.token")
	if err := os.WriteFile(tokFile, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	srv = newFakeKimiWeb(t, token)
	return f, srv, func() { f.follow("kimi-web", srv.URL, f.url, true, "--mode", "primary", "--token-file", tokFile) }
}
