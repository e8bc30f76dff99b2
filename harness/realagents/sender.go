package realagents

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/coder/websocket"

	"github.com/aep-hook/aep-hook/consumer/answer"
)

// Sender is the scenarios' AEP-0004 sender for the followers that answer
// over control: a consumer of the relay at URL with Token, whose identity
// is As.
type Sender struct {
	URL, Token, As string
}

func (s Sender) client(window time.Duration) *answer.Client {
	return &answer.Client{URL: s.URL, Token: s.Token, Agent: s.As, Host: "driver", Window: window}
}

// Answer waits for session's answerable request whose subject is subject
// ("" any), answers it with a, and wants the command accepted and the
// outcome recorded via control by the sender.
func (s Sender) Answer(session, subject string, a answer.Answer) error {
	out, err := respondFirst(s.client(10*time.Second), 2*time.Minute, 100*time.Millisecond, a, func(r answer.Request) bool {
		return r.Session == session && r.Answerable && (subject == "" || r.Subject == subject)
	})
	if err != nil {
		return fmt.Errorf("session %s: %w", session, err)
	}
	if out.Ack != answer.Accepted || out.Answered == nil || out.Resolved == nil {
		return fmt.Errorf("answer over control: %+v", out)
	}
	var ans struct{ Data struct{ Via, By string } }
	if err := json.Unmarshal(out.Answered, &ans); err != nil {
		return fmt.Errorf("the outcome: %w", err)
	}
	if ans.Data.Via != "control" || ans.Data.By != s.As {
		return fmt.Errorf("the outcome says via %q by %q, want control by %q", ans.Data.Via, ans.Data.By, s.As)
	}
	return nil
}

// respondFirst dials the relay as cl, polls its pending list every poll
// (the real agent, or the replayed firing, sets the pace of its request)
// until a request matches, answers that one with a and returns the
// outcome; within limit in all.
func respondFirst(cl *answer.Client, limit, poll time.Duration, a answer.Answer, match func(answer.Request) bool) (answer.Outcome, error) {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	cn, err := cl.Dial(ctx)
	if err != nil {
		return answer.Outcome{}, err
	}
	defer cn.Close()
	for ctx.Err() == nil {
		rs, err := cn.Pending(ctx)
		if err != nil {
			return answer.Outcome{}, err
		}
		for _, r := range rs {
			if match(r) {
				return cn.Respond(ctx, r, a)
			}
		}
		time.Sleep(poll)
	}
	return answer.Outcome{}, errors.New("no matching request became answerable")
}

// Pending reads the relay until session has a request answerable over
// control (answerable true: the loop is live for it) or, with answerable
// false, none waiting at all (it settled).
func (s Sender) Pending(session string, answerable bool) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cn, err := s.client(10 * time.Second).Dial(ctx)
	if err != nil {
		return err
	}
	defer cn.Close()
	for ctx.Err() == nil {
		rs, err := cn.Pending(ctx)
		if err != nil {
			return err
		}
		waiting, live := 0, 0
		for _, r := range rs {
			if r.Session == session {
				waiting++
				if r.Answerable {
					live++
				}
			}
		}
		if answerable && live > 0 || !answerable && waiting == 0 {
			return nil
		}
		time.Sleep(100 * time.Millisecond) // polling the relay's pending list: the real agent sets the pace
	}
	if answerable {
		return fmt.Errorf("no request of session %s became answerable over control", session)
	}
	return fmt.Errorf("session %s still has a request waiting on the relay", session)
}

// Cancel sends control.cancel{scope run} with id for session, subscribed
// so that the ack (an event) reaches the sender, and wants it accepted.
func (s Sender) Cancel(session, id string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, s.URL, &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + s.Token}}})
	if err != nil {
		return err
	}
	defer ws.CloseNow()
	for _, f := range []string{
		`{"type":"hello","versions":["0.1"],"role":"consumer","identity":{"agent":"` + s.As + `"},"capabilities":{}}`,
		`{"type":"subscribe","id":"s","filter":{}}`,
		`{"aep":"0.1","id":"` + id + `","type":"control.cancel","time":"` + time.Now().UTC().Format("2006-01-02T15:04:05.000Z") +
			`","source":"aep://driver/agent/` + s.As + `","agent":"` + s.As + `","session":"` + session + `","data":{"scope":"run"}}`,
	} {
		if err := ws.Write(ctx, websocket.MessageText, []byte(f)); err != nil {
			return err
		}
	}
	for {
		_, b, err := ws.Read(ctx)
		if err != nil {
			return fmt.Errorf("no ack of the cancel: %w", err)
		}
		var m struct{ Type, Cause string }
		if json.Unmarshal(b, &m) != nil || m.Cause != id {
			continue
		}
		switch m.Type {
		case "control.accepted":
			return nil
		case "error", "control.rejected":
			return fmt.Errorf("the cancel was refused: %s", b)
		}
	}
}
