// Command bench is `make bench`: it prints every figure beside a baseline
// measured in the same run, and the ratio, because ratios are stable on a
// noisy machine and absolute times are not.
//
//  1. Whole-process hook latency per hook vendor (p50/p99 over interleaved
//     runs) against the floor of any Go hook: a minimal program that reads
//     stdin and writes {}. `aep-hook version` beside it shows what the
//     binary's own start-up adds to every hook.
//  2. The ACP tee as an editor sees it: the binary around cat against cat
//     alone (acp.go says how), and its drops at 5,000 messages/s.
//  3. Every Go benchmark BenchmarkFoo with a sibling BenchmarkFooBaseline
//     (and the named pairs below), side by side.
//  4. The speed goals, each a ratio against its baseline from the same run:
//     the hook p50 against the floor (worst vendor), version against the
//     floor, the OTLP receiver against pdata decoding, the ACP tee against
//     a plain pipe on a burst, the tee's drops at 5,000 messages/s and what
//     it adds to a message's round trip. The goal benchmarks run apart,
//     with counts of their own (AEP_BENCH_GOALS=1 enables them).
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/aep-hook/aep-hook/harness/pins"
	"github.com/aep-hook/aep-hook/mapping"
)

// namedPairs are benchmark pairs whose baseline is not named FooBaseline.
var namedPairs = map[string]string{
	"PipelineMixed1MB": "SinglePassMixed1MB",
}

const floorSrc = `package main

import (
	"io"
	"os"
)

func main() {
	io.ReadAll(os.Stdin)
	os.Stdout.Write([]byte("{}"))
}
`

