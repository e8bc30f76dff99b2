package notify

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"github.com/aep-hook/aep-hook/consumer/attrmatch"
	"github.com/aep-hook/aep-hook/consumer/relay/auth"
	"github.com/aep-hook/aep-hook/internal/guard"
)

// maxConfig bounds the configuration file.
const maxConfig = 1 << 20

// DefaultAgent is the router's own agent name: the envelope agent of the
// attention.routed events it records (AEP-0002 §7: agent = the router).
const DefaultAgent = "aep-hook-notify"

// DefaultKinds are the attention kinds routed when the configuration names
// none: the two that stall an agent until a person acts.
var DefaultKinds = []string{"permission", "form"}

// File is the configuration file as written: the relay it reads, the
// routes, and what is routed. It holds credentials (the relay token, webhook
// URLs, ntfy tokens), so LoadFile refuses it when others may read it.
type File struct {
	// Relay is the relay's base URL (http://HOST:PORT); Token its bearer
	// token for this notifier.
	Relay string `json:"relay"`
	Token string `json:"token"`
	// Agent is the router's agent name (DefaultAgent when empty): the
	// relay's consumer:NAME, or an agent its write scopes name.
	Agent string `json:"agent"`
	// Filter is an attr-match filter on the envelope (agent, session,
	// tenant, ...); the notifier decides the types itself.
	Filter json.RawMessage `json:"filter"`
	// Kinds are the attention kinds routed (DefaultKinds when empty).
	Kinds []string `json:"kinds"`
	// Delay holds each request back this long before the first delivery,
	// so one answered at the terminal meanwhile sends nothing.
	Delay string `json:"delay"`
	// Remind sends a request still pending after this long again, up to
	// Reminders times (1 when Remind is set and Reminders is 0).
	Remind    string `json:"remind"`
	Reminders int    `json:"reminders"`
	// MaxAge: a request older than this when first seen is not sent (a
	// session that died holding one).
	MaxAge string `json:"max_age"`
	// Actions is where a push's answer buttons reach this notifier.
	Actions *ActionsFile `json:"actions"`
	Routes  []RouteFile  `json:"routes"`
}

// ActionsFile configures the answer buttons of push notifications.
type ActionsFile struct {
	// Listen is the address the notifier serves the buttons on.
	Listen string `json:"listen"`
	// URL is that listener as the phone reaches it (a reverse proxy's
	// https URL); the buttons point there.
	URL string `json:"url"`
	// Relay is the relay's WebSocket (ws://HOST:PORT/socket) the answers
	// are sent over; default: Relay's /socket.
	Relay string `json:"relay"`
	// Origins are browser origins allowed to press (an ntfy web app's,
	// such as https://ntfy.sh); the phone apps send none.
	Origins []string `json:"origins"`
}

// RouteFile is one route as written.
type RouteFile struct {
	// Name is the route's name, the attention.routed `to` (default: its
	// type).
	Name string `json:"name"`
	// Type is desktop, ntfy or webhook.
	Type string `json:"type"`
	// URL is the ntfy topic URL or the webhook URL.
	URL string `json:"url"`
	// Token is an ntfy access token (sent as a bearer token); User and
	// Password are the alternative, HTTP basic authentication.
	Token    string `json:"token"`
	User     string `json:"user"`
	Password string `json:"password"`
	// Headers are added to every request of an HTTP route.
	Headers map[string]string `json:"headers"`
	// Template is the webhook body: json (the default), slack, discord,
	// teams, or custom with Body a Go text/template.
	Template string `json:"template"`
	Body     string `json:"body"`
	// Capture is the most the notification may show: metadata (the
	// default) or redacted (the request's text as the redaction pipeline
	// left it).
	Capture string `json:"capture"`
	// Priority is the ntfy priority, 1 to 5 (default 4, high).
	Priority int `json:"priority"`
	// Tags are ntfy tags (emoji short codes).
	Tags []string `json:"tags"`
	// Click is a URL opened when the notification is tapped (the console).
	Click string `json:"click"`
	// Actions adds answer buttons to an ntfy notification (default true
	// when the configuration has actions).
	Actions *bool `json:"actions"`
	// Kinds, Remind and Timeout override the file's for this route.
	Kinds   []string `json:"kinds"`
	Remind  string   `json:"remind"`
	Timeout string   `json:"timeout"`
}

