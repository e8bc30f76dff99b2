package main

import (
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"time"

	"github.com/aep-hook/aep-hook/harness/browser"
)

// consoleRounds is how many first renders of each fleet the console
// figure takes the median of, interleaved.
const consoleRounds = 5

const (
	consoleToken = "bench-console-consumer-0123456789"
	consoleEmit  = "bench-console-emitter-0123456789"
)

// consoleFigures measures the fleet console's first render in headless
// Chromium: 500 sessions and 100,000 events on a real relay, navigation
// start to the first render of the whole fleet, beside the same page over
// an empty relay and the same replay fetched by a bare page that only
// counts it (both from this run), the median of consoleRounds of each,
// interleaved.
func consoleFigures(bin, tmp string) ([]goal, error) {
	fmt.Println()
	fmt.Printf("== console (500 sessions, 100,000 events; headless %s; baselines: the same page over an empty relay, and the same replay to a bare page; median of %d, interleaved; load average %s)\n",
		browser.ExecPath(), consoleRounds, loadAverage())
	const name = "fleet console first render, 500 sessions / 100,000 events"
	if browser.ExecPath() == "" {
		fmt.Println("chromium is not installed: not measured")
		return []goal{{name: name, missing: true}}, nil
	}
	tokens := filepath.Join(tmp, "console-tokens")
	lines := fmt.Sprintf(`{"token":%q,"identity":"consumer:bench","scopes":["subscribe:*","read:*"]}`+"\n"+
		`{"token":%q,"identity":"emitter:%s/%s","scopes":["write:%s"]}`+"\n",
		consoleToken, consoleEmit, browser.FleetHost, browser.FleetAgent, browser.FleetAgent)
	if err := os.WriteFile(tokens, []byte(lines), 0o600); err != nil {
		return nil, err
	}
	relays := map[string]*relayProc{}
	for _, which := range []string{"empty", "fleet"} {
		p, err := startRelay(bin, filepath.Join(tmp, "home-console-"+which), "--tokens", tokens, "--no-follow")
		if err != nil {
			return nil, err
		}
		defer p.stop()
		relays[which] = p
	}
	batches, _ := browser.Fleet(500, 200)
	for _, b := range batches {
		if err := browser.Post(relays["fleet"].base, consoleEmit, b); err != nil {
			return nil, err
		}
	}
	ctx, stop, err := browser.Launch(filepath.Join(tmp, "chromium-profile"), 10*time.Minute)
	if err != nil {
		return nil, err
	}
	defer stop()
	var fleet, empty, bare []float64
	for range consoleRounds {
		e, err := browser.FirstRender(ctx, relays["empty"].base, consoleToken)
		if err != nil {
			return nil, err
		}
		f, err := browser.FirstRender(ctx, relays["fleet"].base, consoleToken)
		if err != nil {
			return nil, err
		}
		if int(f["completeRows"]) != 500 {
			return nil, fmt.Errorf("the console's first render listed %v sessions, not 500", f["completeRows"])
		}
		took, n, err := browser.BareFetch(ctx, relays["fleet"].base)
		if err != nil {
			return nil, err
		}
		if n != 100000 {
			return nil, fmt.Errorf("the bare page counted %d events, not 100,000", n)
		}
		fleet, empty, bare = append(fleet, f["fleetComplete"]), append(empty, e["fleetComplete"]), append(bare, took)
	}
	fm, em, bm := median(fleet), median(empty), median(bare)
	fmt.Printf("%-46s %10s %10s %10s %8s %8s\n", "figure", "fleet", "empty", "bare", "x empty", "x bare")
	fmt.Printf("%-46s %8.0fms %8.0fms %8.0fms %7.1fx %7.1fx\n", "navigation start -> the whole fleet rendered", fm, em, bm, fm/em, fm/bm)
	return []goal{{name: name, value: fm, limit: 1000, below: true, unit: "ms"}}, nil
}

func median(v []float64) float64 {
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	return s[len(s)/2]
}

// runConsole is `bench -console`: the console figure alone.
func runConsole(bin string) error {
	bin, err := filepath.Abs(bin)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "aep-bench-console-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	goals, err := consoleFigures(bin, tmp)
	printGoals(goals)
	return err
}
