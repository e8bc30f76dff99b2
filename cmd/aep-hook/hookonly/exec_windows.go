//go:build windows

package main

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"os/signal"
)

// execve runs path as a child on this process's streams and exits with its
// status: Windows has no exec. Ctrl-C reaches every process of the
// console, the child included, so this one ignores it and waits.
func execve(path string, argv, env []string) error {
	cmd := exec.Command(path, argv[1:]...)
	cmd.Args[0] = argv[0]
	cmd.Env = env
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	signal.Ignore(os.Interrupt)
	err := cmd.Run()
	var ee *exec.ExitError
	if err == nil || errors.As(err, &ee) {
		os.Exit(cmd.ProcessState.ExitCode())
	}
	return err
}

// ownedPrivately: the user's cache and temporary folders are the user's
// own on Windows (the profile's ACLs); there is no owner to compare.
func ownedPrivately(fs.FileInfo) bool { return true }
