//go:build unix

package guard

import "syscall"

// noFollow refuses a link at the token path when creating it.
const noFollow = syscall.O_NOFOLLOW
