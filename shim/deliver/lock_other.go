//go:build !unix && !windows

package deliver

import "os"

// tryLockFile always succeeds where the platform has no advisory locks.
func tryLockFile(f *os.File) (bool, error) { return true, nil }

func unlockFile(f *os.File) error { return nil }
