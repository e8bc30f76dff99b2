package tees

import (
	"fmt"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/aep-hook/aep-hook/harness/truth"
)

// acpKinds are the ACP tool kinds (the schema's ToolKind): what a tool
// call is named by when the agent states no tool name.
var acpKinds = map[string]bool{"read": true, "edit": true, "delete": true, "move": true, "search": true,
	"execute": true, "think": true, "fetch": true, "switch_mode": true, "other": true}

// teeChecks are the record's truths the tees add to package truth's: a
// rejected call ends in tool.denied (and only the rejected ones do), every
// permission answer states whether it allows or rejects, and, for ACP, what
// the transcript itself shows: a run cancelled by the user needs the
// editor's session/cancel, one cancelled by shutdown the editor's stop
// (its signal, or its stdin closed mid-turn); a tool is named by a tool
// the agent offered its model (or the call's kind), never by its display
// title; a turn whose result states its token usage is recorded with it,
// and a context-window update with its figures.
func teeChecks(logs []truth.Log, rec Recording) []string {
	var bad []string
	m := rec.Meta
	denied := 0
	cancelled := map[string]int{}
	var finished []truth.Event
	for _, lg := range logs {
		for i, e := range lg.Events {
			at := fmt.Sprintf("%s event %d (%v)", lg.Name, i+1, e["type"])
			d, _ := e["data"].(map[string]any)
			switch e["type"] {
			case "tool.denied":
				denied++
			case "attention.answered":
				if m.Protocol != ACP {
					break
				}
				ans, _ := d["answer"].(map[string]any)
				kind, _ := ans["kind"].(string)
				if !strings.HasPrefix(kind, "allow") && !strings.HasPrefix(kind, "reject") {
					bad = append(bad, fmt.Sprintf("%s: the answer does not state allow or reject: %v", at, d))
				}
			case "run.cancelled":
				by, _ := d["by"].(string)
				cancelled[by]++
			case "run.finished":
				finished = append(finished, e)
			case "tool.requested":
				if m.Protocol != ACP || len(m.Tools) == 0 {
					break
				}
				tool, _ := d["tool"].(map[string]any)
				name, _ := tool["name"].(string)
				if !acpKinds[name] && !contains(m.Tools, name) {
					bad = append(bad, fmt.Sprintf("%s: tool %q is neither a tool the agent offered its model nor a tool kind (a display title?)", at, name))
				}
			case "x.acp.usage.updated":
				if _, ok := d["used"]; !ok && m.Protocol == ACP && hasContextUpdate(rec) {
					bad = append(bad, fmt.Sprintf("%s: the agent stated the context window (used, size); the record drops it", at))
				}
			}
		}
	}
	if denied != m.Denied {
		bad = append(bad, fmt.Sprintf("tool.denied: record says %d, really %d rejected call(s)", denied, m.Denied))
	}
	if m.Protocol == ACP {
		bad = append(bad, cancelCauses(rec, cancelled)...)
		bad = append(bad, usageKept(rec, finished)...)
	}
	return bad
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// cancelCauses holds the record's run.cancelled causes to the transcript.
func cancelCauses(rec Recording, by map[string]int) []string {
	var bad []string
	cancels := 0
	stopped := false
	open := map[string]bool{} // prompt request ids awaiting their result
	for _, e := range rec.Entries {
		switch {
		case e.Dir == "c2a":
			msg := gjson.Parse(e.Line)
			switch msg.Get("method").String() {
			case "session/cancel":
				cancels++
			case "session/prompt":
				open[msg.Get("id").Raw] = true
			}
		case e.Dir == "a2c":
			if msg := gjson.Parse(e.Line); !msg.Get("method").Exists() {
				delete(open, msg.Get("id").Raw) // a response
			}
		case e.Event == "kill" && e.Target == "tee":
			stopped = true
		case e.Event == "stdin_closed" && len(open) > 0:
			stopped = true // the editor closed the agent's stdin mid-turn
		}
	}
	if by["user"] > cancels {
		bad = append(bad, fmt.Sprintf("run.cancelled{by: user}: record says %d, but the editor sent session/cancel %d time(s)", by["user"], cancels))
	}
	if by["shutdown"] > 0 && !stopped {
		bad = append(bad, fmt.Sprintf("run.cancelled{by: shutdown}: record says %d, but the editor never stopped the agent mid-turn", by["shutdown"]))
	}
	return bad
}

// hasContextUpdate reports a usage_update with the context window's
// figures in the transcript.
func hasContextUpdate(rec Recording) bool {
	for _, e := range rec.Entries {
		if e.Dir == "a2c" && gjson.Get(e.Line, "params.update.sessionUpdate").String() == "usage_update" &&
			gjson.Get(e.Line, "params.update.used").Exists() {
			return true
		}
	}
	return false
}

// usageKept reports the finished turns whose prompt result stated token
// usage the record's run.finished does not carry.
func usageKept(rec Recording, finished []truth.Event) []string {
	withUsage := map[string]bool{} // prompt result ids stating usage
	for _, e := range rec.Entries {
		if e.Dir != "a2c" {
			continue
		}
		r := gjson.Get(e.Line, "result")
		if r.Get("stopReason").Exists() && (r.Get("usage").IsObject() || r.Get("_meta.quota.token_count").IsObject()) {
			withUsage[gjson.Get(e.Line, "id").Raw] = true
		}
	}
	var bad []string
	for _, e := range finished {
		run, _ := e["run"].(string)
		id := run[strings.LastIndexByte(run, ':')+1:]
		d, _ := e["data"].(map[string]any)
		if _, ok := d["usage"]; withUsage[id] && !ok {
			bad = append(bad, fmt.Sprintf("run.finished of run %s: the prompt result states its token usage; the record drops it", run))
		}
	}
	return bad
}
