package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"
)

// permissionPrompt is a Claude Code permission card whose command carries
// the usual command-line credential forms: at the default posture it
// passes the whole redaction pipeline in the hook process.
const permissionPrompt = `{"hook_event_name":"PermissionRequest","session_id":"bench-perm","cwd":"/srv/app","tool_name":"Bash",` +
	`"tool_input":{"command":"mysql -u root -pS3cr3tPw app && sshpass -p Pw2 ssh web1 && curl -u admin:Adm1nPw https://ci.example.com/api?token=t0k3n && export GH_TOKEN=ghp_0123456789abcdefghijABCDEFGHIJ012345","description":"deploy"}}`

// plainPrompt is the same card without credentials, so the difference is
// what redaction costs the hook.
const plainPrompt = `{"hook_event_name":"PermissionRequest","session_id":"bench-perm","cwd":"/srv/app","tool_name":"Bash",` +
	`"tool_input":{"command":"go test ./... && make build && ./bin/app --version","description":"deploy"}}`

// redactFigures prints the redaction figures, each beside its
// baseline from the same run: the hook on a permission prompt against the
// floor, a fresh process's first redaction, and the pipeline's cost per MB
// against one RE2 pass of the same bytes.
func redactFigures(bin, floor, tmp string, n int) error {
	fmt.Println()
	fmt.Println("== redaction")
	fmt.Printf("%-22s %10s %10s %10s %10s %8s %8s\n", "command", "p50", "p99", "floor p50", "floor p99", "p50 x", "p99 x")
	in := []byte(permissionPrompt)
	plain := []byte(plainPrompt)
	res := interleave([]command{
		{name: "floor", argv: []string{floor}, in: in},
		{name: "perm", argv: []string{bin, "claude-code"}, in: in},
		{name: "plain", argv: []string{bin, "claude-code"}, in: plain},
	}, n, filepath.Join(tmp, "home-redact"))
	printRow("hook permission prompt", res["perm"], res["floor"])
	printRow("  same, no credentials", res["plain"], res["floor"])
	fmt.Println("goal: hook p50 <= 2.5x floor on a prompt that is redacted")

	fc := filepath.Join(tmp, "firstcall")
	if out, err := exec.Command("go", "build", "-o", fc, "./harness/bench/firstcall").CombinedOutput(); err != nil {
		return fmt.Errorf("build firstcall: %v\n%s", err, out)
	}
	var first, second, meta []time.Duration
	for range max(n/3, 20) {
		out, err := exec.Command(fc).Output()
		if err != nil {
			return fmt.Errorf("firstcall: %w", err)
		}
		f := strings.Fields(string(out))
		if len(f) != 3 {
			return fmt.Errorf("firstcall printed %q", out)
		}
		for i, dst := range []*[]time.Duration{&first, &second, &meta} {
			ns, _ := strconv.ParseInt(f[i], 10, 64)
			*dst = append(*dst, time.Duration(ns))
		}
	}
	for _, d := range [][]time.Duration{first, second, meta} {
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	}
	fmt.Printf("first redaction in a fresh process: p50 %s (tables built, patterns compiled); the same text again: %s; metadata gate: %s (compiles nothing)\n",
		round(pct(first, 0.5)), round(pct(second, 0.5)), round(pct(meta, 0.5)))
	fmt.Println("goal: first call well under 2ms")

	cmd := exec.Command("go", "test", "-run", "^$", "-bench", "^Benchmark(PipelineMixed1MB|SinglePassMixed1MB)$", "-benchtime", "5x", "./redact/")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		return fmt.Errorf("redact benchmarks: %w", err)
	}
	ns := map[string]float64{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		if m := benchLine.FindStringSubmatch(sc.Text()); m != nil {
			ns[m[1]], _ = strconv.ParseFloat(m[4], 64)
		}
	}
	pipe, pass := ns["PipelineMixed1MB"], ns["SinglePassMixed1MB"]
	if pipe == 0 || pass == 0 {
		return fmt.Errorf("redact benchmarks printed no figures:\n%s", out)
	}
	fmt.Printf("pipeline over 1 MB of agent text: %s; one RE2 pass of the same bytes: %s; ratio %.2fx (goal <= 4x)\n",
		round(time.Duration(pipe)), round(time.Duration(pass)), pipe/pass)
	return nil
}
