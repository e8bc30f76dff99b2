package notify

import (
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/aep-hook/aep-hook/redact"
)

func TestReadSSE(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		max      int
		want     []string
		skipped  int
	}{
		{"one", "data: {}\n\n", 100, []string{"{}"}, 0},
		{"comments ids and names", ": ping\n\nevent: attention.requested\nid: s:0:1\ndata: a\n\n", 100, []string{"a"}, 0},
		{"multi-line data", "data: a\ndata: b\n\n", 100, []string{"a\nb"}, 0},
		{"crlf", "data: a\r\n\r\n", 100, []string{"a"}, 0},
		{"no space", "data:a\n\n", 100, []string{"a"}, 0},
		{"unterminated message is not delivered", "data: a\n", 100, nil, 0},
		{"too long a line is skipped whole", "data: " + strings.Repeat("x", 200) + "\n\ndata: b\n\n", 50, []string{"b"}, 1},
		{"too long a message is skipped whole", "data: " + strings.Repeat("x", 30) + "\ndata: " + strings.Repeat("y", 30) + "\n\ndata: c\n\n", 50, []string{"c"}, 1},
		{"a line past the reader's buffer", "data: " + strings.Repeat("z", 100<<10) + "\n\n", 1 << 20, []string{strings.Repeat("z", 100<<10)}, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			skipped := 0
			err := readSSE(strings.NewReader(tc.in), tc.max, func(b []byte) error { got = append(got, string(b)); return nil }, func() { skipped++ })
			if !errors.Is(err, io.EOF) {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) || skipped != tc.skipped {
				t.Fatalf("got %d %q skipped %d, want %q skipped %d", len(got), got, skipped, tc.want, tc.skipped)
			}
		})
	}
}

// FuzzReadSSE: any stream reads in bounded memory, every message within
// the bound.
func FuzzReadSSE(f *testing.F) {
	f.Add([]byte("data: {}\n\n: ping\n\ndata: a\ndata: b\r\n\r\n"))
	f.Add([]byte("data:" + strings.Repeat("x", 80) + "\n\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		readSSE(strings.NewReader(string(b)), 64, func(d []byte) error {
			if len(d) > 64 {
				t.Fatalf("a %d-byte message past the 64-byte bound", len(d))
			}
			return nil
		}, nil)
	})
}

func writeConfig(t *testing.T, v any, mode os.FileMode) string {
	t.Helper()
	b, _ := json.Marshal(v)
	p := filepath.Join(t.TempDir(), "notify.json")
	if err := os.WriteFile(p, b, mode); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadFileRefusesReadableByOthers(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("file modes")
	}
	p := writeConfig(t, map[string]any{"routes": []any{map[string]any{"type": "ntfy", "url": "https://ntfy.sh/t"}}}, 0o644)
	if _, err := LoadFile(p); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Fatalf("err %v", err)
	}
	os.Chmod(p, 0o600)
	if _, err := LoadFile(p); err != nil {
		t.Fatal(err)
	}
}

