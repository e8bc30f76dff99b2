package notify

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aep-hook/aep-hook/consumer/answer"
)

// newTestButtons makes buttons over home with their public URL at base.
func newTestButtons(t *testing.T, home, base string, origins ...string) *Buttons {
	t.Helper()
	cf := &File{Relay: "http://127.0.0.1:1", Token: "notifier-token-0123456789",
		Actions: &ActionsFile{Listen: "127.0.0.1:0", URL: base, Origins: origins},
		Routes:  []RouteFile{{Name: "phone", Type: "ntfy", URL: "http://127.0.0.1:2/t"}}}
	s, err := cf.Check()
	if err != nil {
		t.Fatal(err)
	}
	b, err := NewButtons(s, ButtonOptions{Home: home, Host: "router-host"})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

var claudeOptions = []Option{{"yes", "Yes"}, {"yes-apply-suggestions", "Yes, and don't ask again"}, {"no", "No, and tell Claude what to do differently"}}

func testCard(id, kind string, via []string, opts ...Option) Request {
	return Request{ID: id, Source: "aep://h/agent/claude-code/session/s1", Agent: "claude-code", Session: "s1",
		Kind: kind, Options: opts, RespondVia: via, At: time.Unix(1700000000, 0)}
}

// metadataShown is options as a metadata ceiling shows them: the id for
// the label.
func metadataShown(opts []Option) []Option {
	out := make([]Option, len(opts))
	for i, o := range opts {
		out[i] = Option{o.ID, o.ID}
	}
	return out
}

func TestButtonActions(t *testing.T) {
	b := newTestButtons(t, t.TempDir(), "https://phone.example/aep")
	codexOpts := []Option{{"approved", "Yes"}, {"approved_for_session", "Yes, for this session"}, {"abort", "No"}, {"denied", "No, continue"}}
	cases := []struct {
		name   string
		r      Request
		shown  []Option
		labels string // "|"-joined; "" is no buttons
		picks  string // the choice each button's URL names
	}{
		{"no options: Allow and Deny", testCard("01A", "permission", []string{"control"}), nil, "Allow|Deny", "allow|deny"},
		{"metadata: words for allow and deny, ids for the rest", testCard("01B", "permission", []string{"control"}, claudeOptions...),
			metadataShown(claudeOptions), "Allow|Deny|yes-apply-suggestions", "o0|o2|o1"},
		{"redacted: the card's own labels", testCard("01C", "permission", []string{"control", "oob"}, claudeOptions...),
			claudeOptions, "Yes|No, and tell Claude what to do differently|Yes, and don't ask again", "o0|o2|o1"},
		{"more options than ntfy shows: allow and deny kept", testCard("01D", "permission", []string{"control"}, codexOpts...),
			codexOpts, "Yes|No|Yes, for this session", "o0|o2|o1"},
		{"no control: no buttons", testCard("01E", "permission", []string{"oob"}, claudeOptions...), claudeOptions, "", ""},
		{"a form: no buttons", testCard("01F", "form", []string{"control"}), nil, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			acts := b.actions(c.r, c.shown)
			var labels, picks []string
			for _, a := range acts {
				labels = append(labels, a.Label)
				u, err := url.Parse(a.URL)
				if err != nil || u.Host != "phone.example" || !strings.HasPrefix(u.Path, "/aep/answer/"+c.r.ID+"/") {
					t.Fatalf("button URL %q", a.URL)
				}
				id, choice, sig, ok := parseButton(u.EscapedPath())
				if !ok || id != c.r.ID || sig != b.mac(c.r.Source, c.r.ID, choice) {
					t.Fatalf("button URL %q does not parse back", a.URL)
				}
				picks = append(picks, choice)
			}
			if got := strings.Join(labels, "|"); got != c.labels {
				t.Errorf("labels %q, want %q", got, c.labels)
			}
			if got := strings.Join(picks, "|"); got != c.picks {
				t.Errorf("choices %q, want %q", got, c.picks)
			}
		})
	}
	// The key is kept: buttons made after a restart sign alike.
	home := t.TempDir()
	r := testCard("01G", "permission", []string{"control"})
	if a, b2 := newTestButtons(t, home, "https://p.example").url(r, "allow"), newTestButtons(t, home, "https://p.example").url(r, "allow"); a != b2 {
		t.Fatalf("a restart changed the button: %s, %s", a, b2)
	}
	if newTestButtons(t, t.TempDir(), "https://p.example").url(r, "allow") == newTestButtons(t, home, "https://p.example").url(r, "allow") {
		t.Fatal("two homes sign alike")
	}
}

// fakeAnswers stands in for the relay: it records each answer sent and
// settles it as told.
type fakeAnswers struct {
	mu   sync.Mutex
	sent []answer.Answer
	ack  string
	err  error
}

func (f *fakeAnswers) respond(ctx context.Context, r Request, a answer.Answer) (answer.Outcome, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.sent = append(f.sent, a)
	return answer.Outcome{Ack: f.ack, Reason: "already_answered"}, f.err
}

