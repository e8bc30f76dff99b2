//go:build !unix

package secretfile

// noFollow is no flag here: O_EXCL refuses an existing link on create, and
// the Lstat check before a secret is opened refuses one there.
const noFollow = 0
