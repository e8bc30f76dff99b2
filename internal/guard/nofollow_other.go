//go:build !unix

package guard

// noFollow is no flag here; O_EXCL already refuses an existing link.
const noFollow = 0
