package notify

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aep-hook/aep-hook/harness/relaytest"
)

// firing is one recorded hook firing: what the vendor gave the hook and
// what the hook answered.
type firing struct {
	Env    map[string]string `json:"env"`
	Stdout string            `json:"stdout"`
	Input  json.RawMessage   `json:"input"`
}

// recordedFiring is the firing of event in a recording's firings.jsonl.
func recordedFiring(t *testing.T, path, event string) firing {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var f firing
		var in struct {
			Event string `json:"hook_event_name"`
		}
		if json.Unmarshal(sc.Bytes(), &f) == nil && json.Unmarshal(f.Input, &in) == nil && in.Event == event {
			return f
		}
	}
	t.Fatalf("%s has no %s firing", path, event)
	return firing{}
}

// ntfyPhone is an ntfy-compatible server that is also the phone: it takes
// a JSON publish at its root and, as the ntfy app does when a person taps
// a button, performs the message's first http action (its method, URL,
// headers and body). presses carries each press's status and reply.
type ntfyPhone struct {
	srv       *httptest.Server
	mu        sync.Mutex
	published []map[string]any
	presses   chan string
}

func newNtfyPhone(t *testing.T) *ntfyPhone {
	p := &ntfyPhone{presses: make(chan string, 16)}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		var m map[string]any
		if r.URL.Path != "/" || json.Unmarshal(b, &m) != nil {
			http.Error(w, "not a JSON publish", http.StatusBadRequest)
			return
		}
		p.mu.Lock()
		p.published = append(p.published, m)
		p.mu.Unlock()
		w.Write([]byte(`{"id":"msg1","event":"message"}`))
		acts, _ := m["actions"].([]any)
		if len(acts) == 0 {
			p.presses <- "no actions"
			return
		}
		go func() { p.presses <- p.press(acts[0].(map[string]any)) }()
	}))
	t.Cleanup(p.srv.Close)
	return p
}

// press performs one http action as the ntfy app does: POST unless the
// action names a method, its headers, its body.
func (p *ntfyPhone) press(a map[string]any) string {
	if a["action"] != "http" {
		return "not an http action"
	}
	method, _ := a["method"].(string)
	if method == "" {
		method = http.MethodPost
	}
	body, _ := a["body"].(string)
	req, err := http.NewRequest(method, a["url"].(string), strings.NewReader(body))
	if err != nil {
		return err.Error()
	}
	req.Header.Set("User-Agent", "ntfy/1.16.0 (test)")
	if hs, ok := a["headers"].(map[string]any); ok {
		for k, v := range hs {
			req.Header.Set(k, v.(string))
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err.Error()
	}
	defer resp.Body.Close()
	rb, _ := io.ReadAll(resp.Body)
	return resp.Status + " " + strings.TrimSpace(string(rb))
}

func (p *ntfyPhone) messages() []map[string]any {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]map[string]any(nil), p.published...)
}

// freeAddr is a loopback address nothing listens on now: the buttons'
// public URL must be known before the notifier starts.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}

const emitterToken = "emitter-token-000000000000"

