package relay_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/aep-hook/aep-hook/harness/browser"
)

// TestBrowser: a real browser subscribes with EventSource and access_token
// and receives, live, what a real hook process writes; a page of another
// origin, and a page reached under a foreign Host (DNS rebinding), can
// neither post an event nor read the stream.
func TestBrowser(t *testing.T) {
	// evil.test resolves to this machine: a page of another origin.
	ctx := browser.Start(t, 2*wait, chromedp.Flag("host-resolver-rules", "MAP evil.test 127.0.0.1"))
	tok := "0123456789abcdef-browser"
	home := t.TempDir()
	p := startRelay(t, home, "--tokens", tokensFile(t,
		`{"token":"`+tok+`","identity":"consumer:browser","scopes":["subscribe:*","read:*","write:*"]}`))

	// 1. Same origin: EventSource with the token in the query.
	js := fmt.Sprintf(`window.got = []; window.opened = false;
		const es = new EventSource('/stream?access_token=%s&filter=' + encodeURIComponent('{"agent":"claude-code"}'));
		es.onopen = () => { window.opened = true; };
		es.addEventListener('session.started', (e) => { window.got.push({data: e.data, id: e.lastEventId}); });
		true`, tok)
	if err := chromedp.Do(ctx, chromedp.Navigate(p.base+"/healthz")); err != nil {
		t.Fatal(err)
	}
	browser.EvalJS[bool](t, ctx, js)
	browser.WaitJS(t, ctx, `window.opened`)
	hook := exec.Command(bin, "claude-code")
	hook.Env = append(os.Environ(), "AEP_HOME="+home, "AEP_HOST=browser-host")
	hook.Stdin = strings.NewReader(`{"hook_event_name":"SessionStart","session_id":"browser-1","source":"startup","cwd":"/tmp"}`)
	if out, err := hook.CombinedOutput(); err != nil {
		t.Fatalf("hook: %v %s", err, out)
	}
	browser.WaitJS(t, ctx, `window.got.length > 0`)
	data := browser.EvalJS[string](t, ctx, `window.got[0].data`)
	if !strings.Contains(data, `"session":"browser-1"`) || !strings.Contains(data, `"source":"aep://browser-host/agent/claude-code/session/browser-1"`) {
		t.Errorf("the browser got %s", data)
	}
	if id, want := browser.EvalJS[string](t, ctx, `window.got[0].id`), positionID(t, []byte(data)); id != want {
		t.Errorf("lastEventId %q, want %q", id, want)
	}

	// 2. Another origin: a page of a server on another port.
	attack := fmt.Sprintf(`<!doctype html><script>
		window.result = {post: 'pending', sse: 'pending', ws: 'pending'};
		const ev = %q;
		fetch(%q + '/events', {method: 'POST', mode: 'no-cors', headers: {'Content-Type': 'text/plain'}, body: ev})
			.then(() => { window.result.post = 'sent'; }, () => { window.result.post = 'failed'; });
		const es = new EventSource(%q + '/stream?access_token=%s');
		es.onmessage = () => { window.result.sse = 'read'; };
		es.addEventListener('session.started', () => { window.result.sse = 'read'; });
		es.onerror = () => { if (window.result.sse === 'pending') window.result.sse = 'refused'; es.close(); };
		const ws = new WebSocket(%q + '/socket?access_token=%s');
		ws.onopen = () => { window.result.ws = 'open'; };
		ws.onerror = () => { window.result.ws = 'refused'; };
		</script>`, mkEvent("tool.completed", "browser", "cross", 0, ""), p.base, p.base, tok, "ws://"+p.addr, tok)
	site := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, attack)
	}))
	defer site.Close()
	if err := chromedp.Do(ctx, chromedp.Navigate(site.URL)); err != nil {
		t.Fatal(err)
	}
	browser.WaitJS(t, ctx, `window.result.post !== 'pending' && window.result.sse !== 'pending' && window.result.ws !== 'pending'`)
	if r := browser.EvalJS[map[string]string](t, ctx, `window.result`); r["sse"] != "refused" || r["ws"] != "refused" {
		t.Errorf("cross-origin page: %v", r)
	}

	// 3. A foreign Host: evil.test resolves to this machine, as after a
	// DNS rebinding; the page and its same-origin requests are refused.
	port := p.addr[strings.LastIndexByte(p.addr, ':')+1:]
	if err := chromedp.Do(ctx, chromedp.Navigate("http://evil.test:"+port+"/healthz")); err != nil {
		t.Fatal(err)
	}
	rebind := fmt.Sprintf(`window.rb = {};
		fetch('/stream?live=0&from=all&access_token=%s').then((r) => r.text().then((b) => { window.rb.stream = r.status + ' ' + b.slice(0, 40); }), () => { window.rb.stream = 'failed'; });
		fetch('/events', {method: 'POST', headers: {'Content-Type': 'application/json', 'AEP-Version': '0.1', 'Authorization': 'Bearer %s'}, body: %q})
			.then((r) => { window.rb.post = String(r.status); }, () => { window.rb.post = 'failed'; });
		true`, tok, tok, mkEvent("tool.completed", "browser", "rebind", 0, ""))
	browser.EvalJS[bool](t, ctx, rebind)
	browser.WaitJS(t, ctx, `window.rb.stream !== undefined && window.rb.post !== undefined`)
	if r := browser.EvalJS[map[string]string](t, ctx, `window.rb`); !strings.HasPrefix(r["stream"], "403 ") || r["post"] != "403" {
		t.Errorf("foreign Host: %v", r)
	}

	// Nothing was posted by either page.
	for _, m := range p.stream(q("from", "all", "live", "0"), "Authorization", "Bearer "+tok).rest() {
		if strings.Contains(m.Data, `"agent":"browser"`) {
			t.Errorf("a refused page posted %s", m.Data)
		}
	}
	refusals := 0
	for _, a := range p.auditLines() {
		if a["kind"] == "request-refused" {
			refusals++
		}
	}
	if refusals < 4 {
		t.Errorf("%d refusals audited", refusals)
	}
}
