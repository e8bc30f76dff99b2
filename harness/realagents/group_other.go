//go:build !unix

package realagents

import (
	"os"
	"os/exec"
)

// OwnGroup does nothing here: there are no process groups to start cmd in.
func OwnGroup(cmd *exec.Cmd) {}

// SignalGroup ends the process pid (its children are not reached here):
// there is no gentler signal to send than ending it.
func SignalGroup(pid int, kill bool) {
	if p, err := os.FindProcess(pid); err == nil {
		p.Kill()
	}
}

// alive reports false: the kill SignalGroup sends here is final.
func alive(int) bool { return false }
