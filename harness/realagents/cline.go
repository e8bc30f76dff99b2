package realagents

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/tidwall/gjson"

	"github.com/aep-hook/aep-hook/harness/realagents/fakemodel"
	"github.com/aep-hook/aep-hook/harness/truth"
)

func cline() *Agent {
	toolsTurn := []fakemodel.Reply{
		calls(call("run_commands", obj{"commands": []string{"echo hello"}})),
		calls(call("run_commands", obj{"commands": []string{"ls /nonexistent-dir"}})),
		calls(call("read_files", obj{"files": []obj{{"path": "/nonexistent/file.txt"}}})),
		say("One worked, two failed."),
	}
	return &Agent{
		Name: "cline", Package: "cline", Version: "3.0.65", Bin: "cline",
		API:   fakemodel.ChatCompletions,
		Setup: clineSetup,
		Scenarios: []Scenario{
			clineHub(toolsScenario("cline --json", "a command that succeeds, one that fails, a missing file", truth.Facts{Turns: 1}, toolsTurn, registered,
				"--json", "SCENARIO:tools run the commands")),
			{
				Name: "subagent", Mode: "headless",
				Description: "cline --json: spawn_agent runs a child agent, which runs a command",
				Facts:       truth.Facts{Turns: 1, Subagents: 1},
				Model: fakemodel.Turns(map[string][]fakemodel.Reply{
					"subagent": {calls(call("spawn_agent", obj{"systemPrompt": "You are a helper.", "task": "SCENARIO:sub print the directory"})), say("The child finished.")},
					"sub":      {calls(call("run_commands", obj{"commands": []string{"pwd"}})), say("Here is the directory.")},
				}),
				Drive: clineDrive(func(r *Run) error {
					_, err := r.Exec(2*time.Minute, "", "--json", "SCENARIO:subagent delegate it")
					return err
				}),
			},
			{
				Name: "api-error", Mode: "headless",
				Description: "cline --json: the model API answers 500",
				Facts:       truth.Facts{Turns: 1, Failures: 1},
				Model: func(req fakemodel.Request) fakemodel.Reply {
					if req.Marker == "apierror" {
						return fakemodel.Reply{Status: 500}
					}
					return say("Done.")
				},
				Drive: clineDrive(func(r *Run) error {
					_, err := r.Exec(2*time.Minute, "", "--json", "SCENARIO:apierror fail")
					return err
				}),
			},
			{
				Name: "resume", Mode: "tmux",
				Description: "cline --json, then the TUI resumes the task (cline --id <root session>) for a second prompt",
				Facts:       truth.Facts{Turns: 2},
				Model: fakemodel.Turns(map[string][]fakemodel.Reply{
					"first":  {calls(call("run_commands", obj{"commands": []string{"echo one"}})), say("First done.")},
					"second": {calls(call("run_commands", obj{"commands": []string{"echo two"}})), say("Second done.")},
				}),
				Drive: clineDrive(func(r *Run) error {
					// 3.0.65 resumes only in the TUI (--json with --id asks
					// for an interactive mode it does not support).
					if _, err := r.Exec(2*time.Minute, "", "--json", "SCENARIO:first go"); err != nil {
						return err
					}
					if err := r.WaitFiring("agent_end", 1, time.Minute); err != nil {
						return err
					}
					root := clineRootSession(r)
					if root == "" {
						return fmt.Errorf("no rootSessionId in the recorded firings")
					}
					t, err := clineTUI(r, "--id", root)
					if err != nil {
						return err
					}
					defer t.Close()
					clinePrompt(t, "SCENARIO:second go on")
					return r.WaitFiring("agent_end", 2, time.Minute)
				}),
			},
			{
				Name: "approvals", Mode: "tmux",
				Description: "cline TUI without auto-approve: a command rejected, the same command approved",
				Facts:       truth.Facts{Turns: 2},
				Model: fakemodel.Turns(map[string][]fakemodel.Reply{
					"ask": {calls(call("run_commands", obj{"commands": []string{"echo approve-me > f.txt"}})), say("Asked.")},
				}),
				Drive: clineInTUI(func(r *Run, t *Tmux) error {
					for i, key := range []string{"n", "y"} {
						clinePrompt(t, "SCENARIO:ask write the file")
						if err := t.WaitScreen("Approve tool call", time.Minute); err != nil {
							return err
						}
						t.Keys(key)
						if err := r.WaitFiring("agent_end", i+1, time.Minute); err != nil {
							return err
						}
					}
					return nil
				}, "--auto-approve", "false"),
			},
			{
				Name: "queued", Mode: "tmux",
				Description: "cline TUI: a second prompt typed while the first turn runs a command waits its turn",
				Facts:       truth.Facts{Turns: 2},
				Model: fakemodel.Turns(map[string][]fakemodel.Reply{
					"first":  {calls(call("run_commands", obj{"commands": []string{"sleep 5"}})), say("First done.")},
					"queued": {say("Queued done.")},
				}),
				Drive: clineInTUI(func(r *Run, t *Tmux) error {
					clinePrompt(t, "SCENARIO:first wait a bit")
					if err := r.WaitFiring("tool_call", 1, time.Minute); err != nil {
						return err
					}
					t.Type("SCENARIO:queued then this", true)
					return r.WaitFiring("agent_end", 2, time.Minute)
				}),
			},
			{
				Name: "interrupt", Mode: "tmux",
				Description: "cline TUI: Esc during a long command (only SessionShutdown fires), then another prompt",
				Facts:       truth.Facts{Turns: 2, Interrupts: 1},
				Model: fakemodel.Turns(map[string][]fakemodel.Reply{
					"slow":  {calls(call("run_commands", obj{"commands": []string{"sleep 30"}})), say("Slept.")},
					"after": {say("Still here.")},
				}),
				Drive: clineInTUI(func(r *Run, t *Tmux) error {
					clinePrompt(t, "SCENARIO:slow take long")
					if err := r.WaitFiring("tool_call", 1, time.Minute); err != nil {
						return err
					}
					time.Sleep(2 * time.Second)
					t.Keys("Escape")
					if err := r.WaitFiring("session_shutdown", 1, time.Minute); err != nil {
						return err
					}
					clinePrompt(t, "SCENARIO:after are you there")
					return r.WaitFiring("agent_end", 1, time.Minute)
				}),
			},
		},
	}
}

