package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

// fullSum is the SHA-256 of the embedded full binary in hex, set by the
// build (-ldflags -X main.fullSum=...) so that finding the extracted copy
// never reads the embedded bytes; computed on first use otherwise.
var fullSum = ""

// execFull runs the full binary in this process's place with argv (argv[0]
// kept, so a link named aep-<adapter> still means its adapter) and this
// process's environment, plus AEP_HOOK_SELF naming this binary. It returns
// only when the full binary could not be started.
func execFull(argv []string) error {
	path, err := fullPath()
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("cannot find this binary's path: %w", err)
	}
	env := append(os.Environ(), "AEP_HOOK_SELF="+self)
	err = execve(path, argv, env)
	if errors.Is(err, fs.ErrNotExist) {
		// Removed meanwhile (another version's clean-up): write it again.
		if path, err = extract(); err == nil {
			err = execve(path, argv, env)
		}
	}
	return fmt.Errorf("start the full aep-hook %s: %w", path, err)
}

// fullPath is the path of a ready copy of the full binary: a sibling
// aep-hook-full for a build without it inside, else the extracted copy in
// the cache folder, written now when it is missing.
func fullPath() (string, error) {
	if len(fullBinary) == 0 {
		self, err := os.Executable()
		if err == nil {
			p := filepath.Join(filepath.Dir(self), "aep-hook-full"+exeSuffix())
			if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
				return p, nil
			}
		}
		return "", errors.New("this aep-hook is the hook-only build without the full binary inside: build it with make build, or install the full one with go install github.com/aep-hook/aep-hook/cmd/aep-hook@latest")
	}
	dir, name, err := cacheFile()
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, name)
	if ready(p) {
		return p, nil
	}
	return extract()
}

// cacheFile is the folder and file name of the extracted full binary:
// named by its digest, so two builds never share a file.
func cacheFile() (dir, name string, err error) {
	sum := fullSum
	if sum == "" {
		h := sha256.Sum256([]byte(fullBinary))
		sum = hex.EncodeToString(h[:])
	}
	if len(sum) > 24 {
		sum = sum[:24]
	}
	dir, err = cacheDir()
	return dir, "aep-hook-full-" + sum + exeSuffix(), err
}

// cacheDir is the user's cache folder for aep-hook (made private when
// missing), or a private folder in the temporary directory when there is
// no usable cache folder. A folder another user could write to is never
// used: what it holds is executed.
func cacheDir() (string, error) {
	var tried []string
	if base, err := os.UserCacheDir(); err == nil {
		d := filepath.Join(base, "aep-hook")
		if err := privateDir(d); err == nil {
			return d, nil
		} else {
			tried = append(tried, err.Error())
		}
	}
	d := filepath.Join(os.TempDir(), fmt.Sprintf("aep-hook-%d", os.Getuid()))
	if err := privateDir(d); err != nil {
		tried = append(tried, err.Error())
		return "", fmt.Errorf("no folder to hold the full aep-hook: %s", strings.Join(tried, "; "))
	}
	return d, nil
}

// privateDir makes d (mode 0700) when missing and checks that it is a
// folder only this user can write to.
func privateDir(d string) error {
	if err := os.MkdirAll(d, 0o700); err != nil {
		return err
	}
	st, err := os.Lstat(d)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("%s is not a folder", d)
	}
	if !ownedPrivately(st) {
		return fmt.Errorf("%s is writable by others or owned by another user", d)
	}
	return nil
}

// ready reports whether p is a finished copy of the full binary: a
// regular file of its size that only this user can write.
func ready(p string) bool {
	st, err := os.Lstat(p)
	return err == nil && st.Mode().IsRegular() && st.Size() == int64(len(fullBinary)) && ownedPrivately(st)
}

// extract writes the full binary to the cache folder (a temporary file
// renamed into place, so no process ever runs half of one), removes the
// stale copies of other builds, and returns its path.
func extract() (string, error) {
	dir, name, err := cacheFile()
	if err != nil {
		return "", err
	}
	p := filepath.Join(dir, name)
	f, err := os.CreateTemp(dir, ".aep-hook-full-*")
	if err != nil {
		return "", err
	}
	tmp := f.Name()
	_, werr := f.WriteString(fullBinary)
	if werr == nil {
		werr = f.Chmod(0o700)
	}
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp, p)
	}
	if werr != nil {
		os.Remove(tmp)
		if ready(p) { // another process won the race
			return p, nil
		}
		return "", fmt.Errorf("write the full aep-hook to %s: %w", dir, werr)
	}
	// Other builds' copies go once they are a day old: a copy still in
	// use by an older aep-hook is written again when it next runs.
	if old, err := filepath.Glob(filepath.Join(dir, "aep-hook-full-*")); err == nil {
		for _, o := range old {
			if st, err := os.Lstat(o); err == nil && o != p && time.Since(st.ModTime()) > 24*time.Hour {
				os.Remove(o)
			}
		}
	}
	return p, nil
}

func exeSuffix() string {
	if runtime.GOOS == "windows" {
		return ".exe"
	}
	return ""
}
