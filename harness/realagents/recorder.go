package realagents

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"
)

// Recorder environment: where firings are saved and which aep-hook runs.
const (
	EnvRecordDir = "AEP_REAL_DIR" // folder receiving firings/<start>-<pid>.json
	EnvAEPHook   = "AEP_REAL_BIN" // the aep-hook binary the recorder pipes into
)

// envKept lists the environment variables a firing keeps: those the vendors
// set for their hooks (project dir, session), which a mapping may read.
var envKept = []string{"CLAUDE_PROJECT_DIR", "CLAUDE_ENV_FILE", "GEMINI_PROJECT_DIR", "GEMINI_SESSION_ID",
	"GEMINI_CWD", "QWEN_PROJECT_DIR", "CODEX_THREAD_ID", "CODEX_HOME"}

// rawFiring is a firing as the recorder saves it, before the harness
// rewrites machine paths.
type rawFiring struct {
	Start         int64             `json:"start_ns"`
	Args          []string          `json:"args"`
	Env           map[string]string `json:"env,omitempty"`
	Stdin         []byte            `json:"stdin"`
	Exit          int               `json:"exit"`
	Stdout        string            `json:"stdout,omitempty"`
	Signal        string            `json:"signal,omitempty"`
	SignalAfterMS int64             `json:"signal_after_ms,omitempty"`
	// ElapsedMS is how long aep-hook took, from the firing's start to its
	// exit: what the hook added to the agent's wait.
	ElapsedMS int64 `json:"elapsed_ms"`
	Done      bool  `json:"done"`
	// After is Firing.After.
	After int `json:"after,omitempty"`
}

// RecordHook is the hook command the harness registers: `realagents hook
// <agent> [ARGS...]`. It saves the raw stdin (and arguments, the
// environment that matters) first, then pipes the same bytes into
// `aep-hook <agent> [ARGS...]`, passing its stdout and exit status
// through. A signal the agent sends while the hook runs is noted with its
// time and forwarded to aep-hook, so replay can deliver it again.
func RecordHook(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return recordHook(args, stdin, stdout, stderr, 0)
}

// recordHook is RecordHook for a firing that comes after stream lines
// the run recorded (Firing.After).
func recordHook(args []string, stdin io.Reader, stdout, stderr io.Writer, after int) int {
	start := time.Now()
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer signal.Stop(sigs)
	in, _ := io.ReadAll(stdin)
	rf := rawFiring{Start: start.UnixNano(), Args: args, Stdin: in, Env: map[string]string{}, After: after}
	for _, k := range envKept {
		if v, ok := os.LookupEnv(k); ok {
			rf.Env[k] = v
		}
	}
	dir := os.Getenv(EnvRecordDir)
	path := ""
	if dir != "" {
		path = filepath.Join(dir, "firings", fmt.Sprintf("%020d-%d.json", start.UnixNano(), os.Getpid()))
		os.MkdirAll(filepath.Dir(path), 0o755)
		saveJSON(path, rf)
	}
	bin := os.Getenv(EnvAEPHook)
	if bin == "" || len(args) == 0 {
		fmt.Fprintln(stderr, "realagents hook: AEP_REAL_BIN and an agent name are required")
		return 0
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdin = bytes.NewReader(in)
	var out bytes.Buffer
	cmd.Stdout = io.MultiWriter(&out, stdout)
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(stderr, "realagents hook: %v\n", err)
		return 0
	}
	var mu sync.Mutex
	done := make(chan struct{})
	go func() {
		for {
			select {
			case s := <-sigs:
				mu.Lock()
				if rf.Signal == "" {
					rf.Signal = signalName(s)
					rf.SignalAfterMS = time.Since(start).Milliseconds()
				}
				mu.Unlock()
				cmd.Process.Signal(s)
			case <-done:
				return
			}
		}
	}()
	err := cmd.Wait()
	close(done)
	mu.Lock()
	defer mu.Unlock()
	rf.Exit = cmd.ProcessState.ExitCode()
	if err != nil && rf.Exit == 0 {
		rf.Exit = -1
	}
	rf.Stdout, rf.Done = out.String(), true
	rf.ElapsedMS = time.Since(start).Milliseconds()
	if path != "" {
		saveJSON(path, rf)
	}
	if rf.Exit < 0 {
		return 1
	}
	return rf.Exit
}

func signalName(s os.Signal) string {
	switch s {
	case syscall.SIGTERM:
		return "SIGTERM"
	case syscall.SIGINT:
		return "SIGINT"
	case syscall.SIGHUP:
		return "SIGHUP"
	}
	return s.String()
}

// saveJSON writes v to path atomically (temp file, rename).
func saveJSON(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// collectFirings reads the recorder's files in dir/firings, in start
// order, and rewrites them into fixture firings.
func collectFirings(dir string, rw *Rewriter) ([]Firing, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "firings", "*.json"))
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	var out []Firing
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		var rf rawFiring
		if err := json.Unmarshal(b, &rf); err != nil {
			return nil, fmt.Errorf("firing %s: %w", p, err)
		}
		if len(rf.Stdin) == 0 && rf.Signal != "" {
			// The agent killed the hook before writing its payload (Kimi
			// aborting a fire-and-forget hook on Esc): no moment to keep.
			continue
		}
		f := Firing{N: len(out) + 1, Exit: rf.Exit, Stdout: rf.Stdout, Signal: rf.Signal, SignalAfterMS: rf.SignalAfterMS, ElapsedMS: rf.ElapsedMS, After: rf.After}
		if !rf.Done {
			f.Exit = -1 // the recorder itself was killed
		}
		if len(rf.Args) > 1 {
			f.Args = rf.Args[1:]
		}
		if len(rf.Env) > 0 {
			f.Env = map[string]string{}
			for k, v := range rf.Env {
				f.Env[k] = rw.String(v)
			}
		}
		if json.Valid(rf.Stdin) {
			f.Input = rw.JSON(rf.Stdin)
		} else {
			f.InputText = rw.String(string(rf.Stdin))
		}
		out = append(out, f)
	}
	return out, nil
}

// hookEvents lists the distinct moment names of firings, for messages.
func hookEvents(fs []Firing) string {
	var names []string
	for _, f := range fs {
		names = append(names, f.Hook())
	}
	return strings.Join(names, " ")
}