// clineSetup registers the hook files as `aep-hook install cline` does (in
// ~/.cline/hooks, each carrying the settings in force, since the hooks run
// in Cline's hub daemon, whose environment is not the shell's) and points
// Cline at the fake model (its auth command; the first Cline command also
// starts the hub daemon).
func clineSetup(r *Run) error {
	if err := r.Register(true); err != nil {
		return err
	}
	out, err := r.Exec(time.Minute, "", "auth", "-p", "openai-compatible", "-k", "sk-fake-cline", "-m", "fake-model", "-b", r.Model.URL+"/v1")
	if err != nil || !strings.Contains(out, "configured") {
		return fmt.Errorf("cline auth: %v: %s", err, out)
	}
	return nil
}

// clineHub makes s stop its hub daemon when it is done (clineDrive).
func clineHub(s Scenario) Scenario {
	s.Drive = clineDrive(s.Drive)
	return s
}

// clineDrive runs drive, then stops the run's hub daemon, which would
// otherwise outlive the run.
func clineDrive(drive func(r *Run) error) func(r *Run) error {
	return func(r *Run) error {
		defer clineStopHub(r)
		return drive(r)
	}
}

// clineStopHub asks the run's hub to stop, then ends any process still
// running from the run's own folder (the hub daemon names it in --cwd).
func clineStopHub(r *Run) {
	r.Exec(30*time.Second, "", "hub", "stop")
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		var pid int
		if _, err := fmt.Sscanf(e.Name(), "%d", &pid); err != nil || pid == os.Getpid() {
			continue
		}
		cmd, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && strings.Contains(string(cmd), "--cline-hub-daemon") && strings.Contains(string(cmd), r.Dir) {
			if p, err := os.FindProcess(pid); err == nil {
				p.Signal(syscall.SIGTERM)
			}
		}
	}
}

// clineInTUI is a tmux scenario's Drive: drive runs against `cline -i
// args...`, which is closed after it, and the hub is stopped.
func clineInTUI(drive func(r *Run, t *Tmux) error, args ...string) func(r *Run) error {
	return clineDrive(func(r *Run) error {
		t, err := clineTUI(r, args...)
		if err != nil {
			return err
		}
		defer t.Close()
		return drive(r, t)
	})
}

// clineTUI starts `cline -i` and closes the start-up announcement.
func clineTUI(r *Run, args ...string) (*Tmux, error) {
	t, err := r.StartTmux(append([]string{"-i"}, args...)...)
	if err != nil {
		return nil, err
	}
	if err := t.WaitScreen("Auto-approve", time.Minute); err != nil {
		t.Close()
		return nil, err
	}
	time.Sleep(time.Second)
	t.Keys("Escape")
	time.Sleep(time.Second)
	return t, nil
}

// clinePrompt types a prompt once the TUI's input is ready for one.
func clinePrompt(t *Tmux, text string) {
	t.WaitScreen("Ask anything", time.Minute)
	time.Sleep(500 * time.Millisecond)
	t.Type(text, true)
}

// clineRootSession is the root session id of the firings recorded so far.
func clineRootSession(r *Run) string {
	fs, _ := collectFirings(r.Dir, &Rewriter{})
	for _, f := range fs {
		if id := gjson.GetBytes(f.Input, "sessionContext.rootSessionId").String(); id != "" {
			return id
		}
	}
	return ""
}
