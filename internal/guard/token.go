package guard

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
)

// TokenFile is the name of the per-user token under AEP_HOME.
const TokenFile = "token"

// UserToken returns the per-user listener token kept in home/token,
// creating it (0600, exclusively, never through a link) when it does not
// exist. A token file that others can read is refused: another local user
// holding it could write into this user's record.
func UserToken(home string) (string, error) {
	path := filepath.Join(home, TokenFile)
	if tok, err := ReadSecretFile(path); err == nil {
		return tok, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	if err := os.MkdirAll(home, 0o700); err != nil {
		return "", fmt.Errorf("token: %w", err)
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("token: %w", err)
	}
	tok := base64.RawURLEncoding.EncodeToString(b[:])
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|noFollow, 0o600)
	if errors.Is(err, fs.ErrExist) {
		// Another process made it first: use theirs.
		return ReadSecretFile(path)
	}
	if err != nil {
		return "", fmt.Errorf("token: %w", err)
	}
	if _, err := f.WriteString(tok + "\n"); err != nil {
		f.Close()
		return "", fmt.Errorf("token: write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("token: write %s: %w", path, err)
	}
	return tok, nil
}

// ReadSecretFile reads a file holding a secret (the first line, trimmed),
// refusing a link, a file that is not regular, and, where file modes mean
// something, one the group or others can read.
func ReadSecretFile(path string) (string, error) {
	f, err := OpenSecretFile(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		return "", err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	line = strings.TrimSpace(line)
	if line == "" {
		return "", fmt.Errorf("%s: empty", path)
	}
	return line, nil
}

// OpenSecretFile opens a file holding secrets for reading after SecretMode
// accepts it: a link, a file that is not regular, or one others may read is
// refused before a byte of it is read. Where the platform has the flag the
// open itself refuses a link too, so a file swapped for one after the check
// is not followed. Its errors name the path, never the contents.
func OpenSecretFile(path string) (*os.File, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if err := SecretMode(path, fi); err != nil {
		return nil, err
	}
	return os.OpenFile(path, os.O_RDONLY|noFollow, 0)
}

// SecretMode refuses a secret file that is a link, not regular, or (off
// Windows) readable by group or others.
func SecretMode(path string, fi fs.FileInfo) error {
	if fi.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("%s: is a symbolic link; refusing to read a secret through it", path)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("%s: not a regular file", path)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0 {
		return fmt.Errorf("%s: mode %04o lets others read it; run: chmod 600 %s", path, fi.Mode().Perm(), path)
	}
	return nil
}
