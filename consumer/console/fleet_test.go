package console_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/aep-hook/aep-hook/consumer/console"
	"github.com/aep-hook/aep-hook/consumer/relay/event"
	"github.com/aep-hook/aep-hook/harness/browser"
)

// fleetJSON is the summary as the page reads it.
type fleetJSON struct {
	Sessions []struct {
		Session     string
		Count       int
		Captures    map[string]int
		Tools       int
		ToolsFailed int `json:"tools_failed"`
		Pos         struct{ Epoch, Seq int64 }
		Events      []json.RawMessage
	}
}

const (
	acmeTok  = "0123456789abcdef-console-acme"
	acmeEmit = "0123456789abcdef-console-acme-emit"
)

// fleetTokens are the console's tokens and one consumer of tenant acme.
func fleetTokens(t *testing.T) string {
	return tokensFile(t,
		token(fullToken, "consumer:alice", "", "subscribe:*", "read:*", "write:alice"),
		token(metaToken, "consumer:bob", "metadata", "subscribe:*", "read:*", "write:bob"),
		`{"token":"`+acmeTok+`","identity":"consumer:acme","tenant":"acme","scopes":["subscribe:*","read:*"]}`,
		token(emitTok, "emitter:devbox/claude-code", "", "write:claude-code"),
		`{"token":"`+acmeEmit+`","identity":"emitter:devbox/claude-code","tenant":"acme","scopes":["write:claude-code"]}`,
	)
}

// fget is a GET of path on the relay with token (none when ""), with
// extra headers; it returns the status and body.
func fget(t *testing.T, p *relayProc, path, tok string, hdr ...string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, p.base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if tok != "" {
		req.Header.Set("Authorization", "Bearer "+tok)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i] == "Host" {
			req.Host = hdr[i+1]
			continue
		}
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, b
}

// streamEvents is what GET /stream from all, live=0, delivers to tok.
func streamEvents(t *testing.T, p *relayProc, tok string) []*event.Event {
	t.Helper()
	status, body := fget(t, p, "/stream?from=all&live=0", tok)
	if status != http.StatusOK {
		t.Fatalf("GET /stream: %d %s", status, body)
	}
	var out []*event.Event
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if d, ok := bytes.CutPrefix(sc.Bytes(), []byte("data: ")); ok {
			ev, err := event.Parse(bytes.Clone(d))
			if err != nil {
				t.Fatalf("the stream's event %s: %v", d, err)
			}
			out = append(out, ev)
		}
	}
	return out
}

// TestFleetSummary: /console/fleet is the summary of exactly what GET
// /stream delivers to the same token (summarizing the stream's events
// gives the same bytes), keeps of each session the events its state
// depends on, and applies the token's ceiling and tenant as the stream
// does.
func TestFleetSummary(t *testing.T) {
	p := startRelay(t, t.TempDir(), "127.0.0.1:0", "--tokens", fleetTokens(t), "--no-follow")
	postFleet(t, p)

	for _, tc := range []struct {
		name, tok string
		sessions  []string
	}{
		{"full", fullToken, []string{"s-wait", "s-end", "s-run"}},
		{"metadata", metaToken, []string{"s-wait", "s-end", "s-run"}},
		{"tenant", acmeTok, []string{"s-acme"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := fget(t, p, console.FleetPath, tc.tok)
			if status != http.StatusOK {
				t.Fatalf("GET %s: %d %s", console.FleetPath, status, body)
			}
			evs := streamEvents(t, p, tc.tok)
			want, err := console.SummaryJSON(evs)
			if err != nil {
				t.Fatal(err)
			}
			if got := bytes.TrimSpace(body); !bytes.Equal(got, want) {
				t.Errorf("the summary differs from the stream's:\n got %s\nwant %s", got, want)
			}
			var fl fleetJSON
			if err := json.Unmarshal(body, &fl); err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, s := range fl.Sessions {
				names = append(names, s.Session)
			}
			if strings.Join(names, ",") != strings.Join(tc.sessions, ",") {
				t.Errorf("sessions %v, want %v", names, tc.sessions)
			}
			if tc.tok == metaToken && bytes.Contains(body, []byte("rm -rf")) {
				t.Errorf("a metadata token's summary holds free text: %s", body)
			}
			if tc.tok == fullToken && !bytes.Contains(body, []byte("rm -rf")) {
				t.Errorf("a full token's summary lost the pending prompt: %s", body)
			}
		})
	}

	// What each session keeps, by seq, and its counts, for the full token.
	_, body := fget(t, p, console.FleetPath, fullToken)
	var fl fleetJSON
	if err := json.Unmarshal(body, &fl); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"s-wait": "seqs 0,1,4,5,6,8 count 9 tools 2 failed 1 pos 0:8 captures full=2,metadata=7",
		"s-end":  "seqs 0,2,3,4 count 5 tools 0 failed 0 pos 0:4 captures full=1,metadata=4",
		"s-run":  "seqs 0,2,3,4 count 5 tools 0 failed 0 pos 0:4 captures metadata=5",
	}
	for _, s := range fl.Sessions {
		var seqs []string
		for _, raw := range s.Events {
			var e struct{ Seq json.Number }
			json.Unmarshal(raw, &e)
			seqs = append(seqs, e.Seq.String())
		}
		caps := ""
		for _, k := range []string{"full", "metadata"} {
			if n, ok := s.Captures[k]; ok {
				if caps != "" {
					caps += ","
				}
				caps += k + "=" + strconv.Itoa(n)
			}
		}
		got := "seqs " + strings.Join(seqs, ",") + " count " + strconv.Itoa(s.Count) + " tools " + strconv.Itoa(s.Tools) + " failed " + strconv.Itoa(s.ToolsFailed) +
			" pos " + strconv.Itoa(int(s.Pos.Epoch)) + ":" + strconv.Itoa(int(s.Pos.Seq)) + " captures " + caps
		if got != want[s.Session] {
			t.Errorf("%s: %s, want %s", s.Session, got, want[s.Session])
		}
	}
}

// TestFleetRefusals: /console/fleet is guarded as every relay route: a
// foreign Host or Origin is refused, no token or an unknown one gets no
// summary, and a filter the token's scopes do not cover is refused as
// the stream refuses it.
func TestFleetRefusals(t *testing.T) {
	p := startRelay(t, t.TempDir(), "127.0.0.1:0", "--tokens", fleetTokens(t), "--no-follow")
	p.post(emitTok, ev("s1", 0, "session.started", time.Now(), `"capture":"metadata","data":{}`))
	bad := url.QueryEscape(`{"type":`)
	for _, tc := range []struct {
		name, path, tok string
		hdr             []string
		status          int
	}{
		{"ok", console.FleetPath, fullToken, nil, 200},
		{"no token", console.FleetPath, "", nil, 401},
		{"unknown token", console.FleetPath, "0123456789abcdef-nobody", nil, 401},
		{"foreign host", console.FleetPath, fullToken, []string{"Host", "evil.example"}, 403},
		{"foreign origin", console.FleetPath, fullToken, []string{"Origin", "http://evil.example"}, 403},
		{"bad filter", console.FleetPath + "?filter=" + bad, fullToken, nil, 400},
		{"bad capture", console.FleetPath + "?capture=most", fullToken, nil, 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			status, body := fget(t, p, tc.path, tc.tok, tc.hdr...)
			if status != tc.status {
				t.Errorf("status %d (%s), want %d", status, body, tc.status)
			}
			if tc.status != 200 && bytes.Contains(body, []byte("s1")) {
				t.Errorf("a refusal holds the fleet: %s", body)
			}
		})
	}
}

