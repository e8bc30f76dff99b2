package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/aep-hook/aep-hook/harness/payloads"
)

// structuredFigures runs the 16 MiB structured PostToolUse of each vendor
// at the default hook deadline (750 ms), interleaved with the same hook on
// a 2 KB payload (the baseline), and prints the latencies, their ratio, and
// how many moments landed, with their digest or naming it missing.
func structuredFigures(bin, tmp string, runs int) error {
	fmt.Println()
	fmt.Println("== 16 MiB structured PostToolUse at the default deadline (baseline: the same hook on a 2 KB payload)")
	fmt.Printf("%-22s %10s %10s %10s %10s %8s %8s  %s\n", "vendor", "p50", "p99", "2 KB p50", "2 KB p99", "p50 x", "p99 x", "landed (digest / digest missing)")
	out := payloads.StructuredOutput()
	for _, agent := range payloads.StructuredAgents {
		small := payloads.StructuredPostToolUse(agent, "small", `{"stdout":"`+strings.Repeat("x", 1800)+`"}`)
		home := filepath.Join(tmp, "home-structured-"+agent)
		var big, base []time.Duration
		landed, digest := 0, 0
		for i := range runs {
			session := fmt.Sprintf("big-%d", i)
			for _, c := range []struct {
				in  string
				out *[]time.Duration
			}{{payloads.StructuredPostToolUse(agent, session, out), &big}, {small, &base}} {
				cmd := exec.Command(bin, agent)
				cmd.Env = append(os.Environ(), "AEP_HOME="+home, "AEP_HOOK_DEADLINE=750ms")
				cmd.Stdin = strings.NewReader(c.in)
				start := time.Now()
				if err := cmd.Run(); err != nil {
					return fmt.Errorf("%s: %w", agent, err)
				}
				*c.out = append(*c.out, time.Since(start))
			}
			b, _ := os.ReadFile(filepath.Join(home, "logs", agent, session+".jsonl"))
			if bytes.Contains(b, []byte(`"type":"tool.completed"`)) {
				landed++
				if bytes.Contains(b, []byte(`"result_digest"`)) {
					digest++
				}
			}
		}
		slices.Sort(big)
		slices.Sort(base)
		fmt.Printf("%-22s %10s %10s %10s %10s %7.2fx %7.2fx  %d/%d (%d / %d)\n", agent, round(pct(big, 0.5)), round(pct(big, 0.99)),
			round(pct(base, 0.5)), round(pct(base, 0.99)), float64(pct(big, 0.5))/float64(pct(base, 0.5)),
			float64(pct(big, 0.99))/float64(pct(base, 0.99)), landed, runs, digest, landed-digest)
	}
	fmt.Println("(wall times on this machine under whatever load it carries; compare within the run)")
	return nil
}
