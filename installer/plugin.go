package installer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// PluginFile is the FileSet of one plugin file aep-hook writes whole into
// an agent's plugin folder (the pi extension, the OpenCode / Kilo plugin).
// Its one registration (the agent's single Hook) is the file; a file of
// that name that is not aep-hook's (no Marker) is never overwritten or
// removed, and the folder's other files are never read.
type PluginFile struct {
	// Name is the file's name in the folder.
	Name string
	// Marker is a line only aep-hook's file carries.
	Marker []byte
	// Content is the file for the aep-hook binary bin.
	Content func(bin string) []byte
	// Bin reads back the binary a file of ours runs ("" when unknown).
	Bin func(file []byte) string
	// Command is the command line the plugin runs for bin (shown by
	// status, run by doctor's probe).
	Command func(bin string) string
	// Posture, when set, is the file for bin with a control posture
	// written in (the environment settings a held registration carries:
	// the pi extension reads them itself); PostureOf reads them back.
	Posture   func(bin string, env map[string]string) []byte
	PostureOf func(file []byte) map[string]string
}

// Plan implements FileSet.
func (p PluginFile) Plan(e Env, _ Scope, dir string, regs []Reg, _ Owner, remove bool) ([]Change, error) {
	path := filepath.Join(dir, p.Name)
	old, err := readFile(path)
	if err != nil {
		return nil, err
	}
	mine := old != nil && bytes.Contains(old, p.Marker)
	c := Change{Path: path, Old: old, New: old, Mode: 0o644, NoBackup: mine}
	switch {
	case remove && mine:
		c.New = nil
	case remove:
	case old == nil || mine:
		c.New = p.Content(e.Binary)
		if env := p.posture(regs); len(env) > 0 {
			c.New = p.Posture(e.Binary, env)
		}
	default:
		c.Notes = []string{fmt.Sprintf("%s is not aep-hook's and was left alone: move it away and install again", path)}
	}
	return []Change{c}, nil
}

// ScanDir implements FileSet: the plugin file, when it is ours, is the
// registration of every event the agent lists (the plugin forwards them
// all).
func (p PluginFile) ScanDir(dir string, _ Owner) ([]Found, error) {
	path := filepath.Join(dir, p.Name)
	b, err := readFile(path)
	if err != nil || b == nil || !bytes.Contains(b, p.Marker) {
		return nil, err
	}
	cmd := p.Command(p.Bin(b))
	if p.PostureOf != nil {
		// The posture reads back as a held registration's leading
		// settings, in the order Control writes them.
		env := p.PostureOf(b)
		var rest []string
		for k := range env {
			if envName(k) && !slices.Contains(postureOrder, k) {
				rest = append(rest, k)
			}
		}
		sort.Strings(rest)
		var words []string
		for _, k := range append(slices.Clone(postureOrder), rest...) {
			if v, ok := env[k]; ok {
				words = append(words, k+"="+Quote(v))
			}
		}
		if len(words) > 0 {
			cmd = strings.Join(words, " ") + " " + cmd
		}
	}
	return []Found{{Event: p.Name, Command: cmd, Key: path}}, nil
}

// postureOrder is the order Control.words writes the settings in.
var postureOrder = []string{"AEP_CONTROL", "AEP_RELAY", "AEP_CONTROL_BUDGET", "AEP_CONTROL_TOOLS"}

// posture is the control posture the registration regs carries (its
// command line's leading settings), nil when the file writes none.
func (p PluginFile) posture(regs []Reg) map[string]string {
	if p.Posture == nil || len(regs) == 0 {
		return nil
	}
	env, _ := CommandEnv(regs[0].Command)
	return env
}

// Install, Uninstall and Scan make PluginFile a Format; the installer
// always goes through Plan and ScanDir.
func (PluginFile) Install([]byte, []Reg, Owner) ([]byte, error) {
	return nil, errors.New("a plugin file is a file set")
}

// Uninstall implements Format (unused: see Plan).
func (PluginFile) Uninstall([]byte, Owner) ([]byte, error) {
	return nil, errors.New("a plugin file is a file set")
}

// Scan implements Format (unused: see ScanDir).
func (PluginFile) Scan([]byte, Owner) ([]Found, error) {
	return nil, errors.New("a plugin file is a file set")
}

// pluginBin reads the aep-hook path written into a plugin of ours (the pi
// extension, the OpenCode / Kilo plugin): the string literal after
// `process.env.AEP_HOOK_BIN || `; "" when there is none.
func pluginBin(file []byte) string {
	const lead = `process.env.AEP_HOOK_BIN || `
	i := bytes.Index(file, []byte(lead))
	if i < 0 {
		return ""
	}
	rest := file[i+len(lead):]
	end := bytes.IndexByte(rest, '\n')
	if end < 0 {
		return ""
	}
	lit := bytes.TrimSuffix(bytes.TrimSpace(rest[:end]), []byte(";"))
	var bin string
	if json.Unmarshal(lit, &bin) != nil {
		return ""
	}
	return bin
}
