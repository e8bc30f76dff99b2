//go:build !unix

package shim

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// noFollow is no flag here: linkFirst checks before opening.
const noFollow = 0

// errLink is what an open of a path that is a link gives.
var errLink = errors.New("symbolic link")

// linkFirst refuses a path that is a symbolic link (or, on Windows, another
// reparse point), looked at before opening as there is no O_NOFOLLOW.
func linkFirst(path string) error {
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&(fs.ModeSymlink|fs.ModeIrregular) != 0 {
		return errLink
	}
	return nil
}

func isLink(err error) bool { return errors.Is(err, errLink) }

// ownedPrivate checks that a folder is a real folder, not a link (the
// temporary folder is per user on Windows).
func ownedPrivate(fi fs.FileInfo) error {
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a folder", fi.Name())
	}
	return nil
}

// keepOpen is false here: on Windows a file held open cannot be removed or
// renamed (a swept state file, a rotated log), so nothing is kept open.
const keepOpen = false