func TestButtonPress(t *testing.T) {
	type press struct {
		method, path, host, origin string
		status                     int
		reply                      string
	}
	r := testCard("01PRESS", "permission", []string{"control"}, claudeOptions...)
	cases := []struct {
		name    string
		ack     string
		err     error
		settled bool
		presses func(b *Buttons) []press
		sent    string // the answers sent, "|"-joined
	}{
		{"allow, then settled", answer.Accepted, nil, false, func(b *Buttons) []press {
			p := path(b.url(r, "o0"))
			return []press{{"POST", p, "", "", 200, "Answered: option yes."},
				{"POST", p, "", "", 410, "already settled; nothing was answered"},
				{"POST", path(b.url(r, "o2")), "", "", 410, "already settled"}}
		}, "yes"},
		{"settled on the stream first", answer.Accepted, nil, true, func(b *Buttons) []press {
			return []press{{"POST", path(b.url(r, "o0")), "", "", 410, "already settled; nothing was answered"}}
		}, ""},
		{"rejected: another button may still answer", answer.Rejected, nil, false, func(b *Buttons) []press {
			return []press{{"POST", path(b.url(r, "o2")), "", "", 409, "did not take the answer (already_answered)"},
				{"POST", path(b.url(r, "o0")), "", "", 409, "did not take"}}
		}, "no|yes"},
		{"refused by the relay", answer.Refused, nil, false, func(b *Buttons) []press {
			return []press{{"POST", path(b.url(r, "o0")), "", "", 409, "no agent waiting"}}
		}, "yes"},
		{"no ack in time", answer.Timeout, nil, false, func(b *Buttons) []press {
			return []press{{"POST", path(b.url(r, "o0")), "", "", 504, "may still be waiting"}}
		}, "yes"},
		{"relay unreachable", "", errors.New("dial: refused"), false, func(b *Buttons) []press {
			return []press{{"POST", path(b.url(r, "o0")), "", "", 502, "nothing was answered"}}
		}, "yes"},
		{"refused before any answer", answer.Accepted, nil, false, func(b *Buttons) []press {
			good := path(b.url(r, "o0"))
			return []press{
				{"GET", good, "", "", 405, "POST"},
				{"POST", good[:len(good)-2] + "xx", "", "", 404, "holds no such request"},
				{"POST", strings.Replace(good, "/o0/", "/o1/", 1), "", "", 404, "holds no such request"},
				{"POST", strings.Replace(good, "01PRESS", "01OTHER", 1), "", "", 404, "holds no such request"},
				{"POST", "/answer/01PRESS/o0", "", "", 404, "Not a button"},
				{"POST", good, "evil.example", "", 403, "host not allowed"},
				{"POST", good, "", "https://evil.example", 403, "origin not allowed"},
				{"POST", path(b.url(r, "allow"))[:len(path(b.url(r, "allow")))-1] + "A", "", "", 404, "holds no such request"},
			}
		}, ""},
		{"through the public name and an allowed origin", answer.Accepted, nil, false, func(b *Buttons) []press {
			return []press{{"POST", path(b.url(r, "allow")), "phone.example", "https://ntfy.example", 200, "Answered: allow."}}
		}, "yes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := newTestButtons(t, t.TempDir(), "https://phone.example", "https://ntfy.example")
			f := &fakeAnswers{ack: c.ack, err: c.err}
			b.respond = f.respond
			b.track(r)
			b.track(testCard("01NOCTL", "permission", []string{"oob"}))
			if c.settled {
				b.settle(r.Source, r.ID)
			}
			srv := httptest.NewServer(b.Handler())
			defer srv.Close()
			for _, p := range c.presses(b) {
				req, _ := http.NewRequest(p.method, srv.URL+p.path, nil)
				if p.host != "" {
					req.Host = p.host
				}
				if p.origin != "" {
					req.Header.Set("Origin", p.origin)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				var sb strings.Builder
				buf := make([]byte, 512)
				n, _ := resp.Body.Read(buf)
				sb.Write(buf[:n])
				resp.Body.Close()
				if acao := resp.Header.Get("Access-Control-Allow-Origin"); resp.StatusCode != http.StatusForbidden && acao != p.origin {
					t.Errorf("%s %s: Access-Control-Allow-Origin %q, want %q", p.method, p.path, acao, p.origin)
				}
				if resp.StatusCode != p.status || !strings.Contains(sb.String(), p.reply) {
					t.Errorf("%s %s: %d %q, want %d %q", p.method, p.path, resp.StatusCode, sb.String(), p.status, p.reply)
				}
			}
			var sent []string
			for _, a := range f.sent {
				sent = append(sent, a.Option)
			}
			if got := strings.Join(sent, "|"); got != c.sent {
				t.Errorf("answers sent %q, want %q", got, c.sent)
			}
		})
	}
}

func path(raw string) string {
	u, _ := url.Parse(raw)
	return u.EscapedPath()
}

// FuzzParseButton: a button's path is outside input; whatever it is, the
// parser does not panic, and what it takes names a non-empty id, choice
// and signature.
func FuzzParseButton(f *testing.F) {
	f.Add("/answer/01ABC/o0/Gk-VZC4oPXT1TJ932PLJogeK")
	f.Add("/prefix/answer/a%2Fb/allow/x")
	f.Add("/answer//o0/")
	f.Add("answer/%zz/o1/sig")
	f.Fuzz(func(t *testing.T, p string) {
		id, choice, sig, ok := parseButton(p)
		if ok && (id == "" || choice == "" || sig == "") {
			t.Fatalf("%q parsed to %q %q %q", p, id, choice, sig)
		}
		if ok {
			if _, _, err := answerOf(testCard(id, "permission", []string{"control"}, claudeOptions...), choice); err == nil &&
				choice != choiceAllow && choice != choiceDeny && choice != "o0" && choice != "o1" && choice != "o2" {
				t.Fatalf("choice %q taken", choice)
			}
		}
	})
}
