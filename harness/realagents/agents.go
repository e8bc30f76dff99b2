package realagents

import (
	"sync"

	"time"

	"github.com/aep-hook/aep-hook/harness/realagents/fakemodel"
)

// Agents returns every agent the harness drives, each with its scenarios.
func Agents() []*Agent {
	return []*Agent{claudeCode(), codex(), codexOtel(), geminiCLI(), qwenCode(), kimiCode(), cline(), piAgent(), kimiWebAgent()}
}

// call is a scripted tool call.
func call(name string, args any) fakemodel.ToolCall {
	return fakemodel.ToolCall{Name: name, Args: args}
}

// say is a scripted text answer.
func say(text string) fakemodel.Reply { return fakemodel.Reply{Text: text} }

// calls is a scripted answer making tool calls.
func calls(cs ...fakemodel.ToolCall) fakemodel.Reply { return fakemodel.Reply{Calls: cs} }

type obj = map[string]any

// failing is a model whose every answer is an HTTP 400 (an API failure);
// side requests (titles, summaries) still get an answer.
func failing(req fakemodel.Request) fakemodel.Reply {
	if req.Side() {
		return say("Done.")
	}
	return fakemodel.Reply{Status: 400}
}

// headless is a Drive that runs the agent once with args, bounded by d.
func headless(d time.Duration, args ...string) func(r *Run) error {
	return func(r *Run) error {
		_, err := r.Exec(d, "", args...)
		return err
	}
}

// failingOnce answers the first request of the turn marked marker with the
// HTTP error status (an API failure the agent retries), and the later ones
// with then; side requests and other markers get "Done.".
func failingOnce(marker string, status int, then fakemodel.Reply) fakemodel.Script {
	return failingOnceWith(marker, fakemodel.Reply{Status: status}, then)
}

// failingOnceWith is failingOnce with the failing answer fail.
func failingOnceWith(marker string, fail, then fakemodel.Reply) fakemodel.Script {
	var once sync.Once
	return func(req fakemodel.Request) fakemodel.Reply {
		if req.Marker != marker || req.Side() {
			return say("Done.")
		}
		first := false
		once.Do(func() { first = true })
		if first {
			return fail
		}
		return then
	}
}
