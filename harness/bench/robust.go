package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/plog"
)

// postToolUse is a Claude Code PostToolUse whose tool printed out bytes of
// output, or whose input is nested depth levels deep.
func postToolUse(out, depth int) []byte {
	input := `{"command":"cat big.log"}`
	if depth > 0 {
		input = strings.Repeat(`{"a":`, depth) + "1" + strings.Repeat("}", depth)
	}
	return []byte(`{"session_id":"bench-big","transcript_path":"/tmp/t.jsonl","cwd":"/srv/app","hook_event_name":"PostToolUse",` +
		`"tool_name":"Bash","tool_use_id":"toolu_1","tool_input":` + input + `,"tool_response":{"stdout":"` +
		strings.Repeat("x", out) + `","stderr":""}}`)
}

// robustFigures prints the big-payload figures beside their baselines from
// the same run: the hook's p50 on big and deep payloads against the same
// hook on a 2 KB one, and the OTLP sidecar's peak memory on the request
// that used to amplify (a 200 KB resource attribute over 4,000 records)
// against the sidecar idle.
func robustFigures(bin, tmp string, n int) error {
	fmt.Println()
	fmt.Println("== big and deep payloads (baseline: the same hook on a 2 KB payload)")
	fmt.Printf("%-22s %10s %10s %10s %10s %8s %8s\n", "payload", "p50", "p99", "2 KB p50", "2 KB p99", "p50 x", "p99 x")
	cmds := []command{
		{name: "2 KB", argv: []string{bin, "claude-code"}, in: postToolUse(1800, 0)},
		{name: "1 MiB", argv: []string{bin, "claude-code"}, in: postToolUse(1<<20, 0)},
		{name: "16 MiB", argv: []string{bin, "claude-code"}, in: postToolUse(16<<20, 0)},
		{name: "30,000 deep", argv: []string{bin, "claude-code"}, in: postToolUse(1800, 30_000)},
	}
	runs := max(n/5, 15)
	home := filepath.Join(tmp, "home-big")
	res := interleave(cmds, runs, home)
	for _, c := range cmds[1:] {
		printRow("hook "+c.name, res[c.name], res["2 KB"])
	}
	written := 0
	if b, err := os.ReadFile(filepath.Join(home, "logs", "claude-code", "bench-big.jsonl")); err == nil {
		written = bytes.Count(b, []byte{'\n'})
	}
	fmt.Printf("events written: %d of %d (the hook's deadline is 750 ms; outputs over 1 MiB are left out, their digests kept)\n",
		written, runs*len(cmds))
	if err := structuredFigures(bin, tmp, max(runs/3, 5)); err != nil {
		return err
	}
	return sidecarMemory(bin, tmp)
}

var sidecarAddr = regexp.MustCompile(`http://(\S+)/v1/logs`)

// sidecarMemory prints the sidecar's peak resident memory after the
// amplification request, beside its peak before it (Linux: VmHWM).
func sidecarMemory(bin, tmp string) error {
	if runtime.GOOS != "linux" {
		fmt.Println("sidecar peak memory: not measured here (reads /proc)")
		return nil
	}
	cmd := exec.Command(bin, "otel", "--listen", "127.0.0.1:0", "--capture", "full", "--auth", "none")
	cmd.Env = append(os.Environ(), "AEP_HOME="+filepath.Join(tmp, "home-otel"))
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start sidecar: %w", err)
	}
	defer cmd.Wait()
	defer cmd.Process.Kill()
	line, _ := bufio.NewReader(stderr).ReadString('\n')
	m := sidecarAddr.FindStringSubmatch(line)
	if m == nil {
		return fmt.Errorf("sidecar said %q", line)
	}
	go io.Copy(io.Discard, stderr)
	idle := vmHWM(cmd.Process.Pid)
	body, err := (&plog.ProtoMarshaler{}).MarshalLogs(amplification())
	if err != nil {
		return err
	}
	start := time.Now()
	resp, err := http.Post("http://"+m[1]+"/v1/logs", "application/x-protobuf", bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("post to sidecar: %w", err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	took := time.Since(start)
	peak := vmHWM(cmd.Process.Pid)
	fmt.Printf("sidecar peak RSS on the amplification request (%d KiB: 200 KB resource attribute, 4,000 records; status %d, %s):\n",
		len(body)>>10, resp.StatusCode, round(took))
	fmt.Printf("  %d MiB, idle %d MiB: %.2fx (it was 1.69 GB; the body limit is 4 MiB)\n", peak>>20, idle>>20, float64(peak)/float64(max(idle, 1)))
	return nil
}

// amplification is the request that drove the sidecar to 1.69 GB when each
// record carried a copy of its resource.
func amplification() plog.Logs {
	ld := plog.NewLogs()
	rl := ld.ResourceLogs().AppendEmpty()
	rl.Resource().Attributes().PutStr("service.name", "codex_cli_rs")
	rl.Resource().Attributes().PutStr("deployment.notes", strings.Repeat("n", 200_000))
	lrs := rl.ScopeLogs().AppendEmpty().LogRecords()
	for i := range 4000 {
		lr := lrs.AppendEmpty()
		lr.SetTimestamp(pcommon.Timestamp(1_790_000_000_000_000_000 + uint64(i)*1_000_000))
		lr.Attributes().PutStr("event.name", "codex.tool_result")
		lr.Attributes().PutStr("conversation.id", "bench-amp")
		lr.Attributes().PutInt("duration_ms", int64(i))
	}
	return ld
}

// vmHWM is a process's resident high-water mark in bytes (0 if unknown).
func vmHWM(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb << 10
		}
	}
	return 0
}
