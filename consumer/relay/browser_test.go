package relay_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// browser starts a real headless Chromium (Debian's chromium) under
// chromedp, with name resolution pinned so evil.test is this machine. It
// skips when Chromium is absent, except under CI=true.
func browser(t *testing.T) context.Context {
	t.Helper()
	path := ""
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("chromium is not installed (.ci/run installs it)")
		}
		t.Skip("chromium is not installed")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("host-resolver-rules", "MAP evil.test 127.0.0.1"),
	)
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelB := chromedp.NewContext(actx)
	ctx, cancelC := context.WithTimeout(ctx, 2*wait)
	t.Cleanup(func() { cancelC(); cancelB(); cancelA() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// waitJS polls expr in the page until it is true.
func waitJS(t *testing.T, ctx context.Context, expr string) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingInterval(20*time.Millisecond))); err != nil {
		t.Fatalf("waiting for %s: %v", expr, err)
	}
}

func evalJS[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// TestBrowser: a real browser subscribes with EventSource and access_token
// and receives, live, what a real hook process writes; a page of another
// origin, and a page reached under a foreign Host (DNS rebinding), can
// neither post an event nor read the stream.
func TestBrowser(t *testing.T) {
	ctx := browser(t)
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
	evalJS[bool](t, ctx, js)
	waitJS(t, ctx, `window.opened`)
	hook := exec.Command(bin, "claude-code")
	hook.Env = append(os.Environ(), "AEP_HOME="+home, "AEP_HOST=browser-host")
	hook.Stdin = strings.NewReader(`{"hook_event_name":"SessionStart","session_id":"browser-1","source":"startup","cwd":"/tmp"}`)
	if out, err := hook.CombinedOutput(); err != nil {
		t.Fatalf("hook: %v %s", err, out)
	}
	waitJS(t, ctx, `window.got.length > 0`)
	data := evalJS[string](t, ctx, `window.got[0].data`)
	if !strings.Contains(data, `"session":"browser-1"`) || !strings.Contains(data, `"source":"aep://browser-host/agent/claude-code/session/browser-1"`) {
		t.Errorf("the browser got %s", data)
	}
	if id := evalJS[string](t, ctx, `window.got[0].id`); id != "browser-1:0:0" {
		t.Errorf("lastEventId %q", id)
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
	waitJS(t, ctx, `window.result.post !== 'pending' && window.result.sse !== 'pending' && window.result.ws !== 'pending'`)
	if r := evalJS[map[string]string](t, ctx, `window.result`); r["sse"] != "refused" || r["ws"] != "refused" {
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
	evalJS[bool](t, ctx, rebind)
	waitJS(t, ctx, `window.rb.stream !== undefined && window.rb.post !== undefined`)
	if r := evalJS[map[string]string](t, ctx, `window.rb`); !strings.HasPrefix(r["stream"], "403 ") || r["post"] != "403" {
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