// TestNtfyButtonAnswersHeldHook: the whole loop through the built binary.
// A real Claude Code hook (control on, the recorded PermissionRequest of
// the control-allow recording) holds its card; the relay carries it;
// aep-hook notify publishes it once to an ntfy-compatible server, with
// buttons, and records one attention.routed; the server presses the first
// button as the ntfy app would; the notifier answers over the relay as
// its own identity, so the hook replies allow (the recorded reply) and
// records attention.answered via control by the notifier; pressing the
// button again answers nothing and says so.
func TestNtfyButtonAnswersHeldHook(t *testing.T) {
	rec := recordedFiring(t, "../../fixtures/claude-code/recorded/control-allow/firings.jsonl", "PermissionRequest")
	var in struct {
		Session string `json:"session_id"`
	}
	json.Unmarshal(rec.Input, &in)

	home := t.TempDir()
	tokens := writeSecret(t, filepath.Join(home, "tokens.jsonl"), []byte(
		`{"token":"`+operatorToken+`","identity":"consumer:ops","scopes":["subscribe:*","read:*"]}`+"\n"+
			`{"token":"`+emitterToken+`","identity":"emitter:test-host/*","scopes":["write:*"]}`+"\n"+
			`{"token":"`+notifierToken+`","identity":"consumer:aep-hook-notify","scopes":["subscribe:attention.*","subscribe:control.*","read:*","write:aep-hook-notify","control:control.attention.respond"]}`+"\n"))
	relay := startProc(t, env(home), "relay", "--listen", "127.0.0.1:0", "--tokens", tokens)
	addr := relay.Await(t, "relay", relaytest.ServingLine, wait)[1]
	base := "http://" + addr
	watch := sseEvents(t, base, operatorToken, url.Values{"filter": {`{"type":["attention.*"]}`}})

	phone := newNtfyPhone(t)
	buttons := freeAddr(t)
	cfg, _ := json.Marshal(map[string]any{
		"relay": base, "token": notifierToken,
		"actions": map[string]any{"listen": buttons, "url": "http://" + buttons},
		"routes":  []any{map[string]any{"name": "phone", "type": "ntfy", "url": phone.srv.URL + "/aep-secret-topic"}},
	})
	conf := writeSecret(t, filepath.Join(home, "notify.json"), cfg)
	notifier := startProc(t, env(home), "notify", "--config", conf)
	notifier.Await(t, "notify", regexp.MustCompile(`reading http://`), wait)

	// The hook as Claude Code runs it, held until an answer comes.
	hk := exec.Command(bin, "claude-code")
	hk.Env = env(home, "AEP_CONTROL=1", "AEP_RELAY=ws://"+addr+"/socket", "AEP_RELAY_TOKEN="+emitterToken, "AEP_CONTROL_BUDGET=25s")
	for k, v := range rec.Env {
		hk.Env = append(hk.Env, k+"="+v)
	}
	hk.Stdin = bytes.NewReader(rec.Input)
	var stdout, stderr bytes.Buffer
	hk.Stdout, hk.Stderr = &stdout, &stderr
	if err := hk.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- hk.Wait() }()
	t.Cleanup(func() { hk.Process.Kill() })

	var press string
	select {
	case press = <-phone.presses:
	case <-time.After(wait):
		t.Fatalf("nothing was published\nnotify:\n%s", notifier.Output())
	}
	if !strings.HasPrefix(press, "200 OK Answered: option yes") {
		t.Fatalf("the press: %s\nnotify:\n%s", press, notifier.Output())
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("hook: %v\n%s", err, stderr.String())
		}
	case <-time.After(wait):
		t.Fatal("the hook was not answered")
	}
	if stdout.String() != rec.Stdout || stderr.Len() != 0 {
		t.Fatalf("hook stdout %q (stderr %q), want the recorded %q", stdout.String(), stderr.String(), rec.Stdout)
	}

	// The record: the request, one routed, the answer by the notifier via
	// control, the resolution. The relay may hand one event on twice (from
	// the hook's link and from its log): a consumer goes by source and id.
	var reqID string
	seen := map[string][]map[string]any{}
	ids := map[string]bool{}
	fresh := func(ev map[string]any) bool {
		k := ev["source"].(string) + " " + ev["id"].(string)
		if ids[k] {
			return false
		}
		ids[k] = true
		return true
	}
	for len(seen["attention.resolved"]) == 0 || len(seen["attention.routed"]) == 0 {
		select {
		case ev := <-watch:
			if ev["session"] != in.Session || !fresh(ev) {
				continue
			}
			typ := ev["type"].(string)
			seen[typ] = append(seen[typ], ev)
			if typ == "attention.requested" {
				reqID = ev["id"].(string)
			}
		case <-time.After(wait):
			t.Fatalf("the record so far: %v\nnotify:\n%s", seen, notifier.Output())
		}
	}
	if len(seen["attention.requested"]) != 1 || len(seen["attention.answered"]) != 1 {
		t.Fatalf("the record: %v", seen)
	}
	if d := seen["attention.requested"][0]["data"].(map[string]any); !strings.Contains(jsonOf(d["respond_via"]), `"control"`) {
		t.Fatalf("the card does not claim control: %v", d)
	}
	ans := seen["attention.answered"][0]
	if d := ans["data"].(map[string]any); d["via"] != "control" || d["by"] != "aep-hook-notify" || ans["subject"] != reqID {
		t.Fatalf("answered: %v", ans)
	}
	if r := seen["attention.routed"][0]; r["subject"] != reqID || jsonOf(r["data"]) != `{"to":"phone","via":"ntfy"}` {
		t.Fatalf("routed: %v", r)
	}

	// One publish, with the card's choices as buttons: allow first, deny
	// second, then the vendor's other option (at metadata the vendor's
	// label text is not shown, so words and the option's id label them).
	msgs := phone.messages()
	if len(msgs) != 1 {
		t.Fatalf("%d publishes, want 1: %v", len(msgs), msgs)
	}
	acts := msgs[0]["actions"].([]any)
	var labels []string
	for _, a := range acts {
		labels = append(labels, a.(map[string]any)["label"].(string))
	}
	if strings.Join(labels, "|") != "Allow|Deny|yes-apply-suggestions" {
		t.Fatalf("buttons: %v", acts)
	}

	// The same button again, and the other one: settled, nothing sent.
	for _, a := range acts {
		if got := phone.press(a.(map[string]any)); !strings.HasPrefix(got, "410 Gone This request was already settled; nothing was answered.") {
			t.Fatalf("a press after the answer: %s", got)
		}
	}
	// Exactly one delivery and one record: once the notifier has stopped,
	// its state says one delivery to phone (one record is made per
	// delivery) and no record left unposted.
	if err := notifier.Stop(os.Interrupt, wait); err != nil {
		t.Fatalf("notify did not stop: %v\n%s", err, notifier.Output())
	}
	var st state
	if b, err := os.ReadFile(filepath.Join(home, "notify", "state.json")); err != nil || json.Unmarshal(b, &st) != nil {
		t.Fatalf("state: %v", err)
	}
	if len(st.Delivered) != 1 || len(st.Outbox) != 0 {
		t.Fatalf("state: %+v", st)
	}
	for k, d := range st.Delivered {
		if !strings.HasPrefix(k, "phone\x00") || d.N != 1 {
			t.Fatalf("state: %+v", st)
		}
	}
	// The button URLs are tokens: never printed.
	for _, a := range acts {
		u, _ := url.Parse(a.(map[string]any)["url"].(string))
		if sig := u.Path[strings.LastIndexByte(u.Path, '/')+1:]; strings.Contains(notifier.Output(), sig) {
			t.Fatalf("notify printed a button's token:\n%s", notifier.Output())
		}
	}
	errs, _ := os.ReadFile(filepath.Join(home, "internal", "errors.jsonl"))
	if strings.Contains(string(errs), "/answer/") {
		t.Fatalf("error log names a button:\n%s", errs)
	}
}

func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
