//go:build !unix && !windows

package shim

import "os"

// lockFile is a no-op where the platform has no advisory locks.
func lockFile(f *os.File) error { return nil }

func unlockFile(f *os.File) error { return nil }

// tryLock always succeeds where the platform has no advisory locks.
func tryLock(f *os.File) (bool, error) { return true, nil }