// postFleet posts a small fleet: a session waiting for a human (one
// request answered and resolved, one pending), one ended with a request
// pending, one running a second run, and one of tenant acme.
func postFleet(t *testing.T, p *relayProc) {
	t.Helper()
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	at := func(i int) time.Time { return now.Add(time.Duration(i) * time.Second) }
	const ask = `"run":"r1","subject":"Bash","capture":"full","severity":"notice","data":{"kind":"permission","prompt":"Run rm -rf build?","respond_via":["control"],"options":[{"id":"allow"},{"id":"deny"}]}`
	tool := func(id string) string {
		return `"run":"r1","subject":"Bash","capture":"metadata","data":{"tool":{"name":"Bash","call_id":"` + id + `"}}`
	}
	p.post(emitTok,
		// waiting: one request answered and resolved, one pending.
		ev("s-wait", 0, "session.started", at(0), `"capture":"metadata","data":{}`),
		ev("s-wait", 1, "run.started", at(1), `"run":"r1","capture":"metadata","data":{"trigger":"user"}`),
		ev("s-wait", 2, "tool.requested", at(2), tool("c1")),
		ev("s-wait", 3, "tool.completed", at(3), tool("c1")),
		ev("s-wait", 4, "attention.requested", at(4), ask),
		ev("s-wait", 5, "attention.answered", at(5), `"subject":"s-wait-000004","capture":"metadata","data":{"answer":{"option":"allow"},"by":"alice","via":"control"}`),
		ev("s-wait", 6, "attention.resolved", at(6), `"subject":"s-wait-000004","capture":"metadata","data":{"resolution":"answered"}`),
		ev("s-wait", 7, "tool.failed", at(7), tool("c2")),
		ev("s-wait", 8, "attention.requested", at(8), ask),
		// ended with a request pending: nothing waits.
		ev("s-end", 0, "session.started", at(0), `"capture":"metadata","data":{}`),
		ev("s-end", 1, "run.started", at(1), `"run":"r1","capture":"metadata","data":{}`),
		ev("s-end", 2, "attention.requested", at(2), ask),
		ev("s-end", 3, "run.failed", at(3), `"run":"r1","capture":"metadata","data":{"reason":"crash"}`),
		ev("s-end", 4, "session.ended", at(4), `"capture":"metadata","data":{}`),
		// running: r1 finished, r2 open.
		ev("s-run", 0, "session.started", at(0), `"capture":"metadata","data":{}`),
		ev("s-run", 1, "run.started", at(1), `"run":"r1","capture":"metadata","data":{}`),
		ev("s-run", 2, "run.finished", at(2), `"run":"r1","capture":"metadata","data":{}`),
		ev("s-run", 3, "run.started", at(3), `"run":"r2","capture":"metadata","data":{}`),
		ev("s-run", 4, "progress.status", at(4), `"run":"r2","capture":"metadata","data":{}`),
	)
	acme := strings.Replace(ev("s-acme", 0, "session.started", at(0), `"capture":"metadata","data":{}`), `"epoch":0`, `"epoch":0,"tenant":"acme"`, 1)
	p.post(acmeEmit, acme)
}

// TestSummaryMatchesStream: the page shows the same fleet and the same
// queue from the summary as from folding the whole stream (the summary
// blocked, the page falls back to GET /stream).
func TestSummaryMatchesStream(t *testing.T) {
	ctx := browser.Start(t, 3*wait)
	p := startRelay(t, t.TempDir(), "127.0.0.1:0", "--tokens", fleetTokens(t), "--no-follow")
	postFleet(t, p)
	const shown = `document.getElementById('fleet-body').innerText + '\n--\n' + document.getElementById('pending').innerText + '\n--\n' + document.getElementById('fleet-summary').textContent`
	var texts []string
	for _, block := range []bool{false, true} {
		if block {
			block := chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
				if _, err := cdp.Call(ctx, tg, network.Enable, network.EnableParams{}); err != nil {
					return err
				}
				_, err := cdp.Call(ctx, tg, network.SetBlockedURLs, network.SetBlockedURLsParams{
					URLPatterns: []*network.BlockPattern{{URLPattern: "*://*:*" + console.FleetPath + "*", Block: true}}})
				return err
			})
			if err := chromedp.Do(ctx, block); err != nil {
				t.Fatal(err)
			}
		}
		signIn(t, ctx, p, fullToken)
		browser.WaitJS(t, ctx, `document.getElementById('conn').textContent === 'live'`)
		if st := browser.EvalJS[map[string]any](t, ctx, `window.aepConsole.stats`); st["summary"] != !block || st["bulk"] != true {
			t.Errorf("blocked %v: stats %v", block, st)
		}
		texts = append(texts, browser.EvalJS[string](t, ctx, shown))
		signOut(t, ctx, p)
	}
	if texts[0] != texts[1] {
		t.Errorf("from the summary the page shows\n%s\n\nfrom the stream\n%s", texts[0], texts[1])
	}
	if !strings.Contains(texts[0], "waiting for a human") || !strings.Contains(texts[0], "rm -rf build") {
		t.Errorf("the page shows\n%s", texts[0])
	}
}
