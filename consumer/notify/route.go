package notify

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/aep-hook/aep-hook/redact"
)

// DefaultTimeout bounds one delivery attempt.
const DefaultTimeout = 10 * time.Second

// Route is one place requests are delivered to.
type Route struct {
	// Name is the destination token recorded as attention.routed `to`.
	Name string
	// Via is the mechanism token recorded as attention.routed `via`:
	// ntfy, webhook, notify-send, osascript or toast.
	Via string
	// Capture is the most a notification on this route shows.
	Capture redact.Level
	// Kinds are the attention kinds it takes.
	Kinds []string
	// Remind and Reminders: a request still pending Remind after a
	// delivery is sent again, at most Reminders times.
	Remind    time.Duration
	Reminders int
	// Timeout bounds one attempt.
	Timeout time.Duration
	// Actions says a notification carries answer buttons.
	Actions bool

	sender sender
	// where describes the destination without its credentials.
	where string
}

// sender delivers one message over one route.
type sender interface {
	send(ctx context.Context, c *http.Client, m *Message) error
}

// String describes the route for people: its name, mechanism and
// destination, never a credential (a webhook URL's path is one).
func (r *Route) String() string {
	s := r.Name + " (" + r.Via
	if r.where != "" {
		s += " to " + r.where
	}
	return s + ", capture " + r.Capture.String() + ")"
}

// Takes reports whether the route delivers requests of kind.
func (r *Route) Takes(kind string) bool { return slices.Contains(r.Kinds, kind) }

// Send delivers m within the route's timeout.
func (r *Route) Send(ctx context.Context, c *http.Client, m *Message) error {
	ctx, cancel := context.WithTimeout(ctx, r.Timeout)
	defer cancel()
	return r.sender.send(ctx, c, m)
}

func (rf RouteFile) build(s *Settings) (*Route, error) {
	r := &Route{Name: rf.Name, Kinds: rf.Kinds, Capture: redact.Metadata, Reminders: s.Reminders, Remind: s.Remind}
	if r.Name == "" {
		r.Name = rf.Type
	}
	if !tokenName(r.Name) {
		return nil, errors.New("name: 1 to 64 of letters, digits, '.', '_', '@' or '-'")
	}
	if len(r.Kinds) == 0 {
		r.Kinds = s.Kinds
	}
	if err := checkKinds(r.Kinds); err != nil {
		return nil, fmt.Errorf("kinds: %w", err)
	}
	switch rf.Capture {
	case "", "metadata":
	case "redacted":
		r.Capture = redact.Redacted
	case "full":
		return nil, errors.New("capture: full is not offered: a notification passes through services that keep it (use redacted)")
	default:
		return nil, errors.New("capture: metadata or redacted")
	}
	var err error
	if rf.Remind != "" {
		if r.Remind, err = duration(rf.Remind); err != nil {
			return nil, fmt.Errorf("remind: %w", err)
		}
		if r.Remind > 0 && r.Reminders == 0 {
			r.Reminders = 1
		}
	}
	if r.Timeout, err = duration(rf.Timeout); err != nil {
		return nil, fmt.Errorf("timeout: %w", err)
	}
	if r.Timeout == 0 {
		r.Timeout = DefaultTimeout
	}
	if rf.Type != "ntfy" && (rf.Priority != 0 || len(rf.Tags) > 0 || rf.Actions != nil) {
		return nil, errors.New("priority, tags and actions are ntfy's")
	}
	if rf.Type != "webhook" && (rf.Template != "" || rf.Body != "") {
		return nil, errors.New("template and body are a webhook's")
	}
	switch rf.Type {
	case "desktop":
		if rf.URL != "" || rf.Token != "" || rf.User != "" || rf.Password != "" || len(rf.Headers) > 0 || rf.Click != "" {
			return nil, errors.New("a desktop route takes no url, credentials, headers or click")
		}
		d, via, err := newDesktop()
		if err != nil {
			return nil, err
		}
		r.sender, r.Via = d, via
	case "ntfy":
		n, where, err := newNtfy(rf)
		if err != nil {
			return nil, err
		}
		r.sender, r.Via, r.where = n, "ntfy", where
		r.Actions = s.Actions != nil && (rf.Actions == nil || *rf.Actions)
		if rf.Actions != nil && *rf.Actions && s.Actions == nil {
			return nil, errors.New("actions: the configuration has no actions listener (actions.listen, actions.url)")
		}
	case "webhook":
		w, where, err := newWebhook(rf)
		if err != nil {
			return nil, err
		}
		r.sender, r.Via, r.where = w, "webhook", where
	case "":
		return nil, errors.New("type: desktop, ntfy or webhook")
	default:
		return nil, errors.New("type: desktop, ntfy or webhook")
	}
	return r, nil
}

// httpTarget is what an HTTP route posts to: the URL, its credentials as
// headers, and where it goes for messages (scheme and host only).
type httpTarget struct {
	url     string
	headers http.Header
}

func newTarget(rf RouteFile, need string) (httpTarget, string, error) {
	if rf.URL == "" {
		return httpTarget{}, "", fmt.Errorf("url: the %s URL", need)
	}
	u, err := url.Parse(rf.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return httpTarget{}, "", fmt.Errorf("url: the %s URL (http:// or https://)", need)
	}
	t := httpTarget{url: rf.URL, headers: http.Header{}}
	if u.User != nil {
		return httpTarget{}, "", errors.New("url: give credentials in token, or user and password, not in the URL")
	}
	if rf.Token != "" && (rf.User != "" || rf.Password != "") {
		return httpTarget{}, "", errors.New("token, or user and password: not both")
	}
	switch {
	case rf.Token != "":
		t.headers.Set("Authorization", "Bearer "+rf.Token)
	case rf.User != "" || rf.Password != "":
		req, _ := http.NewRequest(http.MethodPost, "http://x/", nil)
		req.SetBasicAuth(rf.User, rf.Password)
		t.headers.Set("Authorization", req.Header.Get("Authorization"))
	}
	for k, v := range rf.Headers {
		ck := http.CanonicalHeaderKey(k)
		if !validHeader(ck, v) {
			return httpTarget{}, "", fmt.Errorf("headers: %s is not a header name with a one-line value", redact.Setting(k))
		}
		if ck == "Authorization" && t.headers.Get(ck) != "" {
			return httpTarget{}, "", errors.New("headers: Authorization and token (or user) both given")
		}
		t.headers.Set(ck, v)
	}
	return t, u.Scheme + "://" + u.Host, nil
}

func validHeader(name, value string) bool {
	if name == "" || strings.ContainsAny(value, "\r\n\x00") {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	switch name {
	case "Host", "Content-Length", "Content-Type", "Transfer-Encoding", "Connection":
		return false
	}
	return true
}
