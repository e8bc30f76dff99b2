package guard

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

type ctxKey struct{}

func serve(t *testing.T, g *Guard) (*httptest.Server, *[]string) {
	t.Helper()
	var seen []string
	srv := httptest.NewServer(g.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		who, _ := r.Context().Value(ctxKey{}).(string)
		seen = append(seen, r.URL.String())
		io.WriteString(w, "ok "+who)
	})))
	t.Cleanup(srv.Close)
	return srv, &seen
}

func TestGuard(t *testing.T) {
	var toks Tokens[string]
	toks.Add("s3cret", "alice")
	g := &Guard{
		Hosts:      []string{"relay.example"},
		Origins:    []string{"http://console.example:8080"},
		QueryToken: true,
		Cookie:     "aep_token",
		Auth: func(ctx context.Context, tok string) (context.Context, bool) {
			who, ok := toks.Lookup(tok)
			return context.WithValue(ctx, ctxKey{}, who), ok
		},
		Public: func(r *http.Request) bool { return r.URL.Path == "/healthz" },
	}
	srv, seen := serve(t, g)
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))
	cases := []struct {
		name   string
		method string
		path   string
		host   string
		hdr    map[string]string
		status int
		body   string
	}{
		{"own address with bearer", "GET", "/x", "", map[string]string{"Authorization": "Bearer s3cret"}, 200, "ok alice"},
		{"localhost name on loopback", "GET", "/x", "localhost:" + port, map[string]string{"Authorization": "bearer s3cret"}, 200, "ok alice"},
		{"configured name any port", "GET", "/x", "relay.example:443", map[string]string{"Authorization": "Bearer s3cret"}, 200, "ok alice"},
		{"rebound host name", "POST", "/events", "attacker.example:" + port, map[string]string{"Authorization": "Bearer s3cret"}, 403, "host not allowed"},
		{"localhost on another port", "GET", "/x", "localhost:1", map[string]string{"Authorization": "Bearer s3cret"}, 403, "host not allowed"},
		{"foreign IP literal", "GET", "/x", "10.9.8.7:" + port, map[string]string{"Authorization": "Bearer s3cret"}, 403, "host not allowed"},
		{"empty host", "GET", "/x", " ", nil, 403, "host not allowed"},
		{"foreign origin", "POST", "/events", "", map[string]string{"Authorization": "Bearer s3cret", "Origin": "http://evil.example"}, 403, "origin not allowed"},
		{"null origin", "GET", "/stream", "", map[string]string{"Authorization": "Bearer s3cret", "Origin": "null"}, 403, "origin not allowed"},
		{"allowed origin", "POST", "/events", "", map[string]string{"Authorization": "Bearer s3cret", "Origin": "http://console.example:8080"}, 200, "ok alice"},
		{"cross-site post without origin", "POST", "/events", "", map[string]string{"Authorization": "Bearer s3cret", "Sec-Fetch-Site": "cross-site"}, 403, "cross-site"},
		{"no token", "GET", "/stream", "", nil, 401, "missing bearer token"},
		{"wrong token", "GET", "/stream", "", map[string]string{"Authorization": "Bearer s3cre"}, 401, "invalid bearer token"},
		{"query token", "GET", "/stream?access_token=s3cret&filter=x", "", nil, 200, "ok alice"},
		{"cookie token", "GET", "/", "", map[string]string{"Cookie": "aep_token=s3cret"}, 200, "ok alice"},
		{"public path bare", "GET", "/healthz", "", nil, 200, "ok "},
		{"public path still host-checked", "GET", "/healthz", "attacker.example:" + port, nil, 403, "host not allowed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			req, err := http.NewRequest(c.method, srv.URL+c.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			if c.host != "" {
				req.Host = c.host
			}
			for k, v := range c.hdr {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != c.status || !strings.Contains(string(b), c.body) {
				t.Fatalf("got %d %q, want %d containing %q", resp.StatusCode, b, c.status, c.body)
			}
			if strings.Contains(string(b), "s3cret") {
				t.Fatalf("the token reached the response: %q", b)
			}
		})
	}
	for _, u := range *seen {
		if strings.Contains(u, "access_token") || strings.Contains(u, "s3cret") {
			t.Fatalf("the handler saw the token in the URL: %s", u)
		}
	}
}

