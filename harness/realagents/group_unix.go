//go:build unix

package realagents

import (
	"os/exec"
	"syscall"
)

// OwnGroup starts cmd in a process group of its own, so that stopping it
// reaches the children it spawns too.
func OwnGroup(cmd *exec.Cmd) { cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} }

// SignalGroup ends the process group led by pid: SIGTERM, or SIGKILL when
// kill is set.
func SignalGroup(pid int, kill bool) {
	sig := syscall.SIGTERM
	if kill {
		sig = syscall.SIGKILL
	}
	syscall.Kill(-pid, sig)
}

// alive reports whether pid still exists.
func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }
