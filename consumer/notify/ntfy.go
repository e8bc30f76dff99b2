package notify

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
)

// ntfy publishes to an ntfy server (ntfy.sh or one's own) as JSON to the
// server's root, the topic in the body: the one publishing form that
// carries a title, a message and actions in UTF-8 without header
// encodings.
type ntfy struct {
	target   httpTarget
	topic    string
	priority int
	tags     []string
	click    string
}

// maxNtfyActions is how many buttons ntfy shows.
const maxNtfyActions = 3

func newNtfy(rf RouteFile) (*ntfy, string, error) {
	t, where, err := newTarget(rf, "ntfy topic")
	if err != nil {
		return nil, "", err
	}
	u, _ := url.Parse(rf.URL)
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, "", errors.New("url: the topic URL (https://ntfy.sh/TOPIC) without a query")
	}
	path := strings.TrimSuffix(u.Path, "/")
	i := strings.LastIndexByte(path, '/')
	topic := path[i+1:]
	if i < 0 || topic == "" {
		return nil, "", errors.New("url: the topic URL names no topic (https://ntfy.sh/TOPIC)")
	}
	u.Path, u.RawPath = path[:i+1], ""
	t.url = u.String()
	n := &ntfy{target: t, topic: topic, priority: rf.Priority, tags: rf.Tags, click: rf.Click}
	if n.priority == 0 {
		n.priority = 4
	}
	if n.priority < 1 || n.priority > 5 {
		return nil, "", errors.New("priority: 1 (min) to 5 (max)")
	}
	if n.click != "" {
		if c, err := url.Parse(n.click); err != nil || (c.Scheme != "http" && c.Scheme != "https") {
			return nil, "", errors.New("click: an http:// or https:// URL")
		}
	}
	if len(n.tags) == 0 {
		n.tags = []string{"bell"}
	}
	// The topic is the route's secret on a public server: where shows the
	// server only.
	return n, where, nil
}

// ntfyAction is one button in ntfy's JSON form.
type ntfyAction struct {
	Action string `json:"action"`
	Label  string `json:"label"`
	URL    string `json:"url"`
	Method string `json:"method,omitempty"`
	Clear  bool   `json:"clear,omitempty"`
}

func (n *ntfy) body(m *Message) ([]byte, error) {
	msg := map[string]any{
		"topic":    n.topic,
		"title":    m.Title,
		"message":  m.Body,
		"priority": n.priority,
		"tags":     n.tags,
	}
	if n.click != "" {
		msg["click"] = n.click
	}
	var acts []ntfyAction
	for _, a := range m.Actions {
		if len(acts) == maxNtfyActions {
			break
		}
		acts = append(acts, ntfyAction{Action: "http", Label: a.Label, URL: a.URL, Method: http.MethodPost, Clear: true})
	}
	if len(acts) > 0 {
		msg["actions"] = acts
	}
	return json.Marshal(msg)
}

func (n *ntfy) send(ctx context.Context, c *http.Client, m *Message) error {
	b, err := n.body(m)
	if err != nil {
		return &SendError{Msg: "encode: " + err.Error(), Permanent: true}
	}
	return post(ctx, c, n.target, "application/json", b)
}
