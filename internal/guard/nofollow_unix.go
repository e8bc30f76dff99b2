//go:build unix

package guard

import "syscall"

// noFollow refuses a link at a secret's path when opening or creating it.
const noFollow = syscall.O_NOFOLLOW
