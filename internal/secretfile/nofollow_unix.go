//go:build unix

package secretfile

import "syscall"

// noFollow refuses a link at a secret's path when opening or creating it.
const noFollow = syscall.O_NOFOLLOW
