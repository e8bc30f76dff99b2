// Package secretfile keeps the files that hold secrets: the per-user
// token under AEP_HOME that every aep-hook listener of the user accepts
// and every client of theirs on this machine presents, and the checks any
// secret file passes before a byte of it is read. It is apart from the
// listeners' guard so that a hook can read the token without linking an
// HTTP server.
package secretfile

import (
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/netip"
	"net/url"
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
	if tok, err := Read(path); err == nil {
		return tok, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", err
	}
	// The messages name the file, never its contents; and they put no
	// value after a bare "token:", which redaction would take for one.
	if err := os.MkdirAll(home, 0o700); err != nil {
		return "", fmt.Errorf("making the token file %s: %w", path, err)
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("making the token file %s: %w", path, err)
	}
	tok := base64.RawURLEncoding.EncodeToString(b[:])
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|noFollow, 0o600)
	if errors.Is(err, fs.ErrExist) {
		// Another process made it first: use theirs.
		return Read(path)
	}
	if err != nil {
		return "", fmt.Errorf("making the token file: %w", err)
	}
	if _, err := f.WriteString(tok + "\n"); err != nil {
		f.Close()
		return "", fmt.Errorf("writing the token file: %w", err)
	}
	if err := f.Close(); err != nil {
		return "", fmt.Errorf("writing the token file: %w", err)
	}
	return tok, nil
}

// Read reads a file holding a secret (the first line, trimmed),
// refusing a link, a file that is not regular, and, where file modes mean
// something, one the group or others can read.
func Read(path string) (string, error) {
	f, err := Open(path)
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

// Open opens a file holding secrets for reading after Mode
// accepts it: a link, a file that is not regular, or one others may read is
// refused before a byte of it is read. Where the platform has the flag the
// open itself refuses a link too, so a file swapped for one after the check
// is not followed. Its errors name the path, never the contents.
func Open(path string) (*os.File, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if err := Mode(path, fi); err != nil {
		return nil, err
	}
	return os.OpenFile(path, os.O_RDONLY|noFollow, 0)
}

// Mode refuses a secret file that is a link, not regular, or (off
// Windows) readable by group or others.
func Mode(path string, fi fs.FileInfo) error {
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

// LocalUser is the token a client on this machine presents to a
// listener at url (http, https, ws or wss) when it was given none: the
// user's own token from home, which every aep-hook listener of this user
// accepts by default. It is "" when url is not on loopback (the user's
// token never leaves the machine) or when no token file exists yet; an
// unreadable or unsafe file is an error naming its path.
func LocalUser(home, rawURL string) (string, error) {
	if !LoopbackURL(rawURL) {
		return "", nil
	}
	return ReadUser(home)
}

// ReadUser reads the user's token from home without creating it: "" when
// no listener has made it yet.
func ReadUser(home string) (string, error) {
	tok, err := Read(filepath.Join(home, TokenFile))
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	return tok, err
}

// LoopbackURL reports whether rawURL addresses this machine's loopback
// interface (localhost, 127.0.0.0/8 or ::1).
func LoopbackURL(rawURL string) bool {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" {
		return false
	}
	h := u.Hostname()
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(h)
	return err == nil && ip.IsLoopback()
}