func TestCheckErrorsNeverQuoteCredentials(t *testing.T) {
	const secret = "hooks-secret-T0123-B0456"
	for _, tc := range []struct {
		name string
		in   string
		want string
	}{
		{"unknown member", `{"routes":[{"type":"webhook","url":"https://x/` + secret + `","tokn":"` + secret + `"}]}`, "unknown field"},
		{"bad type", `{"routes":[{"type":"` + secret + `"}]}`, "desktop, ntfy or webhook"},
		{"userinfo", `{"routes":[{"type":"webhook","url":"https://u:` + secret + `@x/h"}]}`, "not in the URL"},
		{"ntfy without topic", `{"routes":[{"type":"ntfy","url":"https://ntfy.sh/"}]}`, "names no topic"},
		{"relay with query", `{"relay":"http://127.0.0.1:1/?access_token=` + secret + `","routes":[{"type":"ntfy","url":"https://ntfy.sh/t"}]}`, "query"},
		{"full", `{"routes":[{"type":"ntfy","url":"https://ntfy.sh/t","capture":"full"}]}`, "full is not offered"},
		{"type in filter", `{"filter":{"type":["x.*"]},"routes":[{"type":"ntfy","url":"https://ntfy.sh/t"}]}`, "type is the notifier's own"},
		{"bad filter", `{"filter":{"data":1},"routes":[{"type":"ntfy","url":"https://ntfy.sh/t"}]}`, "invalid-filter"},
		{"kind", `{"kinds":["` + secret + `"],"routes":[{"type":"ntfy","url":"https://ntfy.sh/t"}]}`, "not an attention kind"},
		{"twice", `{"routes":[{"type":"ntfy","url":"https://ntfy.sh/t"},{"type":"ntfy","url":"https://ntfy.sh/u"}]}`, "used twice"},
		{"template", `{"routes":[{"type":"webhook","url":"https://x/` + secret + `","template":"custom","body":"{{.Title}}"}]}`, "did not make JSON"},
		{"no routes", `{}`, "none configured"},
		{"actions without listener", `{"routes":[{"type":"ntfy","url":"https://ntfy.sh/t","actions":true}]}`, "no actions listener"},
		{"actions without public URL", `{"actions":{"listen":"127.0.0.1:0"},"routes":[{"type":"ntfy","url":"https://ntfy.sh/t"}]}`, "url: that listener"},
		{"actions URL with a token", `{"actions":{"listen":"127.0.0.1:0","url":"https://p.example/?t=` + secret + `"},"routes":[{"type":"ntfy","url":"https://ntfy.sh/t"}]}`, "query"},
		{"actions relay not a socket", `{"actions":{"listen":"127.0.0.1:0","url":"https://p.example","relay":"http://x/` + secret + `"},"routes":[{"type":"ntfy","url":"https://ntfy.sh/t"}]}`, "relay's WebSocket"},
		{"actions relay with a token", `{"actions":{"listen":"127.0.0.1:0","url":"https://p.example","relay":"ws://x/socket?access_token=` + secret + `"},"routes":[{"type":"ntfy","url":"https://ntfy.sh/t"}]}`, "relay's WebSocket"},
		{"actions origin with a path", `{"actions":{"listen":"127.0.0.1:0","url":"https://p.example","origins":["https://ntfy.sh/` + secret + `"]},"routes":[{"type":"ntfy","url":"https://ntfy.sh/t"}]}`, "origins[0]"},
		{"actions on a webhook", `{"actions":{"listen":"127.0.0.1:0","url":"https://p.example"},"routes":[{"type":"webhook","url":"https://x/h","actions":true}]}`, "ntfy's"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cf, err := ParseFile(strings.NewReader(tc.in))
			if err == nil {
				_, err = cf.Check()
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err %v, want %q", err, tc.want)
			}
			if strings.Contains(err.Error(), secret) {
				t.Fatalf("the error quotes the credential: %v", err)
			}
		})
	}
}

func TestRouteStringHidesCredentials(t *testing.T) {
	cf := &File{Routes: []RouteFile{
		{Name: "slack", Type: "webhook", URL: "https://hooks.slack.com/services/T0/B0/SECRETPATH", Headers: map[string]string{"X-Key": "SECRETHDR"}},
		{Name: "phone", Type: "ntfy", URL: "https://ntfy.sh/SECRETTOPIC", Token: "SECRETTOKEN"},
	}}
	s, err := cf.Check()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range s.Routes {
		if strings.Contains(r.String(), "SECRET") {
			t.Fatalf("%s", r)
		}
	}
	if got := s.Routes[0].String(); got != "slack (webhook to https://hooks.slack.com, capture metadata)" {
		t.Fatal(got)
	}
}

