package bus

import (
	"sync"
	"time"

	"github.com/aep-hook/aep-hook/harness/realagents/fakemodel"
	"github.com/aep-hook/aep-hook/harness/truth"
)

// Servers are the pinned bus servers and the scenarios recorded for each.
func Servers() []Server {
	return []Server{
		{Agent: "opencode", Vendor: "opencode", Package: "opencode-ai", Version: "1.18.33", Bin: "opencode", ConfigDir: "opencode", Scenarios: append(scenarios(), controlScenarios()...)},
		{Agent: "kilocode", Vendor: "kilo", Package: "@kilocode/cli", Version: "7.7.7", Bin: "kilo", ConfigDir: "kilo", Scenarios: append(scenarios(), controlScenarios()...)},
	}
}

type obj = map[string]any

func tool(name string, args any) fakemodel.Reply {
	return fakemodel.Reply{Calls: []fakemodel.ToolCall{{Name: name, Args: args}}}
}

func say(text string) fakemodel.Reply { return fakemodel.Reply{Text: text} }

// failFirst answers the turn's first n model calls with fail and every
// later one with ok (side requests get "Done."): retries, whose repeated
// request the round count cannot tell apart.
func failFirst(n int, fail, ok fakemodel.Reply) func() fakemodel.Script {
	return func() fakemodel.Script {
		var mu sync.Mutex
		calls := 0
		return func(r fakemodel.Request) fakemodel.Reply {
			if r.Side() {
				return say("Done.")
			}
			mu.Lock()
			defer mu.Unlock()
			calls++
			if calls <= n {
				return fail
			}
			return ok
		}
	}
}

// always answers every model call, side requests too, with r.
func always(r fakemodel.Reply) func() fakemodel.Script {
	return func() fakemodel.Script { return func(fakemodel.Request) fakemodel.Reply { return r } }
}

// permModel calls bash on ls, which the config makes ask permission.
var permModel = map[string][]fakemodel.Reply{"perm": {tool("bash", obj{"command": "ls /", "description": "list"}), say("ok after perm")}}

// permTurn prompts for the bash call, answers its permission ask with
// reply and waits for the turn's idle.
func permTurn(d *Driver, reply string) error {
	if err := d.Prompt("SCENARIO:perm list files"); err != nil {
		return err
	}
	ask, err := d.Wait("permission.asked", 3*time.Minute)
	if err != nil {
		return err
	}
	if err := d.ReplyPermission(ask.Get("properties.id").String(), reply); err != nil {
		return err
	}
	return d.Idle()
}

// slowReply prompts for a reply the model never sends and returns while
// its stream is open and silent.
func slowReply(d *Driver) error {
	if err := d.Prompt("SCENARIO:slow talk"); err != nil {
		return err
	}
	if _, err := d.Wait("session.status", 3*time.Minute); err != nil {
		return err
	}
	time.Sleep(2 * time.Second) // the model stream is open and silent
	return nil
}

// turn prompts and waits for the turn's idle.
func turn(d *Driver, prompt string) error {
	if err := d.Prompt(prompt); err != nil {
		return err
	}
	return d.Idle()
}

