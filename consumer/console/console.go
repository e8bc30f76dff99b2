package console

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"html/template"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"

	"github.com/aep-hook/aep-hook/consumer/relay"
	"github.com/aep-hook/aep-hook/consumer/relay/auth"
)

//go:embed assets
var assets embed.FS

// Respond is the command type the page's answer controls send.
const Respond = "control.attention.respond"

// policy allows the page nothing but its own origin: its scripts, styles
// and its WebSocket (CSP3 'self' covers ws: and wss: on the same host).
const policy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// Options configure the console.
type Options struct {
	// Version is shown in the page's footer.
	Version string
}

// Handler serves the console: the page at /, its assets under /assets/,
// /signout, and a plain 404 for anything else. Mount it as the relay's
// Options.Console.
func Handler(opts Options) http.Handler {
	h := &handler{opts: opts}
	h.load()
	return h
}

type handler struct {
	opts  Options
	page  *template.Template
	files map[string]asset // by name under assets/
}

type asset struct {
	body  []byte
	etag  string
	ctype string
}

func (h *handler) load() {
	h.files = map[string]asset{}
	fs.WalkDir(assets, "assets", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := assets.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		ct := mime.TypeByExtension(path.Ext(p))
		if ct == "" {
			ct = "application/octet-stream"
		}
		h.files[strings.TrimPrefix(p, "assets/")] = asset{body: b, etag: `"` + hex.EncodeToString(sum[:8]) + `"`, ctype: ct}
		return nil
	})
	h.page = template.Must(template.New("index.html").Parse(string(h.files["index.html"].body)))
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
		return
	}
	switch {
	case r.URL.Path == "/":
		h.index(w, r)
	case r.URL.Path == FleetPath:
		h.fleetHandler(w, r)
	case r.URL.Path == "/signout":
		h.signOut(w, r)
	case strings.HasPrefix(r.URL.Path, "/assets/"):
		h.asset(w, r, strings.TrimPrefix(r.URL.Path, "/assets/"))
	default:
		http.NotFound(w, r)
	}
}

// index is the page. A browser that proved a token in the URL (neither
// the cookie nor an Authorization header carried it) gets the cookie and
// is sent to the same page without the token.
func (h *handler) index(w http.ResponseWriter, r *http.Request) {
	g := relay.GrantFrom(r.Context())
	_, cookieErr := r.Cookie(relay.CookieName)
	hadCookie := cookieErr == nil
	if g != nil && g.Authenticated() && !hadCookie && r.Header.Get("Authorization") == "" {
		if relay.SetSignInCookie(w, r) {
			// The guard has already taken access_token off the URL.
			u := *r.URL
			u.Scheme, u.Host = "", ""
			http.Redirect(w, r, u.RequestURI(), http.StatusSeeOther)
			return
		}
	}
	cfg := pageConfig(g, hadCookie)
	cfg.Version = h.opts.Version
	b, _ := json.Marshal(cfg)
	var buf bytes.Buffer
	if err := h.page.Execute(&buf, map[string]any{
		"Config": string(b),
		"CSS":    strings.Trim(h.files["console.css"].etag, `"`),
		"JS":     strings.Trim(h.files["console.js"].etag, `"`),
	}); err != nil {
		http.Error(w, "the console page failed to render", http.StatusInternalServerError)
		return
	}
	if g == nil && hadCookie {
		// The saved token is no longer accepted: forget it, so the next
		// sign-in URL is not shadowed by it.
		clearCookie(w, r)
	}
	hdr := w.Header()
	hdr.Set("Content-Type", "text/html; charset=utf-8")
	hdr.Set("Cache-Control", "no-store")
	pageHeaders(hdr)
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write(buf.Bytes())
	}
}

func pageHeaders(hdr http.Header) {
	hdr.Set("Content-Security-Policy", policy)
	hdr.Set("X-Content-Type-Options", "nosniff")
	hdr.Set("Referrer-Policy", "no-referrer")
	hdr.Set("X-Frame-Options", "DENY")
}

// signOut forgets the token and goes back to the page.
func (h *handler) signOut(w http.ResponseWriter, r *http.Request) {
	clearCookie(w, r)
	w.Header().Set("Cache-Control", "no-store")
	http.Redirect(w, r, "/", http.StatusSeeOther)
}

