package truth

import "fmt"

// ranButDismissed returns a violation for every permission request whose
// tool call then ran while the record closes the request as dismissed, or
// not at all: the call could only run because the request was allowed, so
// the record must say it was answered, or that it expired (a gate that
// fails open, pi's, lets the call go on once its request lapsed
// unanswered: attention.timeout). A call ran when it completed, or
// failed with an error that is not one of the ways a call ends unrun
// (notRun: a rejection, or an abort or interrupt that may have come while
// the request was still pending).
//
// The request is tied to its call by its cause (the call's tool.requested),
// else, as hook records without that link are written, by the tool name in
// the same run: the one call of that tool still open when the request was
// raised (Claude Code asks after PreToolUse). A request that names no single
// call (two open calls of the tool, or a vendor that asks before its
// PreToolUse) is not judged: a guessed pairing would be a false alarm.
func ranButDismissed(logs []Log) []string {
	var bad []string
	for _, lg := range logs {
		bad = append(bad, permissionCalls(lg)...)
		bad = append(bad, danglingSettlements(lg)...)
	}
	return bad
}

// danglingSettlements returns a violation for every attention.answered or
// attention.resolved whose subject is not a request raised earlier in the
// log: a consumer cannot tell what it settles.
func danglingSettlements(lg Log) []string {
	var bad []string
	raised := map[string]bool{}
	for i, e := range lg.Events {
		switch str(e, "type") {
		case "attention.requested":
			raised[str(e, "id")] = true
		case "attention.answered", "attention.resolved":
			if s := str(e, "subject"); !raised[s] {
				bad = append(bad, fmt.Sprintf("%s event %d (%s): its subject %q names no request raised before it", lg.Name, i+1, str(e, "type"), s))
			}
		}
	}
	return bad
}

// notRun reports the tool.failed error types the record's tables give a
// call that may never have run: refused, or ended with its turn (OpenCode's
// abort while a permission was pending, an interrupt).
func notRun(errType string) bool { return errType == "rejected" || stopped[errType] }

// call is one tool call of a log: where it was requested and where (if
// ever) it ran to an outcome.
type call struct {
	id, name, run string
	at, endAt     int // event indexes; endAt -1 while open
	ran           bool
}

func permissionCalls(lg Log) []string {
	var calls []*call
	byEventID := map[string]*call{}
	byCallID := map[string]*call{}
	resolution := map[string]string{} // request id → resolution
	for i, e := range lg.Events {
		switch str(e, "type") {
		case "tool.requested":
			tool, _ := data(e)["tool"].(map[string]any)
			id, _ := tool["call_id"].(string)
			name, _ := tool["name"].(string)
			c := &call{id: id, name: name, run: str(e, "run"), at: i, endAt: -1}
			calls = append(calls, c)
			byEventID[str(e, "id")] = c
			if id != "" {
				byCallID[str(e, "session")+"/"+id] = c
			}
		case "tool.completed", "tool.failed", "tool.denied":
			tool, _ := data(e)["tool"].(map[string]any)
			id, _ := tool["call_id"].(string)
			if c := byCallID[str(e, "session")+"/"+id]; c != nil && c.endAt < 0 {
				c.endAt = i
				switch str(e, "type") {
				case "tool.completed":
					c.ran = true
				case "tool.failed":
					errInfo, _ := data(e)["error"].(map[string]any)
					typ, _ := errInfo["type"].(string)
					c.ran = !notRun(typ)
				}
			}
		case "attention.resolved":
			resolution[str(e, "subject")], _ = data(e)["resolution"].(string)
		case "attention.timeout":
			resolution[str(e, "subject")] = "timeout"
		}
	}
	var bad []string
	for i, e := range lg.Events {
		if str(e, "type") != "attention.requested" || data(e)["kind"] != "permission" {
			continue
		}
		c := byEventID[str(e, "cause")]
		if c == nil {
			c = askedAbout(calls, str(e, "subject"), str(e, "run"), i)
		}
		if c == nil || !c.ran {
			continue
		}
		if r := resolution[str(e, "id")]; r != "answered" && r != "timeout" {
			if r == "" {
				r = "no terminal"
			}
			bad = append(bad, fmt.Sprintf("%s event %d (attention.requested): permission for call %s, which then ran, but the record says %s, not answered",
				lg.Name, i+1, c.id, r))
		}
	}
	return bad
}

// askedAbout names the call a permission request raised at index at, for
// tool name in run, is about when no cause says so (see ranButDismissed).
func askedAbout(calls []*call, name, run string, at int) *call {
	var open []*call
	for _, c := range calls {
		if c.name == name && c.run == run && c.at < at && (c.endAt < 0 || c.endAt > at) {
			open = append(open, c)
		}
	}
	if len(open) == 1 {
		return open[0]
	}
	return nil
}
