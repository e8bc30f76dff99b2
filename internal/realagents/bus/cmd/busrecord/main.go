// Command busrecord records the OpenCode and Kilo Code server sessions
// (`make real` runs it): it installs each pinned server from the npm
// registry, drives every scenario against a fake model through the real
// stream bridge, writes the tapes under fixtures/<agent>/recorded/ and
// replays each into the truth checker.
//
//	busrecord [-agent opencode|kilocode] [-scenario NAME] [-root DIR]
package main

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/aep-hook/aep-hook/internal/realagents"
	"github.com/aep-hook/aep-hook/internal/realagents/bus"
)

func main() {
	agent := flag.String("agent", "", "only this agent (opencode, kilocode)")
	scenario := flag.String("scenario", "", "only this scenario")
	root := flag.String("root", ".", "the repository root")
	flag.Parse()
	h := &realagents.Harness{Cache: realagents.DefaultCache(), Fixtures: filepath.Join(*root, "fixtures"), Log: os.Stdout}
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
