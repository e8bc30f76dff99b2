//go:build !unix

package installer

import (
	"io/fs"
	"os"
)

// noFollow is nothing here: O_EXCL alone refuses an existing name.
const noFollow = 0

// sameOwner is nothing here: files keep the owner the system gives them.
func sameOwner(*os.File, fs.FileInfo) error { return nil }

// chownLike is nothing here.
func chownLike(string, fs.FileInfo) error { return nil }
