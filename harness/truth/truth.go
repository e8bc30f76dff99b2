// Package truth checks that a whole AEP record tells what really happened in
// a session: one run per vendor turn, no run or tool call with two terminals
// or (where the vendor gave a signal) none, no run.cancelled without an
// interrupt, one session.started per AEP session, compactions only when
// they happened, every delegation naming a child that is in the record, answers recorded as answers, and every event valid against
// the AEP schemas. The facts come from whoever drove the session (the
// real-agent harness knows what its scenario did); the record comes from the
// logs aep-hook wrote.
//
// It is test equipment: the real-agent replay, the tee and stream harnesses
// use it; nothing in the aep-hook binary links it.
package truth

import (
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Facts are what really happened in a recorded session. Zero values assert
// absence (no interrupt, no compaction, ...): a fact the scenario cannot
// know is marked with -1 ("any").
type Facts struct {
	// Turns is the number of turns the human started (runs with trigger
	// user in the root sessions).
	Turns int `json:"turns"`
	// Runs, when set, is the number of runs the vendor defines in the root
	// sessions, whatever their trigger (pi: one per agent loop, so an
	// automatic retry is one more; OpenHands: one per stretch of work);
	// 0 leaves it unchecked.
	Runs int `json:"runs,omitempty"`
	// AgentTurns is the number of turns the agent started itself
	// (trigger agent: a task notification, a scheduled wake-up).
	AgentTurns int `json:"agent_turns,omitempty"`
	// Interrupts is the number of user interrupts: the most run.cancelled
	// events the record may hold.
	Interrupts int `json:"interrupts,omitempty"`
	// Unreported is the number of turns that ended with no terminal
	// signal and no interrupt (an API failure the vendor does not report)
	// that a later moment proves over: each may be closed run.cancelled
	// with no by (nobody says how it ended), never with one.
	Unreported int `json:"unreported,omitempty"`
	// ToolsStopped is the number of tool calls the user stopped while they
	// ran (Esc): at least that many must end tool.failed with an
	// interrupt's error type, never tool.completed.
	ToolsStopped int `json:"tools_stopped,omitempty"`
	// Sessions is the number of AEP sessions the record should open (one
	// session.started each; a resume is a new one, whose session.started
	// has trigger resume and names the session it continues in
	// resumed_from).
	Sessions int `json:"sessions"`
	// Compactions is the number of context compactions that happened.
	Compactions int `json:"compactions,omitempty"`
	// Answers is the number of requests answered: questions the human
	// answered, and permission requests answered in the agent's own UI
	// (allowed or refused there; an allowed call then ran).
	Answers int `json:"answers,omitempty"`
	// Failures is the number of turns that ended in a failure the vendor
	// reported (run.failed).
	Failures int `json:"failures,omitempty"`
	// Subagents is the number of subagents the agent delegated to.
	Subagents int `json:"subagents,omitempty"`
	// OpenRuns is the number of runs the vendor gives no terminal signal
	// for (they may stay open).
	OpenRuns int `json:"open_runs,omitempty"`
	// OpenTools is the number of tool calls the vendor gives no outcome
	// for (a rejected call with no hook).
	OpenTools int `json:"open_tools,omitempty"`
	// Ended is the number of AEP sessions whose end the vendor signalled
	// (session.ended events).
	Ended int `json:"ended"`
	// AbnormalEnds is how many of those ended other than normally (the
	// agent exited on an API error): the most session.ended events that
	// may say reason normal is Ended less these.
	AbnormalEnds int `json:"abnormal_ends,omitempty"`
	// Runless says the channel knows no runs (an OTel log export): its
	// tool events stand outside any run.
	Runless bool `json:"runless,omitempty"`
	// Control is the number of requests the control loop held live, so
	// could be answered over it: the most attention.requested events that
	// may declare control in respond_via (AEP-0008). Zero for every
	// observe-only recording: no card may claim an answer path that was
	// not there.
	Control int `json:"control,omitempty"`
	// ViaControl is the number of requests answered over the control loop
	// (attention.answered via control); the rest of Answers came out of
	// band.
	ViaControl int `json:"via_control,omitempty"`
	// ToolNames, when set, are the names of the tools the session really
	// called (the names the agent offered its model): every tool event
	// must name one of them, not a vendor's internal spelling.
	ToolNames []string `json:"tool_names,omitempty"`
}

// stopped are the tool.failed error types of a call stopped while it ran.
var stopped = map[string]bool{"interrupt": true, "interrupted": true, "cancelled": true, "canceled": true, "aborted": true}

// Any marks a fact the scenario cannot know.
const Any = -1

// Event is one decoded AEP event.
type Event = map[string]any

// Log is one session's record, in file order.
type Log struct {
	Name   string // the log's path or name, for messages
	Events []Event
}

func str(e Event, k string) string {
	s, _ := e[k].(string)
	return s
}

func data(e Event) map[string]any {
	d, _ := e["data"].(map[string]any)
	return d
}

// Check returns every way the logs contradict the facts or the schemas
// (nil schemas skip schema validation). An empty result means the record
// is true.
func Check(logs []Log, f Facts, schemas *Schemas) []string {
	var bad []string
	errf := func(format string, a ...any) { bad = append(bad, fmt.Sprintf(format, a...)) }

	type runInfo struct {
		log, trigger string
		terminals    []string
	}
	runs := map[string]*runInfo{} // session/run → info
	var runOrder []string
	tools := map[string][]string{} // session/call → terminals
	toolReq := map[string]bool{}
	var toolOrder []string
	count := map[string]int{}
	userTurns, agentTurns, sessions, answeredResolved := 0, 0, 0, 0
	claimsControl, viaControl := 0, 0
	cancelledBy, stoppedTools, normalEnds := 0, 0, 0
	children := map[string]bool{}  // child sessions named by a parent's lineage
	childRuns := map[string]bool{} // session/run of subagents (run id = the delegation's subject)

	type link struct{ at, run string }
	var lineage []link                                       // child runs the delegations name (session/run)
	started, ended := map[string]string{}, map[string]bool{} // session → where started; ended
	asked := map[string]string{}                             // attention request id → its session, while pending
	settled := map[string]int{}                              // attention request id → terminals
	type resume struct{ at, session, from string }
	var resumes []resume // new AEP sessions continuing an earlier one
	for _, lg := range logs {
		for i, e := range lg.Events {
			at := fmt.Sprintf("%s event %d (%s)", lg.Name, i+1, str(e, "type"))
			if schemas != nil {
				for _, err := range schemas.Validate(e) {
					errf("%s: schema: %s", at, err)
				}
			}
			typ := str(e, "type")
			count[typ]++
			sess, run := str(e, "session"), str(e, "run")
			key := sess + "/" + run
			switch typ {
			case "session.started":
				if first, dup := started[sess]; dup {
					errf("%s: second session.started in one AEP session (first at %s)", at, first)
				}
				if ended[sess] {
					errf("%s: session.started after session.ended", at)
				}
				started[sess] = at
				sessions++
				if p, ok := data(e)["parent"].(map[string]any); ok && p["session"] != nil {
					children[sess] = true
				}
				if data(e)["trigger"] == "resume" {
					resumes = append(resumes, resume{at, sess, str(data(e), "resumed_from")})
				}
			case "session.ended":
				if ended[sess] {
					errf("%s: second session.ended", at)
				}
				for id, in := range asked {
					if in == sess {
						errf("%s: the session ends with attention request %s still pending (AEP-0002 §7 rule 2)", at, id)
						delete(asked, id)
					}
				}
				ended[sess] = true
				if data(e)["reason"] == "normal" {
					normalEnds++
				}
			case "run.started":
				if ended[sess] {
					errf("%s: run.started after session.ended: the session was still running", at)
				}
				if run == "" {
					errf("%s: run.started without a run", at)
					break
				}
				if _, dup := runs[key]; dup {
					errf("%s: second run.started for run %s", at, run)
					break
				}
				trig, _ := data(e)["trigger"].(string)
				runs[key] = &runInfo{log: lg.Name, trigger: trig}
				runOrder = append(runOrder, key)
			case "run.finished", "run.failed", "run.cancelled":
				ri := runs[key]
				if ri == nil {
					errf("%s: %s closes run %q that never started", at, typ, run)
					ri = &runInfo{log: lg.Name}
					runs[key] = ri
					runOrder = append(runOrder, key)
				}
				ri.terminals = append(ri.terminals, typ)
				if _, by := data(e)["by"]; typ == "run.cancelled" && by {
					cancelledBy++
				}
			case "tool.requested", "tool.completed", "tool.failed", "tool.denied":
				if run == "" {
					if !f.Runless {
						errf("%s: tool event outside any run", at)
					}
				} else if runs[key] == nil {
					errf("%s: tool event in run %q that never started", at, run)
				}
				if typ == "tool.failed" {
					errInfo, _ := data(e)["error"].(map[string]any)
					if t, _ := errInfo["type"].(string); stopped[t] {
						stoppedTools++
					}
				}
				tool, _ := data(e)["tool"].(map[string]any)
				if name, _ := tool["name"].(string); len(f.ToolNames) > 0 && !slices.Contains(f.ToolNames, name) {
					errf("%s: tool %q is none of the tools called (%s)", at, name, strings.Join(f.ToolNames, ", "))
				}
				call, _ := tool["call_id"].(string)
				ck := sess + "/" + call
				if call == "" {
					// A vendor with no call ids: the outcome names its
					// request by cause, the request's event id.
					if typ == "tool.requested" {
						ck = sess + "/event:" + str(e, "id")
						toolOrder = append(toolOrder, ck)
					} else if cause := str(e, "cause"); cause != "" {
						tools[sess+"/event:"+cause] = append(tools[sess+"/event:"+cause], typ)
					}
					break
				}
				if typ == "tool.requested" {
					if toolReq[ck] {
						errf("%s: second tool.requested for call %s", at, call)
					}
					toolReq[ck] = true
					toolOrder = append(toolOrder, ck)
				} else {
					tools[ck] = append(tools[ck], typ)
				}
			case "delegation.subagent.started", "delegation.subagent.stopped":
				if typ == "delegation.subagent.started" {
					childRuns[sess+"/"+str(e, "subject")] = true
				}
				child, _ := data(e)["child"].(map[string]any)
				if str(child, "run") == "" && str(child, "session") == "" && str(child, "agent") == "" {
					errf("%s: the delegation names no child (data.child run, session or agent): its lineage cannot be followed", at)
				}
				if r := str(child, "run"); r != "" {
					lineage = append(lineage, link{at, sess + "/" + r})
				}
				if cs := str(child, "session"); cs != "" && !hasSession(logs, cs) {
					errf("%s: the delegation's child session %q is not in the record", at, cs)
				}
			case "attention.requested":
				asked[str(e, "id")] = sess
				via, _ := data(e)["respond_via"].([]any)
				for _, v := range via {
					if v == "control" {
						claimsControl++
					}
				}
			case "attention.resolved", "attention.timeout":
				if data(e)["resolution"] == "answered" {
					answeredResolved++
				}
				id := str(e, "subject")
				if settled[id]++; settled[id] > 1 {
					errf("%s: a second terminal for attention request %s", at, id)
				}
				delete(asked, id)
			case "attention.answered":
				if data(e)["via"] == "control" {
					viaControl++
				}
			}
		}
	}
	for _, l := range lineage {
		if runs[l.run] == nil {
			errf("%s: the delegation's child run %q never started", l.at, strings.SplitN(l.run, "/", 2)[1])
		}
	}
	rootRuns := 0
	for _, k := range runOrder {
		ri := runs[k]
		if !children[strings.SplitN(k, "/", 2)[0]] && !childRuns[k] {
			rootRuns++
			switch ri.trigger {
			case "user":
				userTurns++
			case "agent":
				agentTurns++
			}
		}
		if len(ri.terminals) > 1 {
			errf("%s: run %s has %d terminals: %s", ri.log, k, len(ri.terminals), strings.Join(ri.terminals, ", "))
		}
	}
	for _, r := range resumes {
		if r.from == r.session || !hasSession(logs, r.from) {
			errf("%s: a resumed session must name the earlier AEP session it continues (resumed_from %q)", r.at, r.from)
		}
	}
	bad = append(bad, afterResume(logs)...)
	open := 0
	for _, k := range runOrder {
		if len(runs[k].terminals) == 0 {
			open++
		}
	}
	if f.OpenRuns != Any && open > f.OpenRuns {
		errf("%d run(s) never reached a terminal; the vendor signals all but %d", open, f.OpenRuns)
	}
	openTools := 0
	for _, k := range toolOrder {
		if len(tools[k]) == 0 {
			openTools++
		}
	}
	// Terminal exclusivity holds for every call, requested or not (a
	// channel may see only a call's outcome).
	callKeys := make([]string, 0, len(tools))
	for k := range tools {
		callKeys = append(callKeys, k)
	}
	sort.Strings(callKeys)
	for _, k := range callKeys {
		if n := len(tools[k]); n > 1 {
			errf("tool call %s has %d terminals: %s", k, n, strings.Join(tools[k], ", "))
		}
	}
	if f.OpenTools != Any && openTools > f.OpenTools {
		errf("%d tool call(s) never reached a terminal; the vendor signals all but %d", openTools, f.OpenTools)
	}
	bad = append(bad, ranButDismissed(logs)...)
	expect := func(what string, got, want int) {
		if want != Any && got != want {
			errf("%s: record says %d, really %d", what, got, want)
		}
	}
	expect("turns the human started (run.started trigger user)", userTurns, f.Turns)
	expect("turns the agent started (run.started trigger agent)", agentTurns, f.AgentTurns)
	if f.Runs != 0 {
		expect("runs (run.started in the root sessions)", rootRuns, f.Runs)
	}
	if f.Interrupts != Any && count["run.cancelled"] > f.Interrupts+f.Unreported {
		errf("run.cancelled: record says %d, but the user interrupted %d time(s) (and %d turn(s) ended unreported)", count["run.cancelled"], f.Interrupts, f.Unreported)
	}
	if f.Interrupts != Any && cancelledBy > f.Interrupts {
		errf("run.cancelled with a by: record says %d, but the user interrupted %d time(s): a turn that ended unreported names no canceller", cancelledBy, f.Interrupts)
	}
	if stoppedTools < f.ToolsStopped {
		errf("tool calls stopped while running (tool.failed with an interrupt's type): record says %d, really %d", stoppedTools, f.ToolsStopped)
	}
	if f.Ended != Any && normalEnds > f.Ended-f.AbnormalEnds {
		errf("session.ended reason normal: record says %d, but %d of the %d ended sessions ended abnormally", normalEnds, f.AbnormalEnds, f.Ended)
	}
	expect("compactions (session.compacted)", count["session.compacted"], f.Compactions)
	expect("answers (attention.answered)", count["attention.answered"], f.Answers)
	expect("answered requests (attention.resolved answered)", answeredResolved, f.Answers)
	expect("failed turns (run.failed)", count["run.failed"], f.Failures)
	expect("subagents (delegation.subagent.started)", count["delegation.subagent.started"], f.Subagents)
	expect("AEP sessions (session.started)", sessions, f.Sessions)
	expect("ended sessions (session.ended)", count["session.ended"], f.Ended)
	if claimsControl > f.Control {
		errf("%d attention.requested declare respond_via control, but the control loop held %d live: a card claims an answer path that was not there", claimsControl, f.Control)
	}
	expect("answers over control (attention.answered via control)", viaControl, f.ViaControl)
	return bad
}

// hasSession reports whether any event of the logs is in session.
func hasSession(logs []Log, session string) bool {
	for _, l := range logs {
		for _, e := range l.Events {
			if session != "" && str(e, "session") == session {
				return true
			}
		}
	}
	return false
}

// Summary counts the record's event types, for messages: "run.started×2 ...".
func Summary(logs []Log) string {
	c := map[string]int{}
	for _, l := range logs {
		for _, e := range l.Events {
			c[str(e, "type")]++
		}
	}
	keys := make([]string, 0, len(c))
	for k := range c {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s×%d", k, c[k])
	}
	return strings.Join(parts, " ")
}

// afterResume returns a violation for every event of a session that
// happened after a resume of that session began (the resumed session's
// session.started): what the resumed conversation did belongs to the new
// AEP session. A late delivery of something that happened before the
// resume is no violation; its time says so.
func afterResume(logs []Log) []string {
	resumed := map[string]string{} // earlier session → time its resume began
	for _, l := range logs {
		for _, e := range l.Events {
			if str(e, "type") == "session.started" && data(e)["trigger"] == "resume" {
				if from := str(data(e), "resumed_from"); from != "" {
					if t, ok := resumed[from]; !ok || str(e, "time") < t {
						resumed[from] = str(e, "time")
					}
				}
			}
		}
	}
	var bad []string
	for _, l := range logs {
		for i, e := range l.Events {
			if t, ok := resumed[str(e, "session")]; ok && str(e, "time") > t {
				bad = append(bad, fmt.Sprintf("%s event %d (%s): written into session %s at %s, after its resume began (%s)",
					l.Name, i+1, str(e, "type"), str(e, "session"), str(e, "time"), t))
			}
		}
	}
	return bad
}
