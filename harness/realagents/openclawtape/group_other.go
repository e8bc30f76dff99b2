//go:build !unix

package openclawtape

import (
	"os"
	"os/exec"
)

// ownGroup does nothing here: there are no process groups to start cmd in.
func ownGroup(cmd *exec.Cmd) {}

// signalGroup ends the process pid (its children are not reached here).
func signalGroup(pid int, kill bool) {
	if p, err := os.FindProcess(pid); err == nil {
		p.Kill()
	}
}
