package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
)

// The OTLP receiver's goal: the receiver end to end (the handler into the
// on-disk emitter) against pdata's decoding of the same requests alone,
// each in a process of its own, by the process's CPU time. The two used to
// alternate in blocks inside one process, and a collector shared by both
// sides bills a cycle to whichever side is running when it does its work,
// not to the side whose garbage started it: a change that made only the
// receiver's garbage smaller made pdata's unchanged decoding cheaper there.
// Apart, each side pays for its own garbage, as it would in a process that
// did only that. The processes alternate pair by pair, so both see the same
// machine, and the figure is the median of the pairs' ratios. The old
// one-process figure is printed beside it for comparison.

// otlpPairs is how many pdata / receiver process pairs make the figure.
const otlpPairs = 7

// otlpFigures builds the otlp package's test binary into tmp and measures
// the goal.
func otlpFigures(tmp string) goal {
	g := goal{name: "OTLP receiver end to end / pdata decoding alone (CPU time)", limit: 0.5, missing: true}
	const count = "200x"
	fmt.Printf("\n== %s: go test -bench ReceiverProtoAlone -benchtime %s ./adapters/otlp/, %d pairs\n", g.name, count, otlpPairs)
	fmt.Println("   64 distinct OTLP/HTTP protobuf export requests of 100 Codex records each: pdata's ProtoUnmarshaler on them in one process,")
	fmt.Println("   the receiver's handler into the on-disk emitter (lock, state, JSONL) in the next, alternating; each side's figure is its")
	fmt.Println("   process's CPU time per request (its collector's included) from a collected heap; figure = median over pairs of pdata / receiver")
	test := filepath.Join(tmp, "otlp.test")
	if out, err := exec.Command("go", "test", "-c", "-o", test, "./adapters/otlp/").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "bench: build the otlp test binary: %v\n%s", err, out)
		return g
	}
	side := func(name string) (float64, error) {
		cmd := exec.Command(test, "-test.run", "^$", "-test.bench", "^BenchmarkReceiverProtoAlone$/^"+name+"$", "-test.benchtime", count)
		cmd.Env = append(os.Environ(), "AEP_BENCH_GOALS=1")
		cmd.Dir = "adapters/otlp" // where go test would run it
		out, err := cmd.Output()
		if err != nil {
			return 0, fmt.Errorf("%s side: %w", name, err)
		}
		if v, ok := metric(string(out), "cpu-µs/req"); ok {
			return v, nil
		}
		return 0, fmt.Errorf("%s side: no cpu-µs/req in %q", name, out)
	}
	var ratios, dec, recv []float64
	for range otlpPairs {
		d, err := side("pdata")
		if err == nil {
			var r float64
			if r, err = side("receiver"); err == nil {
				ratios, dec, recv = append(ratios, d/r), append(dec, d), append(recv, r)
			}
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			return g
		}
	}
	g.value, g.missing = median(ratios), false
	g.base = fmt.Sprintf("pdata %.0f µs/req, receiver %.0f µs/req (medians of %d alternating processes each)", median(dec), median(recv), otlpPairs)
	for _, shared := range goalBenches("ReceiverProtoRatio") {
		if !shared.missing {
			g.base += fmt.Sprintf("; in one process, alternating blocks of 8: %.3g (%s)", shared.value, strings.TrimSpace(shared.base))
		}
	}
	return g
}

// metric is the value before unit in a benchmark's output line.
func metric(out, unit string) (float64, bool) {
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		for i := 1; i < len(f); i++ {
			if f[i] == unit {
				if v, err := strconv.ParseFloat(f[i-1], 64); err == nil {
					return v, true
				}
			}
		}
	}
	return 0, false
}
