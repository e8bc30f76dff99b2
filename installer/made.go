package installer

import (
	"bufio"
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// The folders install creates are remembered in a ledger (Env.Made), one
// absolute path per line, so uninstall can take away what install made and
// nothing else: a folder it created goes once it is empty again, and a
// folder that was there before, or that the agent has since filled, stays.
// Without them, a later `install --all` would find an agent by the folder
// aep-hook itself left behind.

// missingDirs lists dir and its ancestors that do not exist yet, deepest
// first: the folders a MkdirAll(dir) would create.
func missingDirs(dir string) []string {
	var out []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Lstat(d); err == nil || !errors.Is(err, fs.ErrNotExist) {
			return out
		}
		out = append(out, d)
		if filepath.Dir(d) == d {
			return out
		}
	}
}

// readMade returns the ledger's folders.
func readMade(ledger string) []string {
	b, err := os.ReadFile(ledger)
	if err != nil {
		return nil
	}
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); filepath.IsAbs(l) {
			out = append(out, filepath.Clean(l))
		}
	}
	return out
}

// writeMade replaces the ledger's folders (removing the ledger when none
// is left).
func writeMade(ledger string, dirs []string) error {
	if len(dirs) == 0 {
		if err := os.Remove(ledger); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	}
	sort.Strings(dirs)
	if err := os.MkdirAll(filepath.Dir(ledger), 0o700); err != nil {
		return err
	}
	return os.WriteFile(ledger, []byte(strings.Join(dirs, "\n")+"\n"), 0o600)
}

// recordMade adds dirs (folders install just created) to the ledger.
func recordMade(ledger string, dirs []string) error {
	if ledger == "" || len(dirs) == 0 {
		return nil
	}
	have := readMade(ledger)
	seen := map[string]bool{}
	for _, d := range have {
		seen[d] = true
	}
	for _, d := range dirs {
		if !seen[d] {
			seen[d] = true
			have = append(have, d)
		}
	}
	return writeMade(ledger, have)
}

// removeMade removes, deepest first, the ledger's folders that hold the
// removed file path and are empty now, and forgets them.
func removeMade(ledger, path string) {
	if ledger == "" {
		return
	}
	dirs := readMade(ledger)
	sort.Slice(dirs, func(i, j int) bool { return len(dirs[i]) > len(dirs[j]) })
	var keep []string
	for _, d := range dirs {
		if within(path, d) && os.Remove(d) == nil {
			continue
		}
		if _, err := os.Lstat(d); errors.Is(err, fs.ErrNotExist) {
			continue // gone some other way: nothing left to remember
		}
		keep = append(keep, d)
	}
	_ = writeMade(ledger, keep)
}

// backups lists the backups install wrote beside path.
func backups(path string) []string {
	m, _ := filepath.Glob(globEscape(path) + ".aep-hook-backup-*")
	sort.Strings(m)
	return m
}

// globEscape quotes the glob metacharacters of a literal path.
func globEscape(p string) string {
	r := strings.NewReplacer(`\`, `\\`, "*", `\*`, "?", `\?`, "[", `\[`)
	if filepath.Separator == '\\' {
		r = strings.NewReplacer("*", "[*]", "?", "[?]", "[", "[[]")
	}
	return r.Replace(p)
}

// MadeFolders lists the folders the ledger says install created and that
// still exist.
func MadeFolders(ledger string) []string {
	var out []string
	for _, d := range readMade(ledger) {
		if _, err := os.Lstat(d); err == nil {
			out = append(out, d)
		}
	}
	return out
}
