package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"text/template"
	"time"
)

// webhook posts a JSON body to a URL: the generic shape, or the shape a
// chat service's incoming webhook takes (Slack, Discord, Microsoft Teams
// Workflows), or the user's own template.
type webhook struct {
	target httpTarget
	render func(m *Message) ([]byte, error)
}

// The built-in webhook bodies.
var webhookTemplates = map[string]func(m *Message) ([]byte, error){
	"json":    genericBody,
	"slack":   slackBody,
	"discord": discordBody,
	"teams":   teamsBody,
}

func newWebhook(rf RouteFile) (*webhook, string, error) {
	t, where, err := newTarget(rf, "webhook")
	if err != nil {
		return nil, "", err
	}
	w := &webhook{target: t}
	switch name := rf.Template; {
	case name == "custom":
		if rf.Body == "" {
			return nil, "", errors.New("body: a custom template needs its Go text/template body")
		}
		if w.render, err = customBody(rf.Body); err != nil {
			return nil, "", err
		}
	case rf.Body != "":
		return nil, "", errors.New("body: only with template custom")
	case name == "":
		w.render = genericBody
	default:
		r, ok := webhookTemplates[name]
		if !ok {
			return nil, "", errors.New("template: json, slack, discord, teams or custom")
		}
		w.render = r
	}
	return w, where, nil
}

func (w *webhook) send(ctx context.Context, c *http.Client, m *Message) error {
	b, err := w.render(m)
	if err != nil {
		return &SendError{Msg: "template: " + err.Error(), Permanent: true}
	}
	return post(ctx, c, w.target, "application/json", b)
}

// genericBody is the plain JSON shape: every fact of the message by name.
func genericBody(m *Message) ([]byte, error) {
	v := map[string]any{
		"title": m.Title, "text": m.Body,
		"request": m.RequestID, "source": m.Source, "agent": m.Agent, "session": m.Session,
		"host": m.Host, "kind": m.Kind, "capture": m.Capture,
		"requested": m.Requested.UTC().Format(time.RFC3339), "waited_s": int64(m.Waited / time.Second),
		"reminder": m.Reminder,
	}
	if m.Tool != "" {
		v["tool"] = m.Tool
	}
	if m.Prompt != "" {
		v["prompt"] = m.Prompt
	}
	if len(m.Options) > 0 {
		v["options"] = m.Options
	}
	return json.Marshal(v)
}

// slackEscape escapes what Slack's mrkdwn reads as markup (links and
// mentions such as <!channel>).
var slackEscape = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// slackBody is a Slack incoming webhook message.
func slackBody(m *Message) ([]byte, error) {
	return json.Marshal(map[string]any{"text": "*" + slackEscape.Replace(m.Title) + "*\n" + slackEscape.Replace(m.Body)})
}

// discordMax is the most content a Discord message carries.
const discordMax = 2000

// discordBody is a Discord webhook message; mentions in the text (an
// agent may write @everyone) are never parsed.
func discordBody(m *Message) ([]byte, error) {
	return json.Marshal(map[string]any{
		"username":         "aep-hook",
		"content":          clipText("**"+m.Title+"**\n"+m.Body, discordMax-4),
		"allowed_mentions": map[string]any{"parse": []string{}},
	})
}

// teamsBody is an Adaptive Card as a Microsoft Teams Workflows webhook
// ("Send webhook alerts to a channel") takes it.
func teamsBody(m *Message) ([]byte, error) {
	card := map[string]any{
		"$schema": "http://adaptivecards.io/schemas/adaptive-card.json",
		"type":    "AdaptiveCard",
		"version": "1.4",
		"body": []any{
			map[string]any{"type": "TextBlock", "size": "Medium", "weight": "Bolder", "text": m.Title, "wrap": true},
			map[string]any{"type": "TextBlock", "text": m.Body, "wrap": true},
		},
	}
	return json.Marshal(map[string]any{"type": "message", "attachments": []any{
		map[string]any{"contentType": "application/vnd.microsoft.card.adaptive", "content": card},
	}})
}

// customBody compiles a user's template: text/template over the Message,
// with json to encode a value (a string in quotes), and checks it makes
// JSON from a sample message.
func customBody(src string) (func(m *Message) ([]byte, error), error) {
	t, err := template.New("body").Option("missingkey=error").Funcs(template.FuncMap{
		"json": func(v any) (string, error) {
			b, err := json.Marshal(v)
			return string(b), err
		},
	}).Parse(src)
	if err != nil {
		return nil, fmt.Errorf("body: not a template: %s", templateProblem(err))
	}
	render := func(m *Message) ([]byte, error) {
		var b bytes.Buffer
		if err := t.Execute(&b, m); err != nil {
			return nil, errors.New(templateProblem(err))
		}
		if !json.Valid(b.Bytes()) {
			return nil, errors.New("the template did not make JSON (quote text with {{json .Title}})")
		}
		return b.Bytes(), nil
	}
	sample := &Message{Title: `sample "title"`, Body: "line one\nline two", Agent: "claude-code", Kind: "permission",
		Options: []Option{{ID: "allow", Label: "Allow"}}, Requested: time.Unix(0, 0)}
	if _, err := render(sample); err != nil {
		return nil, fmt.Errorf("body: %w", err)
	}
	return render, nil
}

// templateProblem is a template error without the template's text.
func templateProblem(err error) string {
	s := err.Error()
	s = strings.TrimPrefix(s, "template: ")
	return clipText(oneLine(s), 200)
}
