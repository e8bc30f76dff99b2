package realagents

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Tmux is an interactive agent session in a private tmux server, for the
// moments headless mode cannot reach (permission dialogs, questions,
// interrupts, slash commands, resume).
type Tmux struct {
	r      *Run
	socket string
	name   string
}

// StartTmux starts the agent with args in a detached 200x50 tmux session.
func (r *Run) StartTmux(args ...string) (*Tmux, error) {
	t := &Tmux{r: r, socket: filepath.Join(r.Dir, "tmux.sock"), name: "agent"}
	cmdline := []string{"env", "-i"}
	cmdline = append(cmdline, r.Env...)
	cmdline = append(cmdline, r.AgentBin())
	cmdline = append(cmdline, args...)
	quoted := make([]string, len(cmdline))
	for i, a := range cmdline {
		quoted[i] = shellQuote(a)
	}
	c := exec.Command("tmux", "-S", t.socket, "new-session", "-d", "-s", t.name, "-x", "200", "-y", "50",
		"-c", r.Work, strings.Join(quoted, " "))
	if out, err := c.CombinedOutput(); err != nil {
		return nil, fmt.Errorf("tmux new-session: %v: %s", err, out)
	}
	exec.Command("tmux", "-S", t.socket, "set-option", "-t", t.name, "remain-on-exit", "on").Run()
	return t, nil
}

func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Keys sends tmux key names (or literal text with Type).
func (t *Tmux) Keys(keys ...string) error {
	args := append([]string{"-S", t.socket, "send-keys", "-t", t.name}, keys...)
	return exec.Command("tmux", args...).Run()
}

// Type sends literal text, then Enter when enter is true.
func (t *Tmux) Type(text string, enter bool) error {
	if err := exec.Command("tmux", "-S", t.socket, "send-keys", "-t", t.name, "-l", text).Run(); err != nil {
		return err
	}
	if enter {
		time.Sleep(300 * time.Millisecond)
		return t.Keys("Enter")
	}
	return nil
}

// Screen returns the visible pane text.
func (t *Tmux) Screen() string {
	out, _ := exec.Command("tmux", "-S", t.socket, "capture-pane", "-p", "-t", t.name).Output()
	return string(out)
}

// WaitScreen waits until the pane shows text.
func (t *Tmux) WaitScreen(text string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		s := t.Screen()
		if strings.Contains(s, text) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("screen never showed %q within %s; it shows:\n%s", text, timeout, s)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

// Close ends the tmux server and everything in it.
func (t *Tmux) Close() {
	exec.Command("tmux", "-S", t.socket, "kill-server").Run()
}
