package kimiweb

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/tidwall/gjson"

	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/shim/control"
)

// The bridge's writes, made only when control is enabled (primary mode):
// an approval's decision, a question card's answers or dismissal, and a
// prompt's abort, over the server's REST API as its web UI makes them. The stream stays read-only.

// replyTimeout bounds one write: well inside the ack window the control
// link declares.
const replyTimeout = 4 * time.Second

// Deliver is the decision call for the approval moment m raised, or the
// answer call for its question card (a dismissal the card's dismiss
// call); nil when m is neither, or names no session or id.
func (b *Bridge) Deliver(m mapping.Moment, _ *mapping.Hold) func(reply []byte) error {
	sid := gjson.GetBytes(m.Raw, "session_id").String()
	switch m.Facts.Name {
	case "event.approval.requested":
		id := gjson.GetBytes(m.Raw, "payload.approval_id").String()
		if sid == "" || id == "" {
			return nil
		}
		return func(reply []byte) error {
			return b.post("POST /sessions/{sid}/approvals/{id}", reply, 0, "sessions", sid, "approvals", id)
		}
	case "event.question.requested":
		id := gjson.GetBytes(m.Raw, "payload.question_id").String()
		if sid == "" || id == "" {
			return nil
		}
		return func(reply []byte) error {
			if bytes.Equal(reply, mapping.KimiWebQuestionDismissed) {
				// kimi-code 2.1.0 answers a dismissal it applied with code
				// 40909 and data.dismissed, which its web UI takes.
				return b.post("POST /sessions/{sid}/questions/{id}:dismiss", nil, dismissedCode, "sessions", sid, "questions", id+":dismiss")
			}
			return b.post("POST /sessions/{sid}/questions/{id}", reply, 0, "sessions", sid, "questions", id)
		}
	}
	return nil
}

// Cancel is the control.cancel handler: the open turn's prompt aborted
// through the server's own abort, the command noted so the turn's end the
// server then reports is its outcome.
func (b *Bridge) Cancel(c control.Command, st *mapping.State) ([]mapping.Draft, string, string) {
	run, prompt := mapping.KimiWebOpenTurn(st)
	if reason, detail := mapping.CancelCheck(run, c.Data.Scope, c.Run); reason != "" {
		return nil, reason, detail
	}
	if prompt == "" {
		return nil, "refused", "the open turn's prompt id was not seen on the stream; abort it in Kimi's own UI"
	}
	if err := b.post("POST /sessions/{sid}/prompts/{id}:abort", []byte("{}"), 0, "sessions", c.Session, "prompts", prompt+":abort"); err != nil {
		return nil, "refused", err.Error()
	}
	mapping.NoteCancel(st, c.ID)
	return nil, "", ""
}

// dismissedCode is the envelope code kimi-code answers a question's
// dismissal with, the dismissal applied (data.dismissed true).
const dismissedCode = 40909

// post sends body to the REST resource under /api/v1 (its path segments)
// and wants the server's {code: 0} envelope back, or code also (when not
// 0) with data saying dismissed; a nil body is sent as none, with no
// content type, as the web UI calls a route that takes no payload. Errors
// name the route (what), never the URL.
func (b *Bridge) post(what string, body []byte, also int64, segs ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), replyTimeout)
	defer cancel()
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, b.api(nil, segs...), rd)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	req.Header.Set("Authorization", "Bearer "+b.Token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	c := b.Client
	if c == nil {
		c = &http.Client{Timeout: replyTimeout}
	}
	resp, err := c.Do(req)
	if err != nil {
		if ue, ok := err.(*url.Error); ok {
			err = ue.Err
		}
		return fmt.Errorf("%s: %w", what, err)
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if also != 0 && resp.StatusCode/100 == 2 && gjson.GetBytes(got, "code").Int() == also && gjson.GetBytes(got, "data.dismissed").Bool() {
		return nil
	}
	if code, ok := Accepted(resp.StatusCode, got); !ok {
		return fmt.Errorf("%s: the server answered HTTP %d, code %d", what, resp.StatusCode, code)
	}
	return nil
}

// Accepted reads a write's answer: HTTP 2xx with the {code, msg, data}
// envelope's code 0. code is the envelope's (0 when it has none).
func Accepted(status int, body []byte) (code int64, ok bool) {
	env := gjson.ParseBytes(body)
	code = env.Get("code").Int()
	return code, status/100 == 2 && env.IsObject() && env.Get("code").Exists() && code == 0
}