func main() {
	bin := flag.String("bin", "bin/aep-hook", "the aep-hook binary to measure")
	n := flag.Int("n", 150, "runs per command and vendor")
	benchtime := flag.String("benchtime", "300ms", "go test -benchtime")
	skipGo := flag.Bool("no-go-bench", false, "skip the go test benchmarks")
	relayOnly := flag.Bool("relay", false, "only the relay figures")
	notifyOnly := flag.Bool("notify", false, "only the notify figures")
	consoleOnly := flag.Bool("console", false, "only the console's first-render figure")
	only := flag.String("only", "", "measure only this part: hooks, acp, otlp or control (the goals' parts, for working on one)")
	pairs := flag.Int("acp-pairs", 21, "ACP tee/pipe pairs (the median of 9 moved by about 0.15 between runs on a loaded 2-core machine)")
	flag.Parse()
	if *notifyOnly {
		if err := runNotify(*bin); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if *consoleOnly {
		if err := runConsole(*bin); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if *relayOnly {
		if err := runRelay(*bin); err != nil {
			fmt.Fprintln(os.Stderr, "bench:", err)
			os.Exit(1)
		}
		return
	}
	if err := run(*bin, *n, *benchtime, *skipGo, *only, *pairs); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run(bin string, n int, benchtime string, skipGo bool, only string, pairs int) error {
	bin, err := filepath.Abs(bin)
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "aep-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	floor := filepath.Join(tmp, "floor")
	os.WriteFile(filepath.Join(tmp, "floor.go"), []byte(floorSrc), 0o600)
	if out, err := exec.Command("go", "build", "-o", floor, filepath.Join(tmp, "floor.go")).CombinedOutput(); err != nil {
		return fmt.Errorf("build floor: %v\n%s", err, out)
	}
	// Both measured as installed: the linker writes its output through a
	// memory map, which leaves the file in the page cache in pages the
	// kernel maps one at a time, where an installed copy (make install's
	// cp, go install, or a read from disk) sits in large folios. On Linux
	// 6.x that alone made the hook-only build's every process about a
	// fifth slower, the floor about a tenth.
	if floor, err = installCopy(floor, filepath.Join(tmp, "installed")); err != nil {
		return err
	}
	shown := bin
	if bin, err = installCopy(bin, filepath.Join(tmp, "installed")); err != nil {
		return err
	}
	if only == "acp" {
		printGoals(acpFigures(bin, tmp, pairs))
		return nil
	}
	if only == "otlp" {
		printGoals([]goal{otlpFigures(tmp)})
		return nil
	}
	if only == "control" {
		goals, err := controlFigures(bin, tmp, n)
		if err != nil {
			return err
		}
		printGoals(append(goals, goalBenches("ControlNoRelayAdded")...))
		return nil
	}
	fmt.Printf("== hook process latency: %s (%s), one process per call, %d runs of each command, interleaved\n", shown, binKind(bin), n)
	fmt.Println("   round-robin with the floor (a Go program that reads stdin and writes {}, built by this run with go build), both run from copies made as an")
	fmt.Println("   install makes them (not the linker's output files, slower to map); p50 and p99 beside the floor's;")
	fmt.Println("   each hook gets its vendor's pinned tool-request payload on stdin (Codex a 2 KB PreToolUse); AEP_HOME is a folder made for this run")
	fmt.Printf("%-22s %10s %10s %10s %10s %8s %8s\n", "command", "p50", "p99", "floor p50", "floor p99", "p50 x", "p99 x")
	home := filepath.Join(tmp, "home")
	payloads := vendorPayloads()
	names := make([]string, 0, len(payloads))
	for name := range payloads {
		names = append(names, name)
	}
	sort.Strings(names)
	first := true
	worst, worstName, versionX := 0.0, "", 0.0
	var worstBase, versionBase string
	for _, name := range names {
		p := payloads[name]
		hook := []string{name}
		if p.hook != "" {
			hook = append(hook, p.hook)
		}
		cmds := []command{
			{name: "floor", argv: []string{floor}, in: p.input},
			{name: name, argv: append([]string{bin}, hook...), in: p.input},
		}
		if first {
			cmds = append(cmds, command{name: "version", argv: []string{bin, "version"}})
		}
		res := interleave(cmds, n, home)
		fl := res["floor"]
		if first {
			v := res["version"]
			versionX = printRow("aep-hook version", v, fl)
			versionBase = fmt.Sprintf("version %s, floor %s (p50, %d interleaved runs each)", round(pct(v, 0.5)), round(pct(fl, 0.5)), n)
			first = false
		}
		if x := printRow("hook "+name, res[name], fl); x > worst {
			worst, worstName = x, name
			worstBase = fmt.Sprintf("hook %s, floor %s (p50, %d interleaved runs each)", round(pct(res[name], 0.5)), round(pct(fl, 0.5)), n)
		}
	}
	goals := []goal{
		{name: "hook p50 / floor p50, worst vendor (" + worstName + ")", value: worst, limit: 1.5, below: true, unit: "x", stretch: 1.2, base: worstBase},
		{name: "aep-hook version p50 / floor p50", value: versionX, limit: 1.2, below: true, unit: "x", base: versionBase},
	}
	if only == "hooks" {
		printGoals(goals)
		return nil
	}
	if err := redactFigures(bin, floor, tmp, n); err != nil {
		return err
	}
	if err := robustFigures(bin, tmp, n); err != nil {
		return err
	}
	goals = append(goals, acpFigures(bin, tmp, pairs)...)
	rg, err := relayFigures(bin, tmp)
	if err != nil {
		return err
	}
	goals = append(goals, rg...)
	ctlGoals, err := controlFigures(bin, tmp, n)
	if err != nil {
		return err
	}
	goals = append(goals, ctlGoals...)
	ng, err := notifyFigures(bin, tmp)
	if err != nil {
		return err
	}
	goals = append(goals, ng...)
	cg, err := consoleFigures(bin, tmp)
	if err != nil {
		return err
	}
	goals = append(goals, cg...)
	if !skipGo {
		err = goBench(benchtime) // reported after the goals
		goals = append(goals, otlpFigures(tmp))
		goals = append(goals, goalBenches()...)
	}
	printGoals(goals)
	return err
}

// printGoals prints each goal, its figure and whether it is met, with the
// machine's load (the figures are ratios against baselines from the same
// run, but a loaded machine still widens them).
func printGoals(goals []goal) {
	fmt.Println()
	fmt.Printf("== goals (each figure against its baseline from this run; load average %s)\n", loadAverage())
	for _, g := range goals {
		g.print()
	}
}

// loadAverage is /proc/loadavg's first three fields, "unknown" elsewhere.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) >= 3 {
		return strings.Join(f[:3], " ")
	}
	return "unknown"
}

// installCopy copies the executable src (and an aep-hook-full beside it,
// which a hook-only build without the full binary inside runs) into dir by
// reading and writing, as an install does, and returns the copy's path.
func installCopy(src, dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	dst := filepath.Join(dir, filepath.Base(src))
	if err := copyFile(src, dst); err != nil {
		return "", fmt.Errorf("copy %s to measure it as installed: %w", src, err)
	}
	if full := src + "-full"; fileExists(full) {
		if err := copyFile(full, dst+"-full"); err != nil {
			return "", fmt.Errorf("copy %s: %w", full, err)
		}
	}
	return dst, nil
}

func copyFile(src, dst string) error {
	b, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	return os.WriteFile(dst, b, 0o700)
}

func fileExists(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// binKind says which build bin is: the hook-only build make build
// installs (with the full binary inside) or the full binary alone.
func binKind(bin string) string {
	out, err := exec.Command(bin, "version").Output()
	if err != nil {
		return "unknown build"
	}
	if full, err := os.Stat(bin + "-full"); err == nil && full.Size() > 0 {
		return "the hook-only build make build installs, the full binary inside; " + strings.TrimSpace(string(out))
	}
	return strings.TrimSpace(string(out))
}

type command struct {
	name string
	argv []string
	in   []byte
	env  []string // added to the run's environment
}

// interleave runs each command n times, round-robin, and returns sorted
// durations per command.
func interleave(cmds []command, n int, home string) map[string][]time.Duration {
	out := map[string][]time.Duration{}
	env := append(os.Environ(), "AEP_HOME="+home)
	for i := 0; i < n; i++ {
		for _, c := range cmds {
			cmd := exec.Command(c.argv[0], c.argv[1:]...)
			cmd.Env = slices.Concat(env, c.env)
			cmd.Stdin = bytes.NewReader(c.in)
			start := time.Now()
			if err := cmd.Run(); err != nil {
				fmt.Fprintf(os.Stderr, "bench: %s: %v\n", c.name, err)
			}
			out[c.name] = append(out[c.name], time.Since(start))
		}
	}
	for _, d := range out {
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	}
	return out
}

func pct(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	return d[min(len(d)-1, int(float64(len(d))*p))]
}

// printRow prints one command's row and returns its p50 ratio.
func printRow(name string, d, floor []time.Duration) float64 {
	p50, p99, f50, f99 := pct(d, 0.5), pct(d, 0.99), pct(floor, 0.5), pct(floor, 0.99)
	x := float64(p50) / float64(f50)
	fmt.Printf("%-22s %10s %10s %10s %10s %7.2fx %7.2fx\n", name, round(p50), round(p99), round(f50), round(f99),
		x, float64(p99)/float64(f99))
	return x
}

// goal is one speed goal and the figure measured for it.
type goal struct {
	name         string
	value, limit float64
	below        bool // met when value <= limit (else value >= limit)
	unit         string
	missing      bool
	stretch      float64 // a stretch limit, reported beside the goal when set
	// base is the figure and its baseline as measured in this run, printed
	// under the goal ("hook 1.9 ms, floor 1.3 ms (p50, ...)").
	base string
}

func (g goal) print() {
	if g.missing {
		fmt.Printf("%-66s %10s   (not measured)\n", g.name, "-")
		return
	}
	met := g.value >= g.limit
	op := ">="
	if g.below {
		met, op = g.value <= g.limit, "<="
	}
	verdict := "MET"
	if !met {
		verdict = "NOT MET"
	}
	extra := ""
	if g.stretch != 0 {
		s := "met"
		if g.below && g.value > g.stretch || !g.below && g.value < g.stretch {
			s = "not met"
		}
		extra = fmt.Sprintf(" (stretch %s %g%s: %s)", op, g.stretch, g.unit, s)
	}
	fmt.Printf("%-66s %9.3g%s   goal %s %g%s: %s%s\n", g.name, g.value, g.unit, op, g.limit, g.unit, verdict, extra)
	if g.base != "" {
		fmt.Printf("    %s\n", g.base)
	}
}

// goalBench is a goal benchmark: the package, the benchmark, its count and
// the reported metric that is the goal's figure.
type goalBench struct {
	pkg, bench, count, metric string
	goal                      goal
	about                     string // the harness, as the output describes it
	// sides are the reported metrics that are the figure's two sides (the
	// measured and its baseline), printed beside the goal.
	sides []string
	// aside is a figure another goal prints beside its own: run only when
	// named.
	aside bool
}

var goalBenchList = []goalBench{
	{"./adapters/otlp/", "ReceiverProtoRatio", "40x", "of-decode",
		goal{name: "OTLP receiver / pdata decoding, both in one process (for comparison)", limit: 0.5},
		"64 distinct OTLP/HTTP protobuf export requests of 100 Codex records each, through the receiver's handler into the\n" +
			"   on-disk emitter (lock, state, JSONL), alternating in blocks of 8 with pdata's ProtoUnmarshaler on the same bodies;\n" +
			"   figure = decoder CPU time / receiver CPU time (the process's, GC included, billed to whichever side is running)",
		[]string{"receiver-µs/req", "pdata-decode-µs/req"}, true},
	{"./adapters/acp/", "AcpTeeLatency", "3000x", "added-µs-p50/msg",
		goal{name: "ACP tee added round trip per message, p50, in one process (for comparison)", limit: 50, below: true, unit: "µs"},
		"one session/update line at a time through the tee (in-process) around an echoing agent, against the agent alone",
		[]string{"µs-p50/msg", "direct-µs-p50/msg"}, true},
	{"./adapters/hook/", "ControlNoRelayAdded", "500x", "added-µs-p50/op",
		goal{name: "control on, no relay: added to a held hook, p50 (in process)", limit: 1000, below: true, unit: "µs"},
		"a Claude Code PermissionRequest through the hook runner, observe-only and with control on against a closed port,\n" +
			"   alternately; figure = the median of the pairs' differences", nil, false},
}

// goalBenches runs the goal benchmarks one at a time and reads their
// figures.
func goalBenches(only ...string) []goal {
	var out []goal
	for _, gb := range goalBenchList {
		if len(only) > 0 && !slices.Contains(only, gb.bench) || len(only) == 0 && gb.aside {
			continue
		}
		g := gb.goal
		g.missing = true
		fmt.Printf("\n== %s: go test -bench %s -benchtime %s %s\n   %s\n", g.name, gb.bench, gb.count, gb.pkg, gb.about)
		cmd := exec.Command("go", "test", "-run", "^$", "-bench", "^Benchmark"+gb.bench+"$", "-benchtime", gb.count, gb.pkg)
		cmd.Env = append(os.Environ(), "AEP_BENCH_GOALS=1")
		cmd.Stderr = os.Stderr
		b, err := cmd.Output()
		if err != nil {
			fmt.Fprintf(os.Stderr, "bench: %s: %v\n", gb.bench, err)
		}
		for _, line := range strings.Split(string(b), "\n") {
			if !strings.HasPrefix(line, "Benchmark"+gb.bench+"-") && !strings.HasPrefix(line, "Benchmark"+gb.bench+" ") {
				continue
			}
			f := strings.Fields(line)
			for i := 1; i < len(f); i++ {
				if f[i] == gb.metric {
					if v, err := strconv.ParseFloat(f[i-1], 64); err == nil {
						g.value, g.missing = v, false
					}
				}
				if slices.Contains(gb.sides, f[i]) {
					g.base += fmt.Sprintf("%s %s  ", f[i], f[i-1])
				}
			}
		}
		out = append(out, g)
	}
	return out
}

func round(d time.Duration) string { return d.Round(10 * time.Microsecond).String() }

type payload struct {
	hook  string
	input []byte
}

// vendorPayloads picks one tool-request moment per hook vendor from its pins
// (Codex gets a 2 KB PreToolUse), falling back to the first pinned entry.
func vendorPayloads() map[string]payload {
	out := map[string]payload{}
	cmd := strings.Repeat("x", 1900)
	out["codex"] = payload{input: []byte(`{"hook_event_name":"PreToolUse","session_id":"bench","turn_id":"t1","tool_name":"shell","tool_use_id":"call_1","tool_input":{"command":"echo ` + cmd + `"}}`)}
	dir, ok := pins.Dir("AEP_CONFORMANCE_DIR", "../shared/aep-spec/conformance/fixtures/mappings")
	for _, v := range mapping.Vendors() {
		if v.Transport != mapping.TransportHook || v.Name == "codex" || !ok {
			continue
		}
		cases, _, err := pins.LoadPins(dir, v.Name)
		if err != nil || len(cases) == 0 {
			continue
		}
		pick := cases[0]
		for _, c := range cases {
			if strings.Contains(strings.ToLower(c.Name), "pretooluse") || strings.Contains(strings.ToLower(c.Name), "pre_tool") || strings.Contains(strings.ToLower(c.Name), "tool_call") {
				pick = c
				break
			}
		}
		s := pick.Steps[0]
		out[v.Name] = payload{hook: s.Hook, input: s.Input}
	}
	return out
}

var benchLine = regexp.MustCompile(`^Benchmark(\S+?)(-\d+)?\s+(\d+)\s+([\d.]+) ns/op(.*)$`)

type result struct {
	pkg     string
	nsop    float64
	extra   string
	present bool
}

// goBench runs the packages' Go benchmarks and prints the pairs.
func goBench(benchtime string) error {
	fmt.Println()
	fmt.Println("== go test -bench (pairs: figure beside its baseline from the same run)")
	cmd := exec.Command("go", "test", "-run", "^$", "-bench", ".", "-benchmem", "-benchtime", benchtime, "./...")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	results := map[string]result{}
	var order []string
	pkg := ""
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		line := sc.Text()
		if p, ok := strings.CutPrefix(line, "pkg: "); ok {
			pkg = p
			continue
		}
		if strings.HasPrefix(line, "--- FAIL") || strings.HasPrefix(line, "FAIL") || strings.Contains(line, "_test.go:") {
			fmt.Fprintln(os.Stderr, line)
		}
		m := benchLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		ns, _ := strconv.ParseFloat(m[4], 64)
		key := pkg + "." + m[1]
		results[key] = result{pkg: pkg, nsop: ns, extra: strings.TrimSpace(m[5]), present: true}
		order = append(order, key)
	}
	done := map[string]bool{}
	fmt.Printf("%-58s %14s %14s %8s\n", "benchmark", "ns/op", "baseline", "ratio")
	for _, key := range order {
		if done[key] {
			continue
		}
		r := results[key]
		pkgName, name := key[:strings.LastIndex(key, ".")], key[strings.LastIndex(key, ".")+1:]
		baseName := name + "Baseline"
		if b, ok := namedPairs[strings.Split(name, "/")[0]]; ok {
			baseName = strings.Replace(name, strings.Split(name, "/")[0], b, 1)
		}
		short := filepath.Base(pkgName) + "." + name
		if strings.HasSuffix(name, "Baseline") || isNamedBaseline(name) {
			continue
		}
		if b, ok := results[pkgName+"."+baseName]; ok {
			done[pkgName+"."+baseName] = true
			fmt.Printf("%-58s %14.0f %14.0f %7.2fx  %s\n", short, r.nsop, b.nsop, r.nsop/b.nsop, r.extra)
		} else {
			fmt.Printf("%-58s %14.0f %14s %8s  %s\n", short, r.nsop, "-", "-", r.extra)
		}
	}
	if err != nil {
		return fmt.Errorf("go test -bench: %w", err)
	}
	return nil
}

func isNamedBaseline(name string) bool {
	for _, b := range namedPairs {
		if strings.Split(name, "/")[0] == b {
			return true
		}
	}
	return false
}
