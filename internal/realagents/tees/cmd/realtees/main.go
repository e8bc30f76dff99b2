// Command realtees is the tees' real-peer harness behind `make real`:
//
//	realtees record [-peer NAME] [-scenario NAME]   install, drive, record transcripts, replay
//	realtees replay [-peer NAME] [-scenario NAME]   replay the committed transcripts
//	realtees peer ...                               a scripted peer of a replay (internal)
//
// It prints "real: tees scenarios passed/total".
package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/aep-hook/aep-hook/internal/realagents"
	"github.com/aep-hook/aep-hook/internal/realagents/tees"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "peer" {
		os.Exit(tees.RunPeer(os.Args[2:]))
	}
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: realtees record|replay ...")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	peer := fs.String("peer", "", "only this peer (qwen-code, acp-example-agent, agui)")
	scenario := fs.String("scenario", "", "only this scenario")
	root := fs.String("root", ".", "the repository root")
	bin := fs.String("bin", "", "the aep-hook binary (default: build one into the cache)")
	fs.Parse(os.Args[2:])
	self, err := os.Executable()
	if err != nil {
		fail(err)
	}
	h := &tees.Harness{Cache: realagents.DefaultCache(), Fixtures: filepath.Join(*root, "fixtures"), AEPHook: *bin,
		Self: []string{self, "peer"}, Log: os.Stdout}
	if h.AEPHook == "" {
		h.AEPHook = filepath.Join(h.Cache, "bin", "aep-hook-tees")
		cmd := exec.Command("go", "build", "-o", h.AEPHook, "./cmd/aep-hook")
		cmd.Dir, cmd.Stdout, cmd.Stderr = *root, os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			fail(fmt.Errorf("build aep-hook: %w", err))
		}
	}
	switch os.Args[1] {
	case "record":
		if err := h.RecordAll(*peer, *scenario); err != nil {
			fmt.Fprintln(os.Stderr, "realtees:", err)
		}
		fallthrough
	case "replay":
		if !h.ReplayAll(*peer, *scenario) {
			os.Exit(1)
		}
	default:
		fail(fmt.Errorf("unknown command %q", os.Args[1]))
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "realtees:", err)
	os.Exit(1)
}
