// Command realagents is the real-agent harness behind `make real`:
//
//	realagents record [-agent NAME] [-scenario NAME]   install, drive, record fixtures, replay
//	realagents replay [-agent NAME]                     replay the committed fixtures
//	realagents hook AGENT [ARGS...]                     the recorder registered as the hook command
//	realagents forward AGENT [ARGS...]                  the recorder in place of aep-hook forward (plugins)
//	realagents forward pi --hold                        the recorder of a held pi tool_call, as a hook firing
//	realagents mcp                                      a stdio MCP server: an echo tool, and a deploy tool that elicits a form (scenarios)
//
// It prints, per agent, "scenarios passed/total".
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"

	"github.com/aep-hook/aep-hook/harness/realagents"
	"github.com/aep-hook/aep-hook/harness/realagents/a2atape"
	"github.com/aep-hook/aep-hook/harness/realagents/openclawtape"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == "hook" {
		os.Exit(realagents.RecordHook(os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
	}
	if len(os.Args) > 1 && os.Args[1] == "mcp" {
		os.Exit(realagents.ServeMCP(os.Stdin, os.Stdout))
	}
	if len(os.Args) > 1 && os.Args[1] == "forward" {
		if realagents.Held(os.Args[2:]) {
			os.Exit(realagents.RecordHeld(os.Args[2:], os.Stdin, os.Stdout, os.Stderr))
		}
		os.Exit(realagents.RecordForward(os.Args[2:], os.Stdin, os.Stderr))
	}
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: realagents record|replay|hook ...")
		os.Exit(2)
	}
	fs := flag.NewFlagSet(os.Args[1], flag.ExitOnError)
	agent := fs.String("agent", "", "only this agent")
	scenario := fs.String("scenario", "", "only this scenario")
	root := fs.String("root", ".", "the repository root")
	bin := fs.String("bin", "", "the aep-hook binary (default: build one into the cache)")
	latest := fs.Bool("latest", false, "record at the newest published versions (not the pins) into a folder of their own, print what changed in the payloads and the truth checks")
	fs.Parse(os.Args[2:])
	h := &realagents.Harness{Cache: realagents.DefaultCache(), Fixtures: filepath.Join(*root, "fixtures"), Log: os.Stdout}
	self, err := os.Executable()
	if err != nil {
		fail(err)
	}
	h.Self = self
	if h.AEPHook, err = realagents.Binary(*root, *bin, h.Cache, "aep-hook"); err != nil {
		fail(err)
	}
	a2a := (&a2atape.Recording{Cache: h.Cache, AEPHook: h.AEPHook, Fixtures: h.Fixtures, Log: os.Stdout}).Harness()
	oc := (&openclawtape.Recording{Cache: h.Cache, AEPHook: h.AEPHook, Fixtures: h.Fixtures, Log: os.Stdout}).Harness()
	// A scenario that fails to record keeps its earlier recording (it is
	// said, and fails the run); every recording is replayed either way, so
	// the per-agent figures are always printed.
	recorded := true
	record := func(err error) {
		if err != nil {
			fmt.Fprintln(os.Stderr, "realagents:", err)
			recorded = false
		}
	}
	if os.Args[1] == "record" && *latest {
		// The drift check: the committed fixtures and the pins stay.
		for _, d := range h.RecordLatest(*agent, *scenario) {
			if len(d.Failed) > 0 || d.Passed < d.Total {
				recorded = false
			}
		}
		if !recorded {
			os.Exit(1)
		}
		return
	}
	switch os.Args[1] {
	case "record":
		if *agent == "" || *agent == "openclaw" {
			// The OpenClaw gateway records tapes of its own (openclawtape).
			record(oc.RecordAll(*scenario))
			if *agent == "openclaw" {
				if !oc.ReplayAll() || !recorded {
					os.Exit(1)
				}
				return
			}
		}
		if *agent == "" || *agent == "a2a" {
			// The A2A channels record tapes of their own (a2atape).
			record(a2a.RecordAll(*scenario))
			if *agent == "a2a" {
				if !a2a.ReplayAll() || !recorded {
					os.Exit(1)
				}
				return
			}
		}
		record(h.RecordAll(*agent, *scenario))
		fallthrough
	case "replay":
		ok := true
		if *agent == "" || *agent == "a2a" {
			ok = a2a.ReplayAll()
		}
		if *agent == "" || *agent == "openclaw" {
			ok = oc.ReplayAll() && ok
		}
		if *agent == "a2a" || *agent == "openclaw" {
			if !ok || !recorded {
				os.Exit(1)
			}
			return
		}
		if !h.ReplayAll(*agent, *scenario) || !ok || !recorded {
			os.Exit(1)
		}
	default:
		fail(fmt.Errorf("unknown command %q", os.Args[1]))
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "realagents:", err)
	os.Exit(1)
}
