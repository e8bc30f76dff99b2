//go:build !linux

package shim

import "os"

// holderStopped cannot tell here whether a lock's holder is stopped.
func holderStopped(*os.File) (stopped, ok bool) { return false, false }
