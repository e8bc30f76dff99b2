package realagents

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
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

// callThenSay is the script of a one-call turn: for the prompt's marker the
// model makes the call c, then answers text once it has the result.
func callThenSay(marker string, c fakemodel.ToolCall, text string) fakemodel.Script {
	return fakemodel.Turns(map[string][]fakemodel.Reply{marker: {calls(c), say(text)}})
}

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

// together is a Drive that runs the agent twice at once in the same
// folder, with args a and with args b, each bounded by d: two sessions of
// one project side by side.
func together(d time.Duration, a, b []string) func(r *Run) error {
	return func(r *Run) error {
		var wg sync.WaitGroup
		runs := [2]Run{*r, *r}
		var errs [2]error
		for i, args := range [2][]string{a, b} {
			runs[i].Notes = nil
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, errs[i] = runs[i].Exec(d, "", args...)
			}()
		}
		wg.Wait()
		for _, c := range runs {
			r.Notes = append(r.Notes, c.Notes...)
		}
		return errors.Join(errs[0], errs[1])
	}
}

// mcpTool is the name under which the agent offers the harness's MCP
// tool (each agent prefixes it its own way), "" when it offers none.
func mcpTool(req fakemodel.Request) string {
	for _, t := range req.Tools {
		if strings.HasSuffix(t, MCPTool) && strings.Contains(t, "probe") {
			return t
		}
	}
	return ""
}

// withMCP is a Drive that adds the harness's stdio MCP server (realagents
// mcp, as server "probe") to the agent's settings file at path (relative
// to the home), then runs drive and checks the agent offered its tool.
func withMCP(path string, drive func(r *Run) error) func(r *Run) error {
	return func(r *Run) error {
		file := filepath.Join(r.Home, path)
		b, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		settings := obj{}
		if err := json.Unmarshal(b, &settings); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		settings["mcpServers"] = obj{"probe": obj{"command": r.H.Self, "args": []string{"mcp"}, "trust": true}}
		if err := r.WriteJSON(file, settings); err != nil {
			return err
		}
		if err := drive(r); err != nil {
			return err
		}
		for _, req := range r.Model.Requests() {
			if mcpTool(req) != "" || bytes.Contains(req.Body, []byte(qwenDeferredMCP)) {
				return nil
			}
		}
		return fmt.Errorf("the agent never offered the MCP tool %q", MCPTool)
	}
}

// cutOnce answers the first request of the turn marked marker with then's
// text cut mid-stream (the connection dropped: the agent retries), and the
// later ones with then; side requests and other markers get "Done.".
func cutOnce(marker string, then fakemodel.Reply) fakemodel.Script {
	var once sync.Once
	return func(req fakemodel.Request) fakemodel.Reply {
		if req.Marker != marker || req.Side() {
			return say("Done.")
		}
		rep := then
		once.Do(func() { rep.Cut = true })
		return rep
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
