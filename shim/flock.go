package shim

import "os"

// The exported face of the machine-wide file locks every aep-hook process
// shares (session state here, delivery cursors in shim/deliver).

// LockFile takes an exclusive advisory lock on f, blocking until it is free.
func LockFile(f *os.File) error { return lockFile(f) }

// UnlockFile releases a lock LockFile or TryLockFile took.
func UnlockFile(f *os.File) error { return unlockFile(f) }

// TryLockFile takes the exclusive lock only if it is free now; it reports
// false, with no error, when another process holds it.
func TryLockFile(f *os.File) (bool, error) { return tryLock(f) }

// tryLockFile is TryLockFile where a failure counts as held.
func tryLockFile(f *os.File) bool {
	ok, _ := tryLock(f)
	return ok
}
