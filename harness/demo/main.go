// Command demo is `make demo`: it runs the bundled vendor sessions in
// fixtures/demo through the real binary, one hook process per moment, into a
// temporary AEP_HOME, then prints where the logs are and their timelines.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/aep-hook/aep-hook/harness/pins"
)

func main() {
	bin := flag.String("bin", "bin/aep-hook", "the aep-hook binary")
	dir := flag.String("fixtures", "fixtures/demo", "the demo sessions")
	home := flag.String("home", "", "AEP_HOME to write into (default: a new temporary folder)")
	flag.Parse()
	if err := run(*bin, *dir, *home); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func run(bin, dir, home string) error {
	bin, _ = filepath.Abs(bin)
	if home == "" {
		var err error
		if home, err = os.MkdirTemp("", "aep-demo-"); err != nil {
			return err
		}
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	sort.Slice(files, func(i, j int) bool { return rank(files[i]) < rank(files[j]) })
	if len(files) == 0 {
		return fmt.Errorf("no demo sessions in %s", dir)
	}
	for _, f := range files {
		vendor := strings.TrimSuffix(filepath.Base(f), ".jsonl")
		ms, err := pins.LoadDemo(f)
		if err != nil {
			return err
		}
		for i, m := range ms {
			args := []string{vendor}
			if m.Hook != "" {
				args = append(args, m.Hook)
			}
			cmd := exec.Command(bin, args...)
			cmd.Env = append(os.Environ(), "AEP_HOME="+home)
			cmd.Stdin = bytes.NewReader(m.Input)
			out, err := cmd.Output()
			if err != nil {
				return fmt.Errorf("%s moment %d: %v", vendor, i+1, err)
			}
			_ = out // the vendor's neutral reply
		}
		fmt.Printf("%-12s %2d hook processes\n", vendor, len(ms))
	}
	logs, _ := filepath.Glob(filepath.Join(home, "logs", "*", "*.jsonl"))
	fmt.Printf("\nlogs: %s/logs/<agent>/<session>.jsonl (%d files)\n", home, len(logs))
	fmt.Printf("read one:  %s timeline %s/logs/codex/*.jsonl   or   jq . <file>\n\n", bin, home)
	for _, l := range logs {
		cmd := exec.Command(bin, "timeline", l)
		cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
		if err := cmd.Run(); err != nil {
			return err
		}
		fmt.Println()
	}
	for _, l := range logs {
		for _, c := range openCalls(l) {
			fmt.Printf("no outcome: %s %s (call %s): the agent reported none for it\n", filepath.Base(filepath.Dir(l)), c.name, c.id)
		}
	}
	if b, err := os.ReadFile(filepath.Join(home, "internal", "errors.jsonl")); err == nil {
		fmt.Printf("internal failures recorded:\n%s\n", b)
	}
	return nil
}

// call is a tool call of a log.
type call struct{ id, name string }

// openCalls lists the tool calls of the log at path that never reached an
// outcome (tool.completed, tool.failed or tool.denied), in request order:
// a vendor that reports success only (VS Code's agent hooks) leaves a
// failed call without one, and the demo says so rather than hide it.
func openCalls(path string) []call {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	var order []call
	done := map[string]bool{}
	for _, line := range bytes.Split(b, []byte("\n")) {
		var e struct {
			Type string `json:"type"`
			Data struct {
				Tool struct {
					Name   string `json:"name"`
					CallID string `json:"call_id"`
				} `json:"tool"`
			} `json:"data"`
		}
		if json.Unmarshal(line, &e) != nil || e.Data.Tool.CallID == "" {
			continue
		}
		switch e.Type {
		case "tool.requested":
			order = append(order, call{e.Data.Tool.CallID, e.Data.Tool.Name})
		case "tool.completed", "tool.failed", "tool.denied":
			done[e.Data.Tool.CallID] = true
		}
	}
	var open []call
	for _, c := range order {
		if !done[c.id] {
			open = append(open, c)
		}
	}
	return open
}

// rank puts the two foundation vendors first.
func rank(path string) string {
	switch filepath.Base(path) {
	case "codex.jsonl":
		return "0"
	case "claude-code.jsonl":
		return "1"
	}
	return "2" + filepath.Base(path)
}
