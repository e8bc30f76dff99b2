package installer

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// The file-writing layer: how a planned Change reaches the disk. A
// settings file may be someone else's (install run as root with another
// user's HOME), a link a dotfile manager keeps, or sit in a folder a
// cloned repository prepared; so the backup is created exclusively, never
// through a link, under a name nobody can guess, with the original's owner
// and mode; the edited file keeps its owner and mode; and a link is written
// through to its target only when the plan allowed it (Change.Target).

// checkLink decides what install does with a settings file that is a
// symbolic link: at user scope (a dotfile manager's link) it writes the
// link's target and says so; at project scope only a target inside the
// project is written, since a link in a cloned repository could otherwise
// aim the edit at any file of the user's. It returns the resolved target
// ("" when path is not a link) and the note to show.
func checkLink(e Env, s Scope, path string) (target, note string, err error) {
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return "", "", nil
	}
	target, err = filepath.EvalSymlinks(path)
	if errors.Is(err, fs.ErrNotExist) {
		return "", "", fmt.Errorf("%s is a symbolic link to a file that does not exist; create its target or replace the link with a file, then install again", path)
	}
	if err != nil {
		return "", "", fmt.Errorf("%s is a symbolic link that cannot be followed (%v); replace it with a file, then install again", path, err)
	}
	if st, err := os.Stat(target); err != nil || !st.Mode().IsRegular() {
		return "", "", fmt.Errorf("%s is a symbolic link to %s, which is not a regular file; refusing to write through it", path, target)
	}
	if s == Project {
		root, err := filepath.EvalSymlinks(e.Dir)
		if err != nil {
			root = e.Dir
		}
		if rel, err := filepath.Rel(root, target); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return "", "", fmt.Errorf("%s is a symbolic link to %s, outside the project %s; refusing to write through it (a link in a cloned repository can point anywhere): replace the link with a file, or install at user scope", path, target, e.Dir)
		}
	}
	return target, fmt.Sprintf("%s is a symbolic link: install edits its target %s (the link stays)", path, target), nil
}

// Apply writes c: a backup of the old file first (beside the file written,
// named <file>.aep-hook-backup-<time>-<random>, created exclusively, never
// through a link, with the original's owner and mode), then the new content
// through a temporary file renamed into place, with the owner and mode of
// the file it replaces; removing a file removes its folder too when that
// leaves the folder empty. A link at c.Path is written through only to the
// target the plan named (c.Target) and otherwise refused. It returns the
// backup's path ("" when there was no old file). An unchanged c writes
// nothing.
func Apply(c Change, now time.Time) (backup string, err error) {
	if !c.Changed() {
		return "", nil
	}
	path := c.Path
	fi, err := os.Lstat(path)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	if err == nil && fi.Mode()&fs.ModeSymlink != 0 && c.New != nil {
		target, terr := filepath.EvalSymlinks(path)
		if c.Target == "" || terr != nil || target != c.Target {
			return "", fmt.Errorf("%s is a symbolic link; refusing to write through it (it changed since the plan, or install was not asked to)", path)
		}
		path = target
		if fi, err = os.Lstat(path); err != nil {
			return "", err
		}
	}
	var orig fs.FileInfo
	if err == nil {
		orig = fi
		if fi.Mode()&fs.ModeSymlink != 0 { // a link removed: back up what it showed
			orig, _ = os.Stat(path)
		}
	}
	if c.Old != nil && !c.NoBackup {
		if backup, err = writeBackup(path, c.Old, orig, now); err != nil {
			return "", fmt.Errorf("backup before editing %s: %w", path, err)
		}
	}
	if c.New == nil {
		if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return backup, err
		}
		// Only a file of ours is removed (a hook script, a plugin, a
		// settings file holding nothing else), and the folders install
		// made for it go too once nothing else is in them; a folder
		// still holding anything stays, and so does one that was there
		// before install, empty or not.
		removeMade(c.Made, path)
		return backup, nil
	}
	made := missingDirs(filepath.Dir(path))
	if err := mkdirOwned(filepath.Dir(path)); err != nil {
		return backup, err
	}
	if err := recordMade(c.Made, made); err != nil {
		return backup, fmt.Errorf("record the folders made for %s: %w", path, err)
	}
	return backup, replaceFile(path, c.New, c.Mode, orig)
}

// writeBackup keeps old beside path under a fresh name: created with
// O_EXCL and without following a link (a name planted beforehand, as a
// file or a link, is skipped for another), random enough that two installs
// in one second, or an attacker, never share it; then given the original's
// owner and mode.
func writeBackup(path string, old []byte, orig fs.FileInfo, now time.Time) (string, error) {
	mode := fs.FileMode(0o600)
	if orig != nil {
		mode = orig.Mode().Perm()
	}
	stamp := now.UTC().Format("20060102T150405Z")
	for range 8 {
		var r [6]byte
		if _, err := rand.Read(r[:]); err != nil {
			return "", err
		}
		name := path + ".aep-hook-backup-" + stamp + "-" + hex.EncodeToString(r[:])
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL|noFollow, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", err
		}
		if err := writeSynced(f, old, mode, orig); err != nil {
			os.Remove(name)
			return "", err
		}
		return name, nil
	}
	return "", errors.New("no free backup name")
}

// replaceFile puts content at path through a temporary file in the same
// folder renamed over it: the mode is mode, the owner that of the file
// replaced (orig) or, for a new file, that of its folder when install runs
// as another user (root with the user's HOME). Folders created on the way
// take their parent's owner the same way.
func replaceFile(path string, content []byte, mode fs.FileMode, orig fs.FileInfo) error {
	dir := filepath.Dir(path)
	owner := orig
	if owner == nil {
		if st, err := os.Stat(dir); err == nil {
			owner = st
		}
	}
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".aep-hook-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := writeSynced(tmp, content, mode, owner); err != nil {
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// writeSynced writes b to f, gives it mode and the owner of like (when that
// is not the caller), syncs and closes it.
func writeSynced(f *os.File, b []byte, mode fs.FileMode, like fs.FileInfo) error {
	_, err := f.Write(b)
	if err == nil {
		err = f.Chmod(mode)
	}
	if err == nil && like != nil {
		err = sameOwner(f, like)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// mkdirOwned creates dir and its missing parents (0755), each owned like
// the folder it was made in.
func mkdirOwned(dir string) error {
	if _, err := os.Stat(dir); err == nil {
		return nil
	}
	parent := filepath.Dir(dir)
	if parent != dir {
		if err := mkdirOwned(parent); err != nil {
			return err
		}
	}
	if err := os.Mkdir(dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	if st, err := os.Stat(parent); err == nil {
		return chownLike(dir, st)
	}
	return nil
}
