// Command realtees is the tees' real-peer harness behind `make real`:
//
//	realtees record [-peer NAME] [-scenario NAME]   install, drive, record transcripts, replay
//	realtees record -latest ...                     the ACP peers at their newest versions: drift report
//	realtees replay [-peer NAME] [-scenario NAME]   replay the committed transcripts
//	realtees peer ...                               a scripted peer of a replay (internal)
//
// It prints "real: tees scenarios passed/total".
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/aep-hook/aep-hook/harness/realagents"
	"github.com/aep-hook/aep-hook/harness/realagents/tees"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "peer" {
		os.Exit(tees.RunPeer(os.Args[2:]))
	}
	if len(os.Args) < 2 || (os.Args[1] != "record" && os.Args[1] != "replay") {
		fmt.Fprintln(os.Stderr, "usage: realtees record|replay [-peer NAME] [-scenario NAME] [-root DIR] [-bin AEP-HOOK]")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	peer := fs.String("peer", "", "only these peers, comma-separated (qwen-code-0.24.4, gemini-cli, claude-agent-acp, opencode, kimi-code, acp-example-agent, agui, ...)")
	scenario := fs.String("scenario", "", "only these scenarios, comma-separated")
	root := fs.String("root", ".", "the repository root")
	bin := fs.String("bin", "", "the aep-hook binary (default: build one into the cache)")
	latest := fs.Bool("latest", false, "record the ACP peers at their newest published versions (into a temporary folder) and print what changed against the pinned recordings")
	fs.Parse(os.Args[2:])
	self, err := os.Executable()
	if err != nil {
		fail(err)
	}
	h := &tees.Harness{Cache: realagents.DefaultCache(), Fixtures: filepath.Join(*root, "fixtures"), Self: []string{self, "peer"}, Log: os.Stdout}
	if h.AEPHook, err = realagents.Binary(*root, *bin, h.Cache, "aep-hook-tees"); err != nil {
		fail(err)
	}
	if *latest {
		dir, err := os.MkdirTemp("", "aep-tees-latest-")
		if err != nil {
			fail(err)
		}
		if !h.Latest(*peer, *scenario, dir) {
			os.Exit(1)
		}
		return
	}
	// A scenario that fails to record keeps its earlier recording; every
	// recording is replayed either way.
	if os.Args[1] == "record" {
		if err := h.RecordAll(*peer, *scenario); err != nil {
			fmt.Fprintln(os.Stderr, "realtees:", err)
		}
	}
	if !h.ReplayAll(*peer, *scenario) {
		os.Exit(1)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "realtees:", err)
	os.Exit(1)
}