func clearCookie(w http.ResponseWriter, r *http.Request) {
	http.SetCookie(w, &http.Cookie{Name: relay.CookieName, Value: "", Path: "/", MaxAge: -1, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: r.TLS != nil || r.Header.Get("X-Forwarded-Proto") == "https"})
}

func (h *handler) asset(w http.ResponseWriter, r *http.Request, name string) {
	a, ok := h.files[name]
	if !ok || name == "index.html" {
		http.NotFound(w, r)
		return
	}
	hdr := w.Header()
	hdr.Set("Content-Type", a.ctype)
	hdr.Set("ETag", a.etag)
	hdr.Set("Cache-Control", "no-cache")
	pageHeaders(hdr)
	if r.Header.Get("If-None-Match") == a.etag {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		w.Write(a.body)
	}
}

// config is what the page is told about its token.
type config struct {
	// SignIn is set when the relay requires a token and the request
	// presented none it accepts: the page explains how to sign in.
	SignIn bool `json:"signin"`
	// Expired: the browser's saved token is no longer accepted.
	Expired  bool   `json:"expired,omitempty"`
	Identity string `json:"identity,omitempty"`
	// Name is the sender's name, the envelope agent of the commands the
	// page sends (the consumer token's NAME).
	Name string `json:"name,omitempty"`
	// Local: the relay runs with no token at all (--open; watch-only).
	Local bool `json:"local,omitempty"`
	// Capture is the token's ceiling: the most content the relay
	// delivers to it.
	Capture string `json:"capture,omitempty"`
	Tenant  string `json:"tenant,omitempty"`
	// Control: the token may send control.attention.respond.
	Control bool `json:"control"`
	// Record: the token may emit events as Name, so the page records
	// where it routed a request (attention.routed, the browser's
	// notifications).
	Record bool `json:"record,omitempty"`
	// Filter is the widest attr-match filter the token's scopes allow
	// (nil when they allow everything); FilterError says why none does.
	Filter      map[string]any `json:"filter,omitempty"`
	FilterError string         `json:"filter_error,omitempty"`
	Version     string         `json:"version,omitempty"`
}

func pageConfig(g *auth.Grant, hadCookie bool) config {
	if g == nil {
		return config{SignIn: true, Expired: hadCookie}
	}
	c := config{Identity: g.Identity, Local: !g.Authenticated(), Capture: g.Capture.String(),
		Tenant: g.Tenant, Control: g.Controls(Respond)}
	switch g.Kind {
	case auth.Consumer:
		c.Name = g.Name
	case auth.Emitter:
		if !strings.Contains(g.Agent, "*") {
			c.Name = g.Agent
		}
	}
	if c.Name == "" {
		c.Control = false
	}
	c.Record = c.Name != "" && g.Authenticated() && g.Emits(c.Name) == nil
	c.Filter, c.FilterError = widest(g)
	return c
}

// widest is the widest filter the grant's scopes let the page subscribe
// with: the relay refuses a subscription whose types or sources its
// scopes do not cover, so a token scoped to some types or sources
// subscribes to exactly those. Globs attr-match cannot say (a * inside a
// name) are left out; when nothing is left, the error says so.
func widest(g *auth.Grant) (map[string]any, string) {
	f := map[string]any{}
	types, ok := patterns(g.Subscribe, true)
	if !ok {
		return nil, "this token's subscribe scopes name no event type the console can ask for (a type glob is an exact type or a prefix ending in .*)"
	}
	if types != nil {
		f["type"] = types
	}
	sources, ok := patterns(g.Read, false)
	if !ok {
		return nil, "this token's read scopes cannot be subscribed to as a whole: give it read:* or read scopes of exact sources"
	}
	if sources != nil {
		f["source"] = sources
	}
	if len(f) == 0 {
		return nil, ""
	}
	return f, ""
}

// patterns turns scope globs into attr-match values: nil when one glob is
// "*" (everything), the expressible ones otherwise, false when none is.
func patterns(globs []string, typed bool) ([]string, bool) {
	var out []string
	for _, gl := range globs {
		if strings.Trim(gl, "*") == "" {
			return nil, true
		}
		stars := strings.Count(gl, "*")
		switch {
		case stars == 0:
			out = append(out, gl)
		case typed && stars == 1 && strings.HasSuffix(gl, ".*") && len(gl) > 2:
			out = append(out, gl)
		}
	}
	return out, len(out) > 0
}
