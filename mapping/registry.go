package mapping

import "sort"

// Vendors returns every table the binary knows, sorted by name. Each call
// builds a fresh slice; there is no package-level registry to mutate.
func Vendors() []Vendor {
	vs := []Vendor{
		// One line per vendor table; keep sorted by file name.
		A2A(),         // a2a.go
		ACP(),         // acp.go
		AGUI(),        // agui.go
		Antigravity(), // antigravity.go
		ClaudeCode(),  // claudecode.go
		Codex(),       // codex.go
		CodexOtel(),   // codexotel.go
		Cline(),       // cline.go
		Gemini(),      // gemini.go
		Hermes(),      // hermes.go
		KiloCode(),    // opencode.go
		KiloCodeSSE(), // opencode.go
		KimiCode(),    // kimicode.go
		KimiWeb(),     // kimiweb.go
		OpenCode(),    // opencode.go
		OpenCodeSSE(), // opencode.go
		OpenClaw(),    // openclaw.go
		OpenHands(),   // openhands.go
		Pi(),          // pi.go
		Qwen(),        // qwen.go
		VSCode(),      // vscode.go
		VSCodeOtel(),  // vscodeotel.go
	}
	sort.Slice(vs, func(i, j int) bool { return vs[i].Name < vs[j].Name })
	return vs
}

// Lookup returns the table named name.
func Lookup(name string) (Vendor, bool) {
	for _, v := range Vendors() {
		if v.Name == name {
			return v, true
		}
	}
	return Vendor{}, false
}

// Names lists the known table names, sorted.
func Names() []string {
	var ns []string
	for _, v := range Vendors() {
		ns = append(ns, v.Name)
	}
	return ns
}