// scenarios are the sessions both servers are recorded in.
func scenarios() []Scenario {
	return []Scenario{
		{Name: "tools", Description: "a bash call that succeeds (allowed by the config) and a read of a missing file that fails, in one turn",
			Facts: truth.Facts{Turns: 1, Sessions: 1},
			Model: map[string][]fakemodel.Reply{"tools": {
				{Calls: []fakemodel.ToolCall{{Name: "bash", Args: obj{"command": "echo hi", "description": "say hi"}}, {Name: "read", Args: obj{"filePath": "missing-file.txt"}}}},
				say("done with tools")}},
			Drive: func(d *Driver) error { return turn(d, "SCENARIO:tools run two tools") }},
		{Name: "perm_once", Description: "bash asks permission; answered once over the REST reply route",
			Facts: truth.Facts{Turns: 1, Sessions: 1, Answers: 1},
			Model: permModel,
			Drive: func(d *Driver) error { return permTurn(d, "once") }},
		{Name: "perm_always", Description: "bash asks permission, answered always; the next turn runs the same command without asking",
			Facts: truth.Facts{Turns: 2, Sessions: 1, Answers: 1},
			Model: permModel,
			Drive: func(d *Driver) error {
				if err := permTurn(d, "always"); err != nil {
					return err
				}
				return turn(d, "SCENARIO:perm list files again")
			}},
		{Name: "perm_reject", Description: "bash asks permission; rejected: the call fails and the turn ends",
			Facts: truth.Facts{Turns: 1, Sessions: 1, Answers: 1},
			Model: permModel,
			Drive: func(d *Driver) error { return permTurn(d, "reject") }},
		{Name: "question", Description: "the question tool asks one select question; answered with a choice",
			Facts: truth.Facts{Turns: 1, Sessions: 1, Answers: 1},
			Model: dbQuestion("thanks"),
			Drive: func(d *Driver) error {
				q, err := d.askDB()
				if err != nil {
					return err
				}
				if err := d.ReplyQuestion(q.Get("properties.id").String(), [][]string{{"PG"}}); err != nil {
					return err
				}
				return d.Idle()
			}},
		{Name: "todos", Description: "todowrite twice: two items planned, then one completed",
			Facts: truth.Facts{Turns: 1, Sessions: 1},
			Model: map[string][]fakemodel.Reply{"todos": {
				tool("todowrite", obj{"todos": []any{obj{"content": "a", "status": "pending", "priority": "high"}, obj{"content": "b", "status": "pending", "priority": "low"}}}),
				tool("todowrite", obj{"todos": []any{obj{"content": "a", "status": "completed", "priority": "high"}, obj{"content": "b", "status": "in_progress", "priority": "low"}}}),
				say("todos done")}},
			Drive: func(d *Driver) error { return turn(d, "SCENARIO:todos plan") }},
		{Name: "abort_stream", Description: "a reply aborted mid-stream (POST /session/{id}/abort)",
			Facts: truth.Facts{Turns: 1, Sessions: 1, Interrupts: 1},
			Model: map[string][]fakemodel.Reply{"slow": {{Hang: true}}},
			Drive: func(d *Driver) error {
				if err := slowReply(d); err != nil {
					return err
				}
				if err := d.Abort(); err != nil {
					return err
				}
				return d.Idle()
			}},
		{Name: "abort_perm", Description: "aborted while a permission is pending: no permission.replied ever comes",
			Facts: truth.Facts{Turns: 1, Sessions: 1, Interrupts: 1},
			Model: permModel,
			Drive: func(d *Driver) error {
				if err := d.Prompt("SCENARIO:perm list files"); err != nil {
					return err
				}
				if _, err := d.Wait("permission.asked", 3*time.Minute); err != nil {
					return err
				}
				if err := d.Abort(); err != nil {
					return err
				}
				return d.Idle()
			}},
		{Name: "steer", Description: "a second prompt while the first turn's reply is still streaming: OpenCode runs it in the same loop (one idle); Kilo queues it, closes the first turn as superseded and opens a turn for it",
			Facts:   truth.Facts{Turns: 1, Sessions: 1},
			Differs: map[string]truth.Facts{"kilocode": {Turns: 2, Sessions: 1, Interrupts: 1}},
			Model:   map[string][]fakemodel.Reply{"slow": {{Hang: true}}, "hello": {say("hello and that too")}},
			Drive: func(d *Driver) error {
				if err := slowReply(d); err != nil {
					return err
				}
				if err := d.Prompt("SCENARIO:hello and also this"); err != nil {
					return err
				}
				return d.Settled()
			}},
		{Name: "retry", Description: "the model fails twice with HTTP 500 and then answers: the provider retries inside the call, the turn finishes",
			Facts:  truth.Facts{Turns: 1, Sessions: 1},
			Script: failFirst(2, fakemodel.Reply{Status: 500}, say("answered after retries")),
			Drive:  func(d *Driver) error { return turn(d, "SCENARIO:retry once") }},
		{Name: "model_error", Description: "every model call answers 400 context_length_exceeded: the server tries to compact (a synthetic user message inside the turn), fails, and the turn ends in ContextOverflowError",
			Facts:  truth.Facts{Turns: 1, Sessions: 1, Failures: 1},
			Script: always(fakemodel.Reply{Status: 400, ErrorCode: "context_length_exceeded", ErrorMessage: "maximum context length exceeded"}),
			Drive:  func(d *Driver) error { return turn(d, "SCENARIO:ctxerr fail please") }},
		{Name: "retry_forever", Description: "every model call of the turn fails (HTTP 500, which the server retries without end): retry statuses, the turn never ends while recorded",
			Facts: truth.Facts{Turns: 1, Sessions: 1, OpenRuns: 1},
			// The plugin's pipe outlives the stream tape: the recording
			// ends by stopping the server (SIGTERM) mid-retry, and the
			// forwarder closes the turn that cut.
			Plugin:    map[string]truth.Facts{"*": {Turns: 1, Sessions: 1, Interrupts: 1}},
			PluginWhy: "the recording ends by stopping the server (SIGTERM) while the turn still retries: the plugin's pipe ends with the server, and aep-hook forward closes the cut turn as cancelled by shutdown (the stream tape ends before the stop)",
			Model:     map[string][]fakemodel.Reply{"error": {{Status: 500}}},
			Drive: func(d *Driver) error {
				if err := d.Prompt("SCENARIO:error fail please"); err != nil {
					return err
				}
				for attempts := 0; attempts < 2; {
					st, err := d.Wait("session.status", 3*time.Minute)
					if err != nil {
						return err
					}
					if st.Get("properties.status.type").String() == "retry" {
						attempts++
					}
				}
				return nil
			}},
		{Name: "server_restart", Description: "the server is stopped (SIGTERM) mid-reply and started again; the bridge reconnects, catches up (the cut turn closes as cancelled by shutdown) and records the next turn",
			Facts: truth.Facts{Turns: 2, Sessions: 1, Interrupts: 1},
			Model: map[string][]fakemodel.Reply{"slow": {{Hang: true}}, "hello": {say("hello again")}},
			Drive: func(d *Driver) error {
				if err := midReply(d); err != nil {
					return err
				}
				if err := d.Restart(); err != nil {
					return err
				}
				return turn(d, "SCENARIO:hello again")
			}},
		{Name: "server_restart_gap", Description: "as server_restart, but the bridge is kept away from the restarted server until the next turn is over: its catch-up records that whole turn (and closes the cut one) from REST",
			Facts: truth.Facts{Turns: 2, Sessions: 1, Interrupts: 1},
			Model: map[string][]fakemodel.Reply{"slow": {{Hang: true}}, "hello": {say("hello again")}},
			Drive: func(d *Driver) error {
				if err := midReply(d); err != nil {
					return err
				}
				d.HoldBridge()
				if err := d.RestartServer(); err != nil {
					return err
				}
				if err := turn(d, "SCENARIO:hello again"); err != nil {
					return err
				}
				return d.ReleaseBridge()
			}},
	}
}

// midReply prompts the "slow" turn, whose model stream hangs, and returns
// once the turn is mid-reply: the moment the restart scenarios cut.
func midReply(d *Driver) error {
	if err := d.Prompt("SCENARIO:slow talk"); err != nil {
		return err
	}
	if _, err := d.Wait("message.part.updated", 3*time.Minute); err != nil {
		return err
	}
	time.Sleep(2 * time.Second) // nothing shows the hang itself
	return nil
}
