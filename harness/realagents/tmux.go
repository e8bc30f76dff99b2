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

// Step is one move of an interactive session.
type Step func(t *Tmux) error

// TUI is a Drive that starts the agent in tmux with args and plays steps
// in order; the first failing step ends the session with its error.
func TUI(args []string, steps ...Step) func(r *Run) error {
	return func(r *Run) error {
		t, err := r.StartTmux(args...)
		if err != nil {
			return err
		}
		defer t.Close()
		for i, s := range steps {
			if err := s(t); err != nil {
				return fmt.Errorf("step %d: %w", i+1, err)
			}
		}
		return nil
	}
}

// Screen waits until the pane shows text (two minutes at most: the
// machine may be loaded).
func Screen(text string) Step {
	return func(t *Tmux) error { return t.WaitScreen(text, 2*time.Minute) }
}

// Typed types text and presses Enter.
func Typed(text string) Step { return func(t *Tmux) error { return t.Type(text, true) } }

// Pressed sends tmux key names.
func Pressed(keys ...string) Step { return func(t *Tmux) error { return t.Keys(keys...) } }

// Fired waits until hook has fired n times.
func Fired(hook string, n int) Step {
	return func(t *Tmux) error {
		if err := t.r.WaitFiring(hook, n, 3*time.Minute); err != nil {
			return fmt.Errorf("%w; the pane shows:\n%s", err, t.Screen())
		}
		return nil
	}
}

// Pause waits d: only where the agent shows no sign to wait for (a
// dialog's keyboard focus settling).
func Pause(d time.Duration) Step {
	return func(*Tmux) error { time.Sleep(d); return nil }
}

// PressedUntilGone presses key until the pane no longer shows text (an
// interrupt key the agent may miss while it is busy), at most five times.
// Not for a dialog's answer: the next dialog may show the same text.
func PressedUntilGone(key, text string) Step {
	return func(t *Tmux) error {
		for range 5 {
			if err := t.Keys(key); err != nil {
				return err
			}
			for range 40 {
				time.Sleep(250 * time.Millisecond)
				if !strings.Contains(t.Screen(), text) {
					return nil
				}
			}
		}
		return fmt.Errorf("the pane still shows %q after pressing %s five times:\n%s", text, key, t.Screen())
	}
}

// Submitted types text and presses Enter until the agent fires hook once
// more than before (a TUI may take the first Enter as the end of a paste, or
// as the choice of a completion), then waits for that firing.
func Submitted(text, hook string) Step {
	return func(t *Tmux) error {
		count := func() int {
			n := 0
			for _, h := range t.r.Firings() {
				if h == hook {
					n++
				}
			}
			return n
		}
		before := count()
		if err := t.Type(text, true); err != nil {
			return err
		}
		for range 3 {
			for range 40 {
				if count() > before {
					return nil
				}
				time.Sleep(250 * time.Millisecond)
			}
			if err := t.Keys("Enter"); err != nil {
				return err
			}
		}
		return Fired(hook, before+1)(t)
	}
}
