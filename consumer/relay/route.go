package relay

import (
	"encoding/json"
	"slices"

	"github.com/aep-hook/aep-hook/consumer/relay/event"
)

// The relay-behalf refusal codes of AEP-0004 §4.2.
const (
	codeUnauthorized = "unauthorized"
	codeUnsupported  = "unsupported"
	codeAmbiguous    = "ambiguous"
	codeNoRoute      = "no-route"
)

// refusal is a relay-behalf refusal of a command: the connection-scoped
// error frame the sender settles its pending command with (AEP-0004 §4.2).
// It never enters the addressed session's history.
type refusal struct {
	code, detail string
}

func (r *refusal) frame(cmd *event.Event) []byte {
	b, _ := json.Marshal(struct {
		Type   string `json:"type"`
		Cause  string `json:"cause"`
		Code   string `json:"code"`
		Detail string `json:"detail,omitempty"`
	}{"error", cmd.ID, r.code, r.detail})
	return b
}

// route picks the one live emitter connection that claims a command's
// session (AEP-0004 §4.5), or refuses the command. Only claims of the
// command's own tenant count: another tenant's sessions are not there for
// it. It does not deliver: the caller stores the command first and then
// hands it to deliver, so that no ack the target sends can reach the
// session's history, or a watcher, before the command it answers.
func (h *hub) route(cmd *event.Event, sender *conn) (*conn, *refusal) {
	if !sender.grant.Authenticated() {
		return nil, &refusal{codeUnauthorized, "control flows only on an authenticated connection (AEP-0004 §4.1): start the relay with --tokens and connect with a token"}
	}
	if !sender.grant.Controls(cmd.Type) {
		return nil, &refusal{codeUnauthorized, "this token's control scopes do not cover " + cmd.Type}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	var targets []*claim
	for _, cl := range h.claims[cmd.Session] {
		if cl.tenant == cmd.Tenant && cl.c != sender {
			targets = append(targets, cl)
		}
	}
	switch {
	case len(targets) == 0:
		return nil, &refusal{codeNoRoute, "no connected emitter claims session " + quoteID(cmd.Session)}
	case len(targets) > 1:
		return nil, &refusal{codeAmbiguous, itoa(len(targets)) + " connected emitters claim session " + quoteID(cmd.Session) + "; the relay will not pick one"}
	}
	t := targets[0].c
	if !slices.Contains(t.accepts, cmd.Type) {
		return nil, &refusal{codeUnsupported, "the target's declared control.accepts does not list " + cmd.Type}
	}
	return t, nil
}

// handOver hands a routed command to its target, its bytes unchanged
// (§4.4), or refuses it when the target has stopped reading.
func handOver(cmd *event.Event, t *conn) *refusal {
	if !t.push(item{frame: cmd.Raw}) {
		return &refusal{codeNoRoute, "the target connection is not reading; it was cut"}
	}
	return nil
}

// quoteID quotes an identifier for a detail string, bounded.
func quoteID(s string) string {
	if len(s) > 120 {
		s = s[:120] + "..."
	}
	b, _ := json.Marshal(s)
	return string(b)
}
