// Command busrecord records the OpenCode and Kilo Code server sessions
// (`make real` runs it): it installs each pinned server from the npm
// registry, drives every scenario against a fake model through the real
// stream bridge, writes the tapes under fixtures/<agent>/recorded/ and
// replays each into the truth checker. Each server also runs aep-hook's
// forwarder plugin, placed as `aep-hook install` places it, forwarding to
// this binary (`busrecord forward VENDOR`: the harness recorder, which
// pipes on into aep-hook forward); its lines are kept beside the tape.
//
//	busrecord [-agent opencode|kilocode] [-scenario NAME] [-root DIR] [-bin AEP-HOOK]
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/aep-hook/aep-hook/harness/realagents"
	"github.com/aep-hook/aep-hook/harness/realagents/bus"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "forward" {
		os.Exit(realagents.RecordForward(os.Args[2:], os.Stdin, os.Stderr))
	}
	agent := flag.String("agent", "", "only this agent (opencode, kilocode)")
	scenario := flag.String("scenario", "", "only this scenario")
	root := flag.String("root", ".", "the repository root")
	bin := flag.String("bin", "", "the aep-hook binary (default: build one into the cache for this checkout)")
	flag.Parse()
	h := &realagents.Harness{Cache: realagents.DefaultCache(), Fixtures: filepath.Join(*root, "fixtures"), Log: os.Stdout}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintln(os.Stderr, "busrecord:", err)
		os.Exit(1)
	}
	h.Self = self
	// The plugin's forwarders and the replays run this tree's aep-hook
	// (Binary keeps one per checkout).
	if h.AEPHook, err = realagents.Binary(*root, *bin, h.Cache, "aep-hook"); err != nil {
		fmt.Fprintln(os.Stderr, "busrecord:", err)
		os.Exit(1)
	}
	bad := 0
	for _, srv := range bus.Servers() {
		if *agent != "" && *agent != srv.Agent {
			continue
		}
		passed, total := 0, 0
		for _, sc := range srv.Scenarios {
			if *scenario != "" && *scenario != sc.Name {
				continue
			}
			total++
			problems, err := bus.Record(h, srv, sc)
			switch {
			case err != nil:
				fmt.Printf("%s/%s: %v\n", srv.Agent, sc.Name, err)
			case len(problems) > 0:
				fmt.Printf("%s/%s: untrue record:\n  %s\n", srv.Agent, sc.Name, strings.Join(problems, "\n  "))
			default:
				passed++
			}
		}
		fmt.Printf("real: %s scenarios %d/%d\n", srv.Agent, passed, total)
		bad += total - passed
	}
	if bad > 0 {
		os.Exit(1)
	}
}