func testRequest(t *testing.T, prompt string) *request {
	t.Helper()
	at := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	raw := requested("01REQ", "cc-1", "permission", prompt, at)
	r := &request{Request: Request{ID: "01REQ", Source: "aep://host-a/agent/claude-code/session/cc-1", Agent: "claude-code",
		Session: "cc-1", Subject: "Bash", Kind: "permission", At: at}}
	if err := json.Unmarshal([]byte(raw), &r.ev); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestMessageCeilings(t *testing.T) {
	r := testRequest(t, "Permission requested: Bash — cat ~/.ssh/id_rsa")
	now := r.At.Add(65 * time.Minute)
	meta, err := newMessage(r, redact.Metadata, now, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := "claude-code requests permission: Bash\nsession cc-1 on host-a, waiting 1h05m"
	if meta.Body != want || meta.Title != "claude-code needs your permission: Bash" || meta.Capture != "metadata" {
		t.Fatalf("metadata: %q / %q (%s)", meta.Title, meta.Body, meta.Capture)
	}
	red, _ := newMessage(r, redact.Redacted, now, 1)
	if !strings.Contains(red.Body, "cat ~/.ssh/id_rsa") || red.Title != "Reminder: claude-code needs your permission: Bash" {
		t.Fatalf("redacted: %q / %q", red.Title, red.Body)
	}
}

func TestWebhookBodies(t *testing.T) {
	r := testRequest(t, "<!channel> @everyone run `rm`")
	m, _ := newMessage(r, redact.Redacted, r.At.Add(5*time.Second), 0)
	for name, check := range map[string]func(map[string]any) bool{
		"json": func(v map[string]any) bool {
			return v["request"] == "01REQ" && v["tool"] == "Bash" && v["waited_s"] == 5.0 && v["kind"] == "permission"
		},
		"slack": func(v map[string]any) bool {
			s := v["text"].(string)
			return strings.HasPrefix(s, "*claude-code needs") && strings.Contains(s, "&lt;!channel&gt;") && !strings.Contains(s, "<!channel>")
		},
		"discord": func(v map[string]any) bool {
			am := v["allowed_mentions"].(map[string]any)
			return strings.Contains(v["content"].(string), "@everyone") && len(am["parse"].([]any)) == 0
		},
		"teams": func(v map[string]any) bool {
			a := v["attachments"].([]any)[0].(map[string]any)
			return v["type"] == "message" && a["contentType"] == "application/vnd.microsoft.card.adaptive"
		},
	} {
		b, err := webhookTemplates[name](m)
		if err != nil {
			t.Fatal(err)
		}
		var v map[string]any
		if err := json.Unmarshal(b, &v); err != nil || !check(v) {
			t.Fatalf("%s: %s (%v)", name, b, err)
		}
	}
	custom, err := customBody(`{"msg": {{json .Title}}, "who": {{json .Agent}}, "n": {{len .Options}}}`)
	if err != nil {
		t.Fatal(err)
	}
	b, err := custom(m)
	if err != nil || string(b) != `{"msg": "claude-code needs your permission: Bash", "who": "claude-code", "n": 2}` {
		t.Fatalf("custom: %s %v", b, err)
	}
}

func TestNtfyBody(t *testing.T) {
	cf := &File{Routes: []RouteFile{{Name: "phone", Type: "ntfy", URL: "https://push.example/ntfy/mytopic", Click: "https://relay.example/", Priority: 5}}}
	s, err := cf.Check()
	if err != nil {
		t.Fatal(err)
	}
	n := s.Routes[0].sender.(*ntfy)
	if n.target.url != "https://push.example/ntfy/" || n.topic != "mytopic" {
		t.Fatalf("root %s topic %s", n.target.url, n.topic)
	}
	m := &Message{Title: "t", Body: "b", Actions: []Action{{"Allow", "https://a/1"}, {"Deny", "https://a/2"}, {"Always", "https://a/3"}, {"More", "https://a/4"}}}
	b, _ := n.body(m)
	var v struct {
		Topic    string       `json:"topic"`
		Priority int          `json:"priority"`
		Click    string       `json:"click"`
		Actions  []ntfyAction `json:"actions"`
	}
	json.Unmarshal(b, &v)
	if v.Topic != "mytopic" || v.Priority != 5 || v.Click != "https://relay.example/" || len(v.Actions) != 3 ||
		v.Actions[0] != (ntfyAction{Action: "http", Label: "Allow", URL: "https://a/1", Method: "POST", Clear: true}) {
		t.Fatalf("%s", b)
	}
}
