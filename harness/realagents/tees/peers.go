package tees

import (
	"path/filepath"

	"github.com/aep-hook/aep-hook/harness/realagents/fakemodel"
	"github.com/aep-hook/aep-hook/harness/truth"
)

// Pinned npm packages of the peers (installed into the shared cache).
var (
	acpSDK  = pkg{Dir: "acp-sdk-1.9.0", Names: []string{"@agentclientprotocol/sdk@1.9.0"}}
	aguiPkg = pkg{Dir: "ag-ui-1.0.0", Names: []string{"@ag-ui/client@1.0.0", "@ag-ui/encoder@1.0.0", "@ag-ui/core@1.0.0"}}
)

// acpPeer is a real ACP agent the SDK client drives through the tee.
type acpPeer struct {
	Name, Package, Version string
	pkg                    pkg
	// Command is the agent command line in the run.
	Command func(r *run) []string
	// Model, when set, is the agent's fake model server (chat completions).
	Model fakemodel.Script
	// Setup writes the agent's configuration under the run's home.
	Setup     func(r *run) error
	Scenarios []scenario
}

// scenario is one recorded session and what really happens in it.
type scenario struct {
	Name, Description string
	Facts             truth.Facts
	Denied            int
	Orphan            bool
}

// The ACP scenarios, each one prompt turn of one session on one
// connection. The client (js/acp-client.mjs) plays its part by name.
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

func acpPeers() []*acpPeer {
	return []*acpPeer{
		// 0.15.10 is the version the tee's problems were found with (its
		// permission requests announce calls no tool_call update did);
		// 0.24.4 is the hook harness's pin.
		qwenPeer("0.15.10"),
		qwenPeer("0.24.4"),
		{
			Name: "acp-example-agent", Package: "@agentclientprotocol/sdk", Version: "1.9.0", pkg: acpSDK,
			Command: func(r *run) []string {
				return []string{"node", filepath.Join(r.cache, acpSDK.Dir, "node_modules", "@agentclientprotocol", "sdk", "dist", "examples", "agent.js")}
			},
			Scenarios: acpScenarios(false),
		},
	}
}

// qwenPeer is `qwen --acp` of one Qwen Code version against the fake chat
// completions server. Its launcher re-spawns itself as a worker sharing
// stdio: killing the launcher leaves the worker behind.
func qwenPeer(version string) *acpPeer {
	p := pkg{Dir: "qwen-code-" + version, Names: []string{"@qwen-code/qwen-code@" + version}}
	ss := acpScenarios(true)
	for i := range ss {
		ss[i].Orphan = ss[i].Name == "crash" || ss[i].Name == "orphan"
		if ss[i].Name == "crash" && version != "0.15.10" {
			// The worker the dead launcher left answers the open prompt
			// "cancelled" once its stdin closes: the agent's own word.
			ss[i].Facts.Failures, ss[i].Facts.Interrupts = 0, 1
			ss[i].Description += "; its worker then answers the prompt cancelled"
		}
	}
	return &acpPeer{
		Name: "qwen-code-" + version, Package: "@qwen-code/qwen-code", Version: version, pkg: p,
		Command: func(r *run) []string {
			return []string{filepath.Join(r.cache, p.Dir, "node_modules", ".bin", "qwen"), "--acp"}
		},
		Model: fakemodel.Turns(map[string][]fakemodel.Reply{
			"allow":  shellThenSay(),
			"reject": shellThenSay(),
			"cancel": {{Hang: true}},
			"crash":  {{Hang: true}},
			"orphan": {{Hang: true}},
		}),
		Setup:     qwenSetup,
		Scenarios: ss,
	}
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
