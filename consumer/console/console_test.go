package console

import (
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"strings"
	"testing"

	"github.com/aep-hook/aep-hook/consumer/relay"
	"github.com/aep-hook/aep-hook/consumer/relay/auth"
)

const (
	tokAlice = "0123456789abcdef-alice"
	tokBob   = "0123456789abcdef-bob"
	tokEve   = "0123456789abcdef-eve"
)

// serve runs a relay in process with the console mounted, over tokens
// (none: the watch-only posture).
func serve(t *testing.T, tokens string) *httptest.Server {
	t.Helper()
	opts := relay.Options{Home: t.TempDir(), NoFollow: true, Console: Handler(Options{Version: "test"})}
	if tokens != "" {
		toks, err := auth.Parse(strings.NewReader(tokens))
		if err != nil {
			t.Fatal(err)
		}
		opts.Tokens = toks
	}
	s, err := relay.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	srv := httptest.NewServer(s.Handler())
	t.Cleanup(srv.Close)
	return srv
}

const tokens = `{"token":"` + tokAlice + `","identity":"consumer:alice","scopes":["subscribe:*","read:*","control:control.attention.respond"]}
{"token":"` + tokBob + `","identity":"consumer:bob","scopes":["subscribe:attention.*","subscribe:session.started","read:*"],"capture":"metadata","tenant":"acme"}
{"token":"` + tokEve + `","identity":"consumer:eve","scopes":["subscribe:*","read:aep://h/*"]}`

var noRedirect = &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

func get(t *testing.T, url string, cookie *http.Cookie) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("GET", url, nil)
	if cookie != nil {
		req.AddCookie(cookie)
	}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

var metaConfig = regexp.MustCompile(`<meta name="aep-console" content="([^"]*)">`)

// pageCfg is the config the page was served with.
func pageCfg(t *testing.T, body string) config {
	t.Helper()
	m := metaConfig.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no config in the page:\n%s", body)
	}
	var c config
	if err := json.Unmarshal([]byte(html.UnescapeString(m[1])), &c); err != nil {
		t.Fatalf("config %s: %v", m[1], err)
	}
	return c
}

func cookieOf(resp *http.Response) *http.Cookie {
	for _, c := range resp.Cookies() {
		if c.Name == relay.CookieName {
			return c
		}
	}
	return nil
}

// TestSignIn: the token in the URL becomes the relay's HttpOnly,
// SameSite=Strict cookie and the browser is sent to the same page without
// it; with the cookie the page knows its grant and never carries the
// token; a stale cookie is forgotten; /signout forgets it too.
func TestSignIn(t *testing.T) {
	srv := serve(t, tokens)
	resp, body := get(t, srv.URL+"/", nil)
	if resp.StatusCode != 200 || !pageCfg(t, body).SignIn {
		t.Fatalf("without a token: %d, config %+v", resp.StatusCode, pageCfg(t, body))
	}

	resp, _ = get(t, srv.URL+"/?access_token="+tokAlice+"&x=1", nil)
	c := cookieOf(resp)
	loc := resp.Header.Get("Location")
	if resp.StatusCode != http.StatusSeeOther || c == nil || !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Value != tokAlice {
		t.Fatalf("sign-in: %d, cookie %+v", resp.StatusCode, c)
	}
	if loc != "/?x=1" {
		t.Errorf("sign-in sends the browser to %q, want /?x=1", loc)
	}

	resp, body = get(t, srv.URL+"/", c)
	cfg := pageCfg(t, body)
	if resp.StatusCode != 200 || cfg.SignIn || cfg.Identity != "consumer:alice" || cfg.Name != "alice" || !cfg.Control || cfg.Capture != "full" {
		t.Errorf("signed in: %d %+v", resp.StatusCode, cfg)
	}
	if strings.Contains(body, tokAlice) {
		t.Error("the page carries the token")
	}
	if cookieOf(resp) != nil {
		t.Error("the signed-in page sets the cookie again")
	}
	for k, want := range map[string]string{"Cache-Control": "no-store", "Referrer-Policy": "no-referrer", "X-Frame-Options": "DENY", "X-Content-Type-Options": "nosniff"} {
		if got := resp.Header.Get(k); got != want {
			t.Errorf("%s: %q, want %q", k, got, want)
		}
	}
	if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") || !strings.Contains(csp, "connect-src 'self'") {
		t.Errorf("Content-Security-Policy %q", csp)
	}

	// A script holding the token in a header gets the page, no cookie.
	req, _ := http.NewRequest("GET", srv.URL+"/", nil)
	req.Header.Set("Authorization", "Bearer "+tokAlice)
	r2, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	r2.Body.Close()
	if r2.StatusCode != 200 || cookieOf(r2) != nil {
		t.Errorf("with a bearer header: %d, cookie %v", r2.StatusCode, cookieOf(r2))
	}

	// A cookie the relay no longer accepts is cleared.
	resp, body = get(t, srv.URL+"/", &http.Cookie{Name: relay.CookieName, Value: "0123456789abcdef-revoked"})
	if cfg := pageCfg(t, body); !cfg.SignIn || !cfg.Expired {
		t.Errorf("stale cookie: %+v", cfg)
	}
	if c := cookieOf(resp); c == nil || c.MaxAge >= 0 {
		t.Errorf("the stale cookie is not cleared: %+v", c)
	}

	resp, _ = get(t, srv.URL+"/signout", c)
	if c := cookieOf(resp); resp.StatusCode != http.StatusSeeOther || c == nil || c.MaxAge >= 0 || resp.Header.Get("Location") != "/" {
		t.Errorf("sign out: %d %+v", resp.StatusCode, c)
	}
}