func TestTokensLookup(t *testing.T) {
	var toks Tokens[int]
	toks.Add("a", 1)
	toks.Add("bb", 2)
	for _, c := range []struct {
		in   string
		want int
		ok   bool
	}{{"a", 1, true}, {"bb", 2, true}, {"b", 0, false}, {"", 0, false}, {"aa", 0, false}} {
		if got, ok := toks.Lookup(c.in); got != c.want || ok != c.ok {
			t.Errorf("Lookup(%q) = %d, %v; want %d, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

func TestLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:4319": true, "localhost:1": true, "[::1]:80": true,
		":4319": false, "0.0.0.0:1": false, "192.168.1.2:1": false, "example.com:1": false,
	} {
		if got := Loopback(addr); got != want {
			t.Errorf("Loopback(%q) = %v, want %v", addr, got, want)
		}
	}
}

func TestUserToken(t *testing.T) {
	home := filepath.Join(t.TempDir(), "aep")
	a, err := UserToken(home)
	if err != nil {
		t.Fatal(err)
	}
	b, err := UserToken(home)
	if err != nil || a != b || len(a) < 40 {
		t.Fatalf("second read %q, %v; first %q", b, err, a)
	}
	fi, err := os.Stat(filepath.Join(home, TokenFile))
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("token file mode %v, %v", fi.Mode(), err)
	}
	if err := os.Chmod(filepath.Join(home, TokenFile), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := UserToken(home); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("a world-readable token file was accepted: %v", err)
	}
	link := filepath.Join(t.TempDir(), "aep")
	if err := os.MkdirAll(link, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(home, TokenFile), filepath.Join(link, TokenFile)); err != nil {
		t.Fatal(err)
	}
	if _, err := UserToken(link); err == nil {
		t.Fatal("a token file that is a link was followed")
	}
}

// A proxy behind the guard never hands the listener's token on, and a
// client's own Authorization stays for the server behind the proxy when
// the listener's token rides in Proxy-Authorization.
func TestGuardStrip(t *testing.T) {
	var got []http.Header
	g := &Guard{Auth: Bearer("tee-token"), ProxyAuthorization: true, Cookie: "aep_token", Strip: true}
	srv := httptest.NewServer(g.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.Header.Clone())
	})))
	defer srv.Close()
	cases := []struct {
		name   string
		hdr    map[string]string
		status int
		keep   map[string]string // headers the handler must still see
		gone   []string          // headers it must not
	}{
		{"bearer stripped", map[string]string{"Authorization": "Bearer tee-token"}, 200, nil, []string{"Authorization"}},
		{"proxy header first", map[string]string{"Proxy-Authorization": "Bearer tee-token", "Authorization": "Bearer upstream-secret"},
			200, map[string]string{"Authorization": "Bearer upstream-secret"}, []string{"Proxy-Authorization"}},
		{"cookie stripped, others kept", map[string]string{"Cookie": "theme=dark; aep_token=tee-token"}, 200,
			map[string]string{"Cookie": "theme=dark"}, nil},
		{"upstream credential alone is no token", map[string]string{"Authorization": "Bearer upstream-secret"}, 401, nil, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got = nil
			req, _ := http.NewRequest("GET", srv.URL, nil)
			for k, v := range c.hdr {
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != c.status {
				t.Fatalf("status %d, want %d", resp.StatusCode, c.status)
			}
			if c.status != 200 {
				return
			}
			h := got[0]
			for k, v := range c.keep {
				if h.Get(k) != v {
					t.Errorf("%s = %q, want %q", k, h.Get(k), v)
				}
			}
			for _, k := range c.gone {
				if h.Get(k) != "" {
					t.Errorf("%s reached the handler: %q", k, h.Get(k))
				}
			}
			for k, vs := range h {
				for _, v := range vs {
					if strings.Contains(v, "tee-token") {
						t.Errorf("the token reached the handler in %s", k)
					}
				}
			}
		})
	}
}
