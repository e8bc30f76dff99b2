package opencode

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/shim/control"
)

// The bridge's writes, made only when control is enabled (primary mode):
// the server's own permission and question replies, its question reject
// and its session abort. Everything else the bridge does is read-only.

// replyTimeout bounds one reply call: well inside the ack window the link
// declares, so the command is acknowledged either way.
const replyTimeout = 4 * time.Second

// maxReplyBody bounds what a reply call's answer is read to.
const maxReplyBody = 64 << 10

// Deliver is the reply call for the ask moment m raised: the permission
// or question reply route (a question's refusal its reject route), in the
// ask's directory when the global stream named one; nil when m is no ask
// of the server's.
func (b *Bridge) Deliver(m mapping.Moment, _ *mapping.Hold) func(reply []byte) error {
	var id, path string
	switch m.Facts.Name {
	case "permission.asked", "permission":
		id = gjson.GetBytes(m.Raw, "properties.id").String()
		if m.Facts.Kind == mapping.KindRecord {
			id = gjson.GetBytes(m.Raw, "id").String()
		}
		path = "/permission/" + url.PathEscape(id) + "/reply"
	case "question.asked", "question":
		id = gjson.GetBytes(m.Raw, "properties.id").String()
		if m.Facts.Kind == mapping.KindRecord {
			id = gjson.GetBytes(m.Raw, "id").String()
		}
		path = "/question/" + url.PathEscape(id) + "/reply"
	default:
		return nil
	}
	if id == "" {
		return nil
	}
	dir := m.Facts.Thread
	return func(reply []byte) error {
		if bytes.Equal(reply, mapping.BusQuestionRejected) {
			// The refusal has a route of its own, which takes no body.
			return b.post("/question/"+url.PathEscape(id)+"/reject", dir, nil)
		}
		return b.post(path, dir, reply)
	}
}

// Abort is POST /session/{id}/abort, in the directory the stream last
// named for the session.
func (b *Bridge) Abort(session string) error {
	return b.post("/session/"+url.PathEscape(session)+"/abort", b.dirOf(session), []byte("{}"))
}

// Cancel is the control.cancel handler: the session's open run aborted
// through the server's own abort, the command noted so the run's end the
// server then reports is its outcome.
func (b *Bridge) Cancel(c control.Command, st *mapping.State) ([]mapping.Draft, string, string) {
	if reason, detail := mapping.CancelCheck(mapping.OpenRun(st), c.Data.Scope, c.Run); reason != "" {
		return nil, reason, detail
	}
	// An abort the server has not answered within the bound was still
	// sent: Kilo answers it only once the turn's model stream has stopped.
	// It is accepted (will try); the outcome, as for any abort, is the
	// server's own end of the turn.
	if err := b.Abort(c.Session); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return nil, "refused", err.Error()
	}
	mapping.NoteCancel(st, c.ID)
	return nil, "", ""
}

// post sends body to path (in dir, when set) and wants a 2xx whose body
// is not false (the servers answer a reply with true). A nil body is sent
// as none, with no content type, as the servers' own client calls a
// route that takes no payload.
func (b *Bridge) post(path, dir string, body []byte) error {
	ctx, cancel := context.WithTimeout(context.Background(), replyTimeout)
	defer cancel()
	u := b.Base.JoinPath(path)
	if dir != "" {
		u.RawQuery = url.Values{"directory": {dir}}.Encode()
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u.String(), rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if b.Password != "" {
		req.SetBasicAuth(b.User, b.Password)
	}
	resp, err := b.client().Do(req)
	if err != nil {
		return fmt.Errorf("POST %s: %w", routeName(path), redactURLError(err))
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(io.LimitReader(resp.Body, maxReplyBody))
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("POST %s: the server answered %s", routeName(path), resp.Status)
	}
	if !ReplyTaken(got) {
		return errors.New("POST " + routeName(path) + ": the server did not take the reply")
	}
	return nil
}

// ReplyTaken reads a reply call's answer: the servers answer true; false
// (a request no longer pending, in some versions) is not taken. Any other
// body from a 2xx counts as taken.
func ReplyTaken(body []byte) bool {
	return strings.TrimSpace(string(body)) != "false"
}

// routeName is the route of path without its ids, for errors (an id is
// not content, but a route name is all a failure needs).
func routeName(path string) string {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	if len(segs) == 3 {
		segs[1] = "{id}"
	}
	return "/" + strings.Join(segs, "/")
}

// dirOf is the directory the global stream last named for session ("" for
// the server's own).
func (b *Bridge) dirOf(session string) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sessDir[session]
}
