package relay

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aep-hook/aep-hook/consumer/relay/auth"
)

// TestConsoleMount: a handler given as Options.Console is served at / and
// every path the bindings do not claim, without a token (the page signs
// in), reading the caller's grant; SetSignInCookie turns a token in the
// URL into an HttpOnly SameSite=Strict cookie the bindings then accept.
func TestConsoleMount(t *testing.T) {
	toks, err := auth.Parse(strings.NewReader(`{"token":"0123456789abcdef-console","identity":"consumer:c","scopes":["subscribe:*","read:*"]}`))
	if err != nil {
		t.Fatal(err)
	}
	var seen []*auth.Grant
	console := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, GrantFrom(r.Context()))
		if SetSignInCookie(w, r) {
			http.Redirect(w, r, r.URL.Path, http.StatusSeeOther)
			return
		}
		w.Write([]byte("console " + r.URL.Path))
	})
	s, err := New(Options{Home: t.TempDir(), Tokens: toks, Console: console, NoFollow: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	srv := httptest.NewServer(s.Handler())
	defer srv.Close()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}

	resp, err := client.Get(srv.URL + "/fleet")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 || seen[0] != nil {
		t.Errorf("without a token: %d, grant %v", resp.StatusCode, seen[0])
	}
	resp, err = client.Get(srv.URL + "/?access_token=0123456789abcdef-console")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	var cookie *http.Cookie
	for _, c := range resp.Cookies() {
		if c.Name == CookieName {
			cookie = c
		}
	}
	if resp.StatusCode != http.StatusSeeOther || cookie == nil || !cookie.HttpOnly || cookie.SameSite != http.SameSiteStrictMode || strings.Contains(resp.Header.Get("Location"), "access_token") {
		t.Fatalf("sign-in: %d %v %q", resp.StatusCode, cookie, resp.Header.Get("Location"))
	}
	if g := seen[1]; g == nil || g.Name != "c" {
		t.Errorf("grant with a token: %v", g)
	}
	req, _ := http.NewRequest("GET", srv.URL+"/stream?live=0", nil)
	req.AddCookie(cookie)
	resp, err = client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("the stream with the cookie: %d", resp.StatusCode)
	}
	resp, _ = client.Get(srv.URL + "/stream?live=0")
	resp.Body.Close()
	if resp.StatusCode != 401 {
		t.Errorf("the stream without a token is not the console's: %d", resp.StatusCode)
	}
}
