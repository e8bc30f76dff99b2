package realagents

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/coder/websocket"

	"github.com/aep-hook/aep-hook/consumer/answer"
)

// AnswerOver is the scenarios' AEP-0004 sender for the followers that
// answer over control: it waits for session's answerable request whose
// subject is subject ("" any), answers it over the relay at url as alice
// (token), and wants the command accepted and the outcome recorded via
// control by alice.
func AnswerOver(url, token, session, subject string, a answer.Answer) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cn, err := (&answer.Client{URL: url, Token: token, Agent: "alice", Host: "driver", Window: 10 * time.Second}).Dial(ctx)
	if err != nil {
		return err
	}
	defer cn.Close()
	for ctx.Err() == nil {
		rs, err := cn.Pending(ctx)
		if err != nil {
			return err
		}
		for _, r := range rs {
			if r.Session != session || !r.Answerable || subject != "" && r.Subject != subject {
				continue
			}
			out, err := cn.Respond(ctx, r, a)
			if err != nil {
				return err
			}
			if out.Ack != answer.Accepted || out.Answered == nil || out.Resolved == nil {
				return fmt.Errorf("answer over control: %+v", out)
			}
			var ans struct{ Data struct{ Via, By string } }
			if err := json.Unmarshal(out.Answered, &ans); err != nil {
				return fmt.Errorf("the outcome: %w", err)
			}
			if ans.Data.Via != "control" || ans.Data.By != "alice" {
				return fmt.Errorf("the outcome says via %q by %q", ans.Data.Via, ans.Data.By)
			}
			return nil
		}
		time.Sleep(100 * time.Millisecond) // polling the relay's pending list: the real agent sets the pace
	}
	return fmt.Errorf("no answerable request in session %s", session)
}

// CancelOver sends control.cancel{scope run} with id for session over the
// relay at url as alice (token), subscribed so that the ack (an event)
// reaches it, and wants it accepted.
func CancelOver(url, token, session, id string) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	ws, _, err := websocket.Dial(ctx, url, &websocket.DialOptions{HTTPHeader: http.Header{"Authorization": {"Bearer " + token}}})
	if err != nil {
		return err
	}
	defer ws.CloseNow()
	for _, f := range []string{
		`{"type":"hello","versions":["0.1"],"role":"consumer","identity":{"agent":"alice"},"capabilities":{}}`,
		`{"type":"subscribe","id":"s","filter":{}}`,
		`{"aep":"0.1","id":"` + id + `","type":"control.cancel","time":"` + time.Now().UTC().Format("2006-01-02T15:04:05.000Z") +
			`","source":"aep://driver/agent/alice","agent":"alice","session":"` + session + `","data":{"scope":"run"}}`,
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
