package notify

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/aep-hook/aep-hook/shim"
	"github.com/aep-hook/aep-hook/shim/deliver"
)

// routedEvent is the attention.routed record of one delivery (AEP-0002
// §5.4, §7): session-scoped to the request's own session but emitted
// under the router's identity (agent and source name the router), so it
// carries no seq (AEP-0001 §5.2, the foreign-emitter exception); subject
// and cause are the request's id, to the route's name, via its mechanism.
func routedEvent(ids *shim.IDs, host, agent string, r *request, rt *Route, at time.Time) ([]byte, error) {
	ev := shim.Event{
		AEP: shim.Version, ID: ids.New(at), Type: "attention.routed", Subject: r.ID,
		Time:   at.UTC().Format("2006-01-02T15:04:05.000Z"),
		Source: "aep://" + url.PathEscape(host) + "/agent/" + url.PathEscape(agent) + "/session/" + url.PathEscape(r.Session),
		Agent:  agent, Session: r.Session, Run: r.Run, Cause: r.ID, Capture: "metadata",
		Data: map[string]any{"to": rt.Name, "via": rt.Via},
	}
	ev.Tenant = r.Tenant
	b, err := ev.MarshalLine()
	if err != nil {
		return nil, err
	}
	return []byte(strings.TrimSuffix(string(b), "\n")), nil
}

// recorder posts the routed records to the relay's POST /events in order,
// retrying with backoff while the relay cannot take them; what it holds
// is persisted with the state, so a restart posts it.
type recorder struct {
	mu     sync.Mutex
	queue  []json.RawMessage
	wake   chan struct{}
	client *deliver.AEPClient
	fail   func(stage, msg string)
	saved  func() // the queue changed: save the state
}

func (rc *recorder) add(line []byte) {
	rc.mu.Lock()
	rc.queue = append(rc.queue, line)
	rc.mu.Unlock()
	select {
	case rc.wake <- struct{}{}:
	default:
	}
}

// pending returns a copy of what is not yet posted.
func (rc *recorder) pending() []json.RawMessage {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return append([]json.RawMessage(nil), rc.queue...)
}

// maxRecordBatch bounds one POST.
const maxRecordBatch = 100

// run posts until ctx ends.
func (rc *recorder) run(ctx context.Context, backoff func(int) time.Duration) {
	attempt := 0
	for {
		rc.mu.Lock()
		batch := rc.queue[:min(len(rc.queue), maxRecordBatch)]
		batch = append([]json.RawMessage(nil), batch...)
		rc.mu.Unlock()
		if len(batch) == 0 {
			select {
			case <-ctx.Done():
				return
			case <-rc.wake:
				continue
			}
		}
		lines := make([][]byte, len(batch))
		for i, l := range batch {
			lines[i] = l
		}
		pctx, cancel := context.WithTimeout(ctx, DefaultTimeout)
		err := rc.client.Send(pctx, lines)
		cancel()
		drop := len(batch)
		var se *deliver.SendError
		switch {
		case err == nil:
			attempt = 0
		case ctx.Err() != nil:
			return
		case errors.As(err, &se) && se.Class == deliver.Reject && len(batch) > 1 && se.Index >= 0:
			// One record refused: post the ones before it, drop it.
			rc.fail("record", "the relay refused an attention.routed record: "+se.Detail)
			drop = se.Index + 1
			if se.Index > 0 {
				if rc.client.Send(ctx, lines[:se.Index]) != nil {
					drop = 0
				}
			}
		case errors.As(err, &se) && (se.Class == deliver.Reject || se.Class == deliver.Fatal):
			rc.fail("record", "the relay refused attention.routed records (dropped): "+err.Error())
		default:
			attempt++
			rc.fail("record", "posting attention.routed to the relay: "+err.Error())
			wait := backoff(attempt)
			if se != nil && se.RetryAfter > wait {
				wait = se.RetryAfter
			}
			select {
			case <-ctx.Done():
				return
			case <-time.After(wait):
			}
			continue
		}
		rc.mu.Lock()
		rc.queue = rc.queue[drop:]
		rc.mu.Unlock()
		rc.saved()
	}
}
