package notify

import (
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/aep-hook/aep-hook/redact"
)

// Message is what one notification says about one request, already
// limited to its route's capture ceiling: at metadata only the agent, the
// tool, the session, the host, the kind, the synthesized prompt and how
// long the request has waited; at redacted also the request's own text as
// the redaction pipeline left it.
type Message struct {
	// Title and Body are the notification's two lines of text.
	Title, Body string
	// The request's facts, for templates.
	RequestID string
	Source    string
	Agent     string
	Session   string
	Host      string
	Tool      string
	Kind      string
	// Prompt is the request's prompt at the route's ceiling (synthesized
	// from structure at metadata).
	Prompt string
	// Options are the request's choices (ids and labels at the ceiling).
	Options []Option
	// Requested is when the request was raised; Waited how long before
	// this delivery.
	Requested time.Time
	Waited    time.Duration
	// Reminder counts the reminders before this one (0: the first
	// delivery).
	Reminder int
	// Capture is the ceiling the message was made at.
	Capture string
	// Actions are the answer buttons (ntfy), when the route has them.
	Actions []Action
}

// Option is one of a request's choices.
type Option struct {
	ID    string `json:"id"`
	Label string `json:"label"`
}

// Action is one answer button: its label and the URL that answers.
type Action struct {
	Label string
	URL   string
}

// maxPrompt bounds the prompt shown (notifications are short; the record
// and the console hold the rest).
const maxPrompt = 600

// newMessage builds the message for r at ceiling, reminder being the
// reminders sent before.
func newMessage(r *request, ceiling redact.Level, now time.Time, reminder int) (*Message, error) {
	ev, err := redact.Downlevel(r.ev, ceiling)
	if err != nil {
		return nil, err
	}
	m := &Message{RequestID: r.ID, Source: r.Source, Agent: r.Agent, Session: r.Session, Tool: r.Subject,
		Kind: r.Kind, Requested: r.At, Waited: now.Sub(r.At).Truncate(time.Second), Reminder: reminder}
	if m.Waited < 0 {
		m.Waited = 0
	}
	m.Host = sourceHost(r.Source)
	m.Capture, _ = ev["capture"].(string)
	if data, ok := ev["data"].(map[string]any); ok {
		if p, ok := data["prompt"].(string); ok {
			m.Prompt = clipText(oneLine(p), maxPrompt)
		}
		if opts, ok := data["options"].([]any); ok {
			for _, o := range opts {
				om, _ := o.(map[string]any)
				id, _ := om["id"].(string)
				label, _ := om["label"].(string)
				if id != "" {
					m.Options = append(m.Options, Option{ID: id, Label: clipText(oneLine(label), 60)})
				}
			}
		}
	}
	m.Title = title(m)
	m.Body = body(m)
	return m, nil
}

// title is the notification's first line: who needs what.
func title(m *Message) string {
	what := map[string]string{
		"permission": "needs your permission",
		"form":       "has a question",
		"input":      "needs your input",
		"auth":       "needs you to sign in",
		"review":     "needs a review",
	}[m.Kind]
	if what == "" {
		what = "needs you"
	}
	t := m.Agent + " " + what
	if m.Tool != "" && m.Kind == "permission" {
		t += ": " + clipText(oneLine(m.Tool), 60)
	}
	if m.Reminder > 0 {
		t = "Reminder: " + t
	}
	return t
}

// body is the second part: the prompt at the ceiling, then where and how
// long.
func body(m *Message) string {
	var b strings.Builder
	if m.Prompt != "" {
		b.WriteString(m.Prompt)
		b.WriteByte('\n')
	}
	b.WriteString("session " + clipText(oneLine(m.Session), 40))
	if m.Host != "" {
		b.WriteString(" on " + clipText(oneLine(m.Host), 40))
	}
	b.WriteString(", waiting " + Waited(m.Waited))
	return b.String()
}

// Waited spells a wait for people: 12s, 4m, 1h05m.
func Waited(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d/time.Second))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d/time.Minute))
	}
	return fmt.Sprintf("%dh%02dm", int(d/time.Hour), int(d%time.Hour/time.Minute))
}

// sourceHost is the {host} of a source aep://{host}/agent/..., "" for
// another form.
func sourceHost(source string) string {
	rest, ok := strings.CutPrefix(source, "aep://")
	if !ok {
		return ""
	}
	h, _, _ := strings.Cut(rest, "/")
	if u, err := url.PathUnescape(h); err == nil {
		return u
	}
	return h
}

// oneLine folds control characters (line breaks included) to spaces.
func oneLine(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r >= 0x80 && r < 0xa0 || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		return r
	}, s)
}

// clipText cuts s to at most n bytes at a rune boundary, marking the cut.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	i := n
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + "…"
}