// LoadFile reads the configuration, refusing a file that is a link, not
// regular, or readable by group or others (it holds credentials). Errors
// name what is wrong, never a value.
func LoadFile(path string) (*File, error) {
	f, err := guard.OpenSecretFile(path)
	if err != nil {
		return nil, fmt.Errorf("notify config: %w", err)
	}
	defer f.Close()
	cf, err := ParseFile(io.LimitReader(f, maxConfig+1))
	if err != nil {
		return nil, fmt.Errorf("notify config %s: %w", path, err)
	}
	return cf, nil
}

// ParseFile decodes a configuration; unknown members are refused (a
// misspelt option is not silently ignored).
func ParseFile(r io.Reader) (*File, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	if len(b) > maxConfig {
		return nil, fmt.Errorf("larger than %d bytes", maxConfig)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var cf File
	if err := dec.Decode(&cf); err != nil {
		return nil, errors.New(jsonProblem(err))
	}
	return &cf, nil
}

// jsonProblem describes a decoding error without quoting the input.
func jsonProblem(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("JSON syntax error at byte %d", se.Offset)
	case errors.As(err, &te):
		return fmt.Sprintf("%s must be a %s", te.Field, te.Type)
	case strings.HasPrefix(err.Error(), "json: unknown field"):
		return strings.TrimPrefix(err.Error(), "json: ")
	}
	return "not a JSON object"
}

// Settings is a checked configuration, ready to run.
type Settings struct {
	Relay     *url.URL
	Token     string
	Agent     string
	Filter    map[string]json.RawMessage
	Kinds     []string
	Delay     time.Duration
	Remind    time.Duration
	Reminders int
	MaxAge    time.Duration
	Actions   *Actions
	Routes    []*Route
}

// Actions is the checked ActionsFile.
type Actions struct {
	Listen  string
	URL     *url.URL
	Socket  string
	Origins []string
}

// DefaultMaxAge is how old a request may be when first seen and still be
// sent.
const DefaultMaxAge = 24 * time.Hour

// Check validates the configuration and builds its routes. Errors name
// the route and the member, never a credential.
func (cf *File) Check() (*Settings, error) {
	s := &Settings{Token: cf.Token, Agent: cf.Agent, Kinds: cf.Kinds, Reminders: cf.Reminders}
	if s.Agent == "" {
		s.Agent = DefaultAgent
	}
	if !tokenName(s.Agent) {
		return nil, errors.New("agent: a name of letters, digits, '.', '_', '@' or '-'")
	}
	if cf.Relay == "" {
		cf.Relay = "http://127.0.0.1:8787"
	}
	u, err := baseURL(cf.Relay)
	if err != nil {
		return nil, fmt.Errorf("relay: %w", err)
	}
	s.Relay = u
	if len(cf.Filter) > 0 && string(cf.Filter) != "null" {
		f, err := parseEnvelopeFilter(cf.Filter)
		if err != nil {
			return nil, fmt.Errorf("filter: %w", err)
		}
		s.Filter = f
	}
	if len(s.Kinds) == 0 {
		s.Kinds = DefaultKinds
	}
	if err := checkKinds(s.Kinds); err != nil {
		return nil, fmt.Errorf("kinds: %w", err)
	}
	for _, d := range []struct {
		name string
		in   string
		out  *time.Duration
	}{{"delay", cf.Delay, &s.Delay}, {"remind", cf.Remind, &s.Remind}, {"max_age", cf.MaxAge, &s.MaxAge}} {
		if *d.out, err = duration(d.in); err != nil {
			return nil, fmt.Errorf("%s: %w", d.name, err)
		}
	}
	if s.MaxAge == 0 {
		s.MaxAge = DefaultMaxAge
	}
	if s.Reminders < 0 {
		return nil, errors.New("reminders: not negative")
	}
	if s.Remind > 0 && s.Reminders == 0 {
		s.Reminders = 1
	}
	if cf.Actions != nil {
		a, err := cf.Actions.check(s.Relay)
		if err != nil {
			return nil, fmt.Errorf("actions: %w", err)
		}
		s.Actions = a
	}
	if len(cf.Routes) == 0 {
		return nil, errors.New("routes: none configured")
	}
	seen := map[string]bool{}
	for i, rf := range cf.Routes {
		r, err := rf.build(s)
		if err != nil {
			name := rf.Name
			if !tokenName(name) {
				name = fmt.Sprintf("routes[%d]", i)
			}
			return nil, fmt.Errorf("route %s: %w", name, err)
		}
		if seen[r.Name] {
			return nil, fmt.Errorf("route %s: the name is used twice (give each route its own name)", r.Name)
		}
		seen[r.Name] = true
		s.Routes = append(s.Routes, r)
	}
	return s, nil
}