// TestPageConfig: what each token is told it may see and do.
func TestPageConfig(t *testing.T) {
	srv := serve(t, tokens)
	for _, tc := range []struct {
		tok  string
		want config
	}{
		{tokAlice, config{Identity: "consumer:alice", Name: "alice", Capture: "full", Control: true, Record: true}},
		{tokBob, config{Identity: "consumer:bob", Name: "bob", Capture: "metadata", Tenant: "acme", Record: true,
			Filter: map[string]any{"type": []any{"attention.*", "session.started"}}}},
		{tokEve, config{Identity: "consumer:eve", Name: "eve", Capture: "full", Record: true,
			FilterError: "this token's read scopes cannot be subscribed to as a whole: give it read:* or read scopes of exact sources"}},
	} {
		_, body := get(t, srv.URL+"/", &http.Cookie{Name: relay.CookieName, Value: tc.tok})
		got := pageCfg(t, body)
		tc.want.Version = "test"
		if !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %+v, want %+v", tc.tok, got, tc.want)
		}
	}

	// Without a tokens file: watch-only, full view, no control.
	srv = serve(t, "")
	_, body := get(t, srv.URL+"/", nil)
	if got := pageCfg(t, body); !got.Local || got.Control || got.Record || got.SignIn || got.Capture != "full" || got.Identity != "local" {
		t.Errorf("watch-only: %+v", got)
	}
}

// TestWidest: scope globs as the widest filter attr-match can say.
func TestWidest(t *testing.T) {
	for _, tc := range []struct {
		subscribe, read []string
		want            map[string]any
		err             bool
	}{
		{[]string{"*"}, []string{"*"}, nil, false},
		{[]string{"**"}, []string{"*"}, nil, false},
		{[]string{"attention.*", "tool.completed"}, []string{"*"}, map[string]any{"type": []string{"attention.*", "tool.completed"}}, false},
		{[]string{"attention.*", "x*y"}, []string{"*"}, map[string]any{"type": []string{"attention.*"}}, false},
		{[]string{"att*"}, []string{"*"}, nil, true},
		{[]string{"*"}, []string{"aep://h/agent/a/session/s"}, map[string]any{"source": []string{"aep://h/agent/a/session/s"}}, false},
		{[]string{"*"}, []string{"aep://h/*"}, nil, true},
		{nil, []string{"*"}, nil, true},
	} {
		got, msg := widest(&auth.Grant{Subscribe: tc.subscribe, Read: tc.read})
		if !reflect.DeepEqual(got, tc.want) || (msg != "") != tc.err {
			t.Errorf("%v %v: %v %q", tc.subscribe, tc.read, got, msg)
		}
	}
}

// TestAssets: the assets are served from the binary with their types and
// validators; nothing else is served.
func TestAssets(t *testing.T) {
	srv := serve(t, tokens)
	for name, ct := range map[string]string{"console.js": "text/javascript; charset=utf-8", "console.css": "text/css; charset=utf-8"} {
		resp, body := get(t, srv.URL+"/assets/"+name, nil)
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != ct || resp.Header.Get("ETag") == "" || len(body) == 0 {
			t.Errorf("%s: %d %q %q", name, resp.StatusCode, resp.Header.Get("Content-Type"), resp.Header.Get("ETag"))
			continue
		}
		req, _ := http.NewRequest("GET", srv.URL+"/assets/"+name, nil)
		req.Header.Set("If-None-Match", resp.Header.Get("ETag"))
		r2, err := noRedirect.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		r2.Body.Close()
		if r2.StatusCode != http.StatusNotModified {
			t.Errorf("%s revalidated: %d", name, r2.StatusCode)
		}
	}
	for _, p := range []string{"/assets/index.html", "/assets/nope.js", "/fleet", "/console.go", "/assets/"} {
		if resp, _ := get(t, srv.URL+p, nil); resp.StatusCode != http.StatusNotFound {
			t.Errorf("%s: %d", p, resp.StatusCode)
		}
	}
	resp, err := http.Post(srv.URL+"/", "text/plain", strings.NewReader("x"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed {
		t.Errorf("POST /: %d", resp.StatusCode)
	}
	// The page links only its own assets, with their digests.
	_, body := get(t, srv.URL+"/", nil)
	for _, name := range []string{"console.js", "console.css"} {
		if !strings.Contains(body, "/assets/"+name+"?v="+strings.Trim(Handler(Options{}).(*handler).files[name].etag, `"`)) {
			t.Errorf("the page does not link %s by its digest", name)
		}
	}
}

// TestNoExternalAssets: the console works offline: nothing in its assets
// loads from anywhere but its own origin.
func TestNoExternalAssets(t *testing.T) {
	external := regexp.MustCompile(`(?i)(src|href)\s*=\s*["']?\s*(https?:)?//|url\(\s*["']?\s*(https?:)?//|@import|https?://`)
	h := Handler(Options{}).(*handler)
	for name, a := range h.files {
		if m := external.Find(a.body); m != nil {
			t.Errorf("%s refers to another origin: %q", name, m)
		}
	}
}
