package mapping

import (
	"encoding/json"
	"strings"

	"github.com/tidwall/gjson"
)

// The opt-in tool_call gate of the pi extension. pi (1.6.0) awaits every
// extension's tool_call handler before it runs a call, and a handler that
// returns {block: true, reason} stops the call: pi then ends it with
// tool_execution_end, isError set and the reason as the result's text,
// which is what the model reads. pi has no approval dialog of its own, so
// the gate's two answers are aep-hook's: allow (the call runs) and deny.
//
// The extension runs the gate only where the user opted in (AEP_CONTROL
// and the tool named in AEP_CONTROL_TOOLS); for such a call it hands the
// tool_call to a one-shot `aep-hook forward pi --hold` and waits for its
// reply. The call's start and end still come down the forwarder's pipe:
// tool_execution_start (written before pi asks the handlers) and
// tool_execution_end.

// piDenied+call notes the command that refused the call over the loop,
// until pi reports the call's end; piAborted+call, that the user's abort
// ended the call's wait, so pi ends it unrun.
const (
	piDenied  = "pi.denied:"
	piAborted = "pi.aborted:"
)

// piGateKey is the reference key of the gate's request for one call.
func piGateKey(raw []byte) string {
	if call := Str(raw, "toolCallId"); call != "" {
		return "attn:gate:" + clip(call, maxKeyName)
	}
	return "attn:gate:" + toolAttentionKey(Str(raw, "toolName"), Raw(raw, "input"))
}

// piGateOptions are the gate's two answers, labelled as aep-hook's.
func piGateOptions() []any {
	return []any{
		map[string]any{"id": "allow", "label": "Allow (aep-hook's gate: pi asks nothing itself)"},
		map[string]any{"id": "deny", "label": "Deny (aep-hook's gate)"},
	}
}

// piHold holds a tool_call whose tool the gate lists.
func piHold(m Moment, g Gate) *Hold {
	if m.Facts.Name != "tool_call" {
		return nil
	}
	raw := m.Raw
	tool, call := Str(raw, "toolName"), Str(raw, "toolCallId")
	if tool == "" || !g.Gates(tool) {
		return nil
	}
	return &Hold{
		Key: piGateKey(raw), Kind: "permission", Options: optionsOf(piGateOptions()),
		Allow: "allow", Refuse: "deny",
		// pi reports the refused call's end itself (tool_execution_end,
		// isError): that report records the refusal, caused by this
		// command; nothing is recorded for it now.
		Enforced: func(st *State, a Answer, cmdID string) []Draft {
			if a.Option == "deny" && call != "" {
				st.Set(piDenied+call, cmdID)
			}
			return nil
		},
		Reply: func(a Answer) ([]byte, error) {
			if a.Option == "allow" {
				return []byte{}, nil // the handler returns nothing: the call runs
			}
			msg := strings.TrimSpace(a.Text)
			if msg == "" {
				msg = deniedMessage
			}
			return piBlock(msg), nil
		},
	}
}

// piBlock is the handler result that blocks a call with reason, as the
// extension returns it to pi.
func piBlock(reason string) []byte {
	b, _ := json.Marshal(map[string]any{"block": true, "reason": reason})
	return b
}

// piGateRequest is the gate's attention.requested, raised only when the
// loop holds this very tool_call live (without a relay nothing is asked).
func piGateRequest(raw []byte, st *State) []Draft {
	tool, call := Str(raw, "toolName"), Str(raw, "toolCallId")
	return gateRequest(st, piGateKey(raw), tool, call, currentRun(st), Raw(raw, "input"), piGateOptions())
}

// piGateEnd is what the gate adds at a call's end. A request still open
// expired unanswered (the budget passed, the relay went away, the held run
// failed): the gate fails open, so the call went on, and the request ends
// attention.timeout. A call refused over the loop ends denied, by policy,
// caused by the refusing command, instead of failed; one whose wait the
// user's abort ended failed aborted, never having run.
func piGateEnd(raw []byte, st *State) (settled []Draft, outcome *Draft) {
	call := Str(raw, "toolCallId")
	if key := piGateKey(raw); Pending(st, key) {
		settled = append(settled, expireAttention(st, key))
	}
	if call == "" {
		return settled, nil
	}
	cmd, denied := st.Get(piDenied + call)
	_, aborted := st.Get(piAborted + call)
	st.Del(piDenied + call)
	st.Del(piAborted + call)
	if !gjson.GetBytes(raw, "isError").Bool() {
		return settled, nil // it ran after all: its own outcome stands
	}
	name := Str(raw, "toolName")
	switch {
	case denied:
		return settled, &Draft{Type: "tool.denied", Subject: name, Cause: cmd,
			Data: map[string]any{"tool": ToolRef(name, call), "by": "policy"}}
	case aborted:
		d := toolFailed(name, call, "aborted", piResultText(raw))
		return settled, &d
	}
	return settled, nil
}

// piGateReleased maps the extension's own note that a held call's wait
// ended without an answer because the user aborted ({"type": "aep_gate",
// "toolCallId", "released": "aborted"}, written before pi ends the call):
// the request is dismissed, and pi will end the call unrun.
func piGateReleased(raw []byte, st *State) []Draft {
	call := Str(raw, "toolCallId")
	if call == "" || Str(raw, "released") != "aborted" {
		return nil
	}
	st.Set(piAborted+call, "1")
	if key := piGateKey(raw); Pending(st, key) {
		return []Draft{settleAttention(st, key, "dismissed", "")}
	}
	return nil
}
