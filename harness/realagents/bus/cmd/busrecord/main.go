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
	"github.com/tidwall/gjson"

	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/aep-hook/aep-hook/harness/realagents"
	"github.com/aep-hook/aep-hook/harness/realagents/bus"
	"github.com/aep-hook/aep-hook/harness/realagents/drift"
)

// tapeSurface is what the recorded tapes of agent under fixtures show of
// its event stream: every SSE event's type and fields.
func tapeSurface(fixtures, agent string) *drift.Surface {
	s := drift.New()
	files, _ := filepath.Glob(filepath.Join(fixtures, agent, "recorded", "*", "stream-*.sse"))
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			data, ok := strings.CutPrefix(line, "data: ")
			if !ok {
				continue
			}
			typ := gjson.Get(data, "payload.type").String()
			if typ == "" {
				typ = gjson.Get(data, "type").String()
			}
			s.Moment(typ, []byte(data))
		}
	}
	return s
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "forward" {
		os.Exit(realagents.RecordForward(os.Args[2:], os.Stdin, os.Stderr))
	}
	agent := flag.String("agent", "", "only this agent (opencode, kilocode)")
	scenario := flag.String("scenario", "", "only this scenario")
	root := flag.String("root", ".", "the repository root")
	bin := flag.String("bin", "", "the aep-hook binary (default: build one into the cache for this checkout)")
	latest := flag.Bool("latest", false, "record at the newest published versions into a folder of their own and print what changed in the events against the pinned tapes")
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
	pinnedFixtures := h.Fixtures
	if *latest {
		tmp, err := os.MkdirTemp("", "aep-latest-bus-")
		if err != nil {
			fmt.Fprintln(os.Stderr, "busrecord:", err)
			os.Exit(1)
		}
		defer os.RemoveAll(tmp)
		h.Fixtures = filepath.Join(tmp, "fixtures")
	}
	bad := 0
	var summary []realagents.Drift
	for _, srv := range bus.Servers() {
		if *agent != "" && *agent != srv.Agent {
			continue
		}
		var d *realagents.Drift
		if *latest {
			summary = append(summary, realagents.Drift{Agent: srv.Agent, Package: srv.Package, Pin: srv.Version})
			d = &summary[len(summary)-1]
			newest, err := realagents.Newest(srv.Package)
			switch {
			case err != nil:
				d.Skipped = err.Error()
			case newest == srv.Version:
				d.Newest, d.Skipped = newest, "the pin is the newest published version"
			default:
				d.Newest = newest
				if err := h.Install(&realagents.Agent{Name: srv.Agent, Package: srv.Package, Version: newest, Bin: srv.Bin}); err != nil {
					d.Skipped = fmt.Sprintf("%s@%s cannot be installed (%v): the pin stays", srv.Package, newest, err)
				}
				srv.Version = newest
			}
			if d.Skipped != "" {
				continue
			}
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
		if d != nil {
			d.Passed, d.Total = passed, total
			fmt.Printf("drift %s %s → %s:\n", srv.Agent, d.Pin, d.Newest)
			drift.Compare(tapeSurface(pinnedFixtures, srv.Agent), tapeSurface(h.Fixtures, srv.Agent)).Write(os.Stdout, "  ")
		}
	}
	if *latest {
		realagents.WriteDrift(os.Stdout, summary)
	}
	if bad > 0 {
		os.Exit(1)
	}
}
