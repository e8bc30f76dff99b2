package main

import (
	"fmt"
	"io"
)

// Streams are the process's standard streams, bound into every command's
// Run method so tests can drive commands in-process.
type Streams struct {
	In  io.Reader
	Out io.Writer
	Err io.Writer
	// OnHook, when set, runs as the process enters hook mode: main uses it
	// to hold off termination signals (see holdSignals).
	OnHook func()
	// Self is the aep-hook binary the user runs and install registers, when
	// that is not this process's own executable (the hook-only build that
	// started it); "" means this one.
	Self string
}

// exitError carries a specific exit status out of a command; its message, if
// any, has already been printed.
type exitError struct {
	code int
	msg  string
}

func (e exitError) Error() string {
	if e.msg != "" {
		return e.msg
	}
	return fmt.Sprintf("exit status %d", e.code)
}
