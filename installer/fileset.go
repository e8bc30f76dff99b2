package installer

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// FileSet is a Format whose registrations are files of their own in a
// folder, one per event (Cline's hook scripts), rather than entries in one
// settings file.
type FileSet interface {
	Format
	// Plan returns the file changes in folder dir for scope s.
	Plan(e Env, s Scope, dir string, regs []Reg, ours Owner, remove bool) ([]Change, error)
	// ScanDir lists the registrations of ours in dir.
	ScanDir(dir string, ours Owner) ([]Found, error)
}

// HookScripts is the FileSet of executable hook scripts named after their
// event. A file of that name that is not aep-hook's is never overwritten or
// removed: install says so and leaves it.
type HookScripts struct {
	// Exports, when set, names the environment variables whose values at
	// install time the script sets before it runs aep-hook (for agents
	// whose hooks do not inherit the user's environment), per scope. A
	// value set where the hook runs still wins.
	Exports func(Scope) []string
}

// marker is the comment that names a script as aep-hook's.
const marker = "# aep-hook: records this hook as AEP events; `aep-hook uninstall` removes this file."

// Script is the content of one hook script running command, with the
// settings in force in e baked in as `export NAME="${NAME:-value}"`.
func (h HookScripts) Script(e Env, s Scope, command string) []byte {
	var b bytes.Buffer
	b.WriteString("#!/bin/sh\n" + marker + "\n")
	if h.Exports != nil {
		for _, name := range h.Exports(s) {
			if v := e.getenv(name); v != "" {
				fmt.Fprintf(&b, "export %s=\"${%s:-\"%s\"}\"\n", name, name, shellDouble(v))
			}
		}
	}
	b.WriteString("exec " + command + "\n")
	return b.Bytes()
}

// shellDouble escapes v for a double-quoted shell word.
func shellDouble(v string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "$", `\$`, "`", "\\`")
	return r.Replace(v)
}

// scriptCommand returns the command a script of ours runs, "" when the
// content is not one of ours.
func scriptCommand(b []byte, ours Owner) string {
	if !bytes.Contains(b, []byte(marker)) {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), "exec "); ok && ours(rest) {
			return rest
		}
	}
	return ""
}

// Plan implements FileSet.
func (h HookScripts) Plan(e Env, s Scope, dir string, regs []Reg, ours Owner, remove bool) ([]Change, error) {
	var out []Change
	for _, r := range regs {
		path := filepath.Join(dir, r.Event)
		old, err := readFile(path)
		if err != nil {
			return out, err
		}
		mine := old != nil && scriptCommand(old, ours) != ""
		c := Change{Path: path, Old: old, New: old, Mode: 0o755, NoBackup: mine}
		switch {
		case remove && mine:
			c.New = nil
		case remove:
		case old == nil || mine:
			c.New = h.Script(e, s, r.Command)
		default:
			c.Notes = []string{fmt.Sprintf("%s is not aep-hook's and was left alone: add `%s` to it by hand", path, r.Command)}
		}
		out = append(out, c)
	}
	return out, nil
}

// ScanDir implements FileSet.
func (h HookScripts) ScanDir(dir string, ours Owner) ([]Found, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Found
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		path := filepath.Join(dir, e.Name())
		b, err := readFile(path)
		if err != nil {
			continue
		}
		if cmd := scriptCommand(b, ours); cmd != "" {
			if st, err := os.Stat(path); err == nil && st.Mode().Perm()&0o111 == 0 {
				cmd += " (not executable)"
			}
			out = append(out, Found{Event: e.Name(), Command: cmd, Key: path})
		}
	}
	return out, nil
}

// Install, Uninstall and Scan make HookScripts a Format; the installer
// always goes through Plan and ScanDir.
func (HookScripts) Install([]byte, []Reg, Owner) ([]byte, error) {
	return nil, errors.New("hook scripts are a file set")
}

// Uninstall implements Format (unused: see Plan).
func (HookScripts) Uninstall([]byte, Owner) ([]byte, error) {
	return nil, errors.New("hook scripts are a file set")
}

// Scan implements Format (unused: see ScanDir).
func (HookScripts) Scan([]byte, Owner) ([]Found, error) {
	return nil, errors.New("hook scripts are a file set")
}
