// Command aep-hook turns what coding agents do into Agent Event Protocol
// (AEP 0.1) events. It is one multi-call binary: registered as an agent's
// hook command (`aep-hook claude-code`, or a link named `aep-claude-code`), it
// maps each hook firing through the vendor's AEP-0002 Annex A table, applies
// the capture ceiling and redaction, and appends the events to
// ~/.aep/logs/<agent>/<session>.jsonl, replying to the agent neutrally.
// Other verbs dry-run mappings, redact and down-level text and events, serve
// the record (`aep-hook relay`), and show the tool's own health.
package main

import (
	"os"
)

func main() {
	// The installed aep-hook is the hook-only build (cmd/aep-hook/hookonly),
	// which starts this full binary for every other verb and names itself
	// here: that path, not this one, is what install registers. Taken out of
	// the environment so nothing this process starts inherits it.
	self := os.Getenv(selfEnv)
	os.Unsetenv(selfEnv)
	os.Exit(run(os.Args, Streams{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, OnHook: holdSignals, Self: self}, os.Getenv))
}

// selfEnv names the binary the user runs when this one was started by it.
const selfEnv = "AEP_HOOK_SELF"