func (a *ActionsFile) check(relay *url.URL) (*Actions, error) {
	if a.Listen == "" {
		return nil, errors.New("listen: the address the buttons are served on (HOST:PORT)")
	}
	if a.URL == "" {
		return nil, errors.New("url: that listener as the phone reaches it (https://...)")
	}
	u, err := baseURL(a.URL)
	if err != nil {
		return nil, fmt.Errorf("url: %w", err)
	}
	out := &Actions{Listen: a.Listen, URL: u, Socket: a.Relay, Origins: a.Origins}
	if out.Socket != "" {
		su, err := url.Parse(out.Socket)
		if err != nil || (su.Scheme != "ws" && su.Scheme != "wss") || su.Host == "" || su.User != nil || su.RawQuery != "" {
			return nil, errors.New("relay: the relay's WebSocket, ws://HOST:PORT/socket (the token in its own member)")
		}
	}
	for i, o := range a.Origins {
		ou, err := url.Parse(o)
		if err != nil || (ou.Scheme != "http" && ou.Scheme != "https") || ou.Host == "" || (ou.Path != "" && ou.Path != "/") {
			return nil, fmt.Errorf("origins[%d]: an origin, scheme://host[:port]", i)
		}
	}
	if out.Socket == "" {
		ws := *relay
		ws.Scheme = map[string]string{"http": "ws", "https": "wss"}[relay.Scheme]
		ws.Path = strings.TrimSuffix(ws.Path, "/") + "/socket"
		out.Socket = ws.String()
	}
	return out, nil
}

// baseURL parses an http(s) URL with a host and no query, fragment or
// user information; errors never quote it.
func baseURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, errors.New("not a URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, errors.New("an http:// or https:// URL")
	}
	if u.Host == "" {
		return nil, errors.New("the URL names no host")
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, errors.New("the URL carries user information, a query or a fragment; give the token in its own member")
	}
	return u, nil
}

// parseEnvelopeFilter checks an attr-match filter and returns its members:
// type is the notifier's to set (it reads the attention lifecycle).
func parseEnvelopeFilter(raw json.RawMessage) (map[string]json.RawMessage, error) {
	if _, err := attrmatch.Parse(raw); err != nil {
		return nil, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, errors.New("an attr-match JSON object")
	}
	if _, ok := m["type"]; ok {
		return nil, errors.New("type is the notifier's own (it reads the attention lifecycle); filter by agent, session, source, severity or tenant, and by kind with kinds")
	}
	return m, nil
}

var attentionKinds = map[string]bool{"permission": true, "input": true, "auth": true, "review": true, "form": true, "other": true}

func checkKinds(kinds []string) error {
	for i, k := range kinds {
		if !attentionKinds[k] {
			return fmt.Errorf("[%d] is not an attention kind (permission, input, auth, review, form, other)", i)
		}
	}
	return nil
}

// duration reads a Go duration ("90s", "10m"); "" and "0" are zero.
func duration(s string) (time.Duration, error) {
	if s == "" || s == "0" {
		return 0, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, errors.New("a duration such as 30s or 10m")
	}
	return d, nil
}

// tokenName reports a name usable as a route name or an agent: a name the
// relay takes in an identity (the notifier posts as that agent), at most 64
// bytes.
func tokenName(s string) bool { return len(s) <= 64 && auth.ValidName(s) }
