package installer

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Scope says whose settings an install changes: the user's (every project)
// or one project's (the working directory).
type Scope string

// The two scopes.
const (
	User    Scope = "user"
	Project Scope = "project"
)

// ParseScope checks a --scope value.
func ParseScope(s string) (Scope, error) {
	switch Scope(s) {
	case User, Project:
		return Scope(s), nil
	}
	return "", fmt.Errorf("scope %q: want user or project", s)
}

// Env is the machine as the installer sees it. Tests fill it with a
// temporary home; nothing in this package reads the process environment
// or the real home directly.
type Env struct {
	Home   string // the user's home directory
	Dir    string // the project directory (project scope, doctor's probe cwd)
	Binary string // absolute path of the aep-hook binary to register
	// Program, when set, is the command line registered in place of the
	// quoted Binary: a wrapper that takes aep-hook's arguments after it.
	// The real-agent harness registers its recorder this way, through the
	// same plans `aep-hook install` writes. Plugin files still start Binary.
	Program  string
	Getenv   func(string) string          // the environment (vendor *_HOME variables)
	LookPath func(string) (string, error) // finds agent binaries on PATH
	Now      func() time.Time             // stamps backups
	// Made is the ledger of the folders install created, which uninstall
	// removes again once they are empty ("": none recorded).
	Made string
	// Control, when set, is the control posture the held registrations
	// carry (install --control); nil writes them observe-only.
	Control *Control
}

func (e Env) getenv(k string) string {
	if e.Getenv == nil {
		return ""
	}
	return e.Getenv(k)
}

// program is the registered command line's program: Program, or the
// quoted Binary.
func (e Env) program() string {
	if e.Program != "" {
		return e.Program
	}
	return Quote(e.Binary)
}

// owner recognises agent's registrations: any aep-hook's, and those that
// run e's program or binary.
func (e Env) owner(agent string) Owner {
	progs := []string{e.program()}
	if e.Binary != "" {
		progs = append(progs, Quote(e.Binary))
	}
	return Owns(agent, progs...)
}

// homeOr returns the folder named by the environment variable env, or
// home/def when it is unset.
func (e Env) homeOr(env, def string) string {
	if v := e.getenv(env); v != "" {
		return v
	}
	return filepath.Join(e.Home, def)
}

// Hook is one event registration of an agent.
type Hook struct {
	Event   string // the vendor's event (or hook file) name
	Matcher string // the tool matcher, where the vendor takes one ("" for none)
	Timeout int    // the vendor's timeout field, 0 to leave it to the vendor
}

// Agent is one vendor's registration facts: where its settings live per
// scope, their format, the events to register and what the vendor needs
// beyond the file. Each vendor's facts sit in a file of their own.
type Agent struct {
	// Name is the adapter: the command registered is `aep-hook <Name>`.
	Name string
	// Title is the product name shown to people.
	Title string
	// Binaries are the commands whose presence on PATH shows the agent is
	// installed.
	Binaries []string
	// ConfigDir is the vendor's user folder; its presence also shows the
	// agent is installed.
	ConfigDir func(Env) string
	// Scopes lists the scopes the vendor reads registrations from.
	Scopes []Scope
	// Path is the settings file (or hook folder) for a scope.
	Path func(Env, Scope) string
	// Format reads and writes the registrations in that file.
	Format Format
	// Hooks are the events to register.
	Hooks []Hook
	// Command builds the registered command line for one hook from the
	// program (nil: the program and the adapter name).
	Command func(prog string, h Hook) string
	// Notes states what the vendor needs beyond the file, for a scope and
	// the settings path (trust steps, consent prompts).
	Notes func(Env, Scope, string) []string
	// Trust, when set, reports whether the vendor will run the registered
	// hooks (Codex hook trust, Gemini folder trust, Hermes consent).
	Trust func(Env, Scope, string, []Found) Trust
	// Probe is the synthetic moment doctor fires through the registration.
	Probe Probe
	// Held are the registrations whose moments the agent's table can hold
	// for an answer over the control loop (none: observe-only).
	Held Held
	// Timeout is the vendor's hook timeout in seconds when a registration
	// sets none, where its documentation or source states it (0: not
	// stated here).
	Timeout int
}

// Trust is a vendor's verdict on registered hooks.
type Trust struct {
	OK     bool   // the vendor will run them
	Detail string // what was checked, or what is missing
	Fix    string // the exact step that trusts them
}

// Probe is one synthetic vendor moment: the event it fires and the stdin
// payload, with SESSION where the session id goes.
type Probe struct {
	Event   string
	Payload string
}

// Found is one registration of ours read back from a settings file.
type Found struct {
	Event   string
	Command string
	Key     string // the vendor's position key (Codex: group and handler index)
	Timeout int    // the registered timeout field (0: none, the vendor's default)
}

// Format is how one vendor's registrations are stored.
type Format interface {
	// Install returns the file's new content with every reg present. old
	// is nil when the file does not exist.
	Install(old []byte, regs []Reg, ours Owner) ([]byte, error)
	// Uninstall returns the content with every registration of ours
	// removed; nil means the file should be removed (install created it
	// and nothing else is left).
	Uninstall(old []byte, ours Owner) ([]byte, error)
	// Scan lists the registrations of ours in the file.
	Scan(old []byte, ours Owner) ([]Found, error)
}

// Reg is one registration to write: a hook and its command line.
type Reg struct {
	Hook
	Command string
}

// Owner reports whether a command line is one of aep-hook's registrations
// for the agent.
type Owner func(command string) bool

// Owns returns the Owner for agent: a command whose program is aep-hook
// (any path, any aep-hook* build such as aep-hook-grpc) or one of progs
// (command lines: a quoted binary, or a wrapper's words), followed by the
// adapter name; or a link named aep-<agent>.
func Owns(agent string, progs ...string) Owner {
	return func(command string) bool {
		// Leading NAME=value words are the hook's settings (install
		// --control writes them), not its program.
		_, words := CommandEnv(command)
		if len(words) == 0 {
			return false
		}
		base := strings.TrimSuffix(filepath.Base(words[0]), ".exe")
		if base == "aep-"+agent {
			return true
		}
		if strings.HasPrefix(base, "aep-hook") && len(words) > 1 && words[1] == agent {
			return true
		}
		for _, p := range progs {
			if n := runs(words, p); n > 0 && len(words) > n && words[n] == agent {
				return true
			}
		}
		return false
	}
}

// runs returns how many of words are the command line prog (its program
// path compared cleaned), 0 when words do not start with it.
func runs(words []string, prog string) int {
	pw := SplitCommand(prog)
	if len(pw) == 0 || len(words) < len(pw) || filepath.Clean(words[0]) != filepath.Clean(pw[0]) ||
		!slices.Equal(words[1:len(pw)], pw[1:]) {
		return 0
	}
	return len(pw)
}

// Regs are the registrations install writes for the program prog (a
// command line: the quoted binary, or a wrapper's).
func (a Agent) Regs(prog string) []Reg {
	out := make([]Reg, len(a.Hooks))
	for i, h := range a.Hooks {
		c := prog + " " + a.Name
		if a.Command != nil {
			c = a.Command(prog, h)
		}
		out[i] = Reg{Hook: h, Command: c}
	}
	return out
}

// Supports reports whether the agent reads registrations at scope s.
func (a Agent) Supports(s Scope) bool {
	for _, x := range a.Scopes {
		if x == s {
			return true
		}
	}
	return false
}

// Present reports whether the agent looks installed: one of its binaries
// on PATH, or its user folder.
func (a Agent) Present(e Env) bool {
	p := a.Presence(e)
	return p.Binary != "" || p.Folder != ""
}

// Presence is how an agent was found on this machine.
type Presence struct {
	Binary string // the first of its binaries found on PATH ("" when none)
	Folder string // its user folder, when that exists
}

// Presence looks for the agent: its binaries on PATH and its user folder.
func (a Agent) Presence(e Env) Presence {
	var p Presence
	if e.LookPath != nil {
		for _, b := range a.Binaries {
			if path, err := e.LookPath(b); err == nil {
				p.Binary = path
				break
			}
		}
	}
	if a.ConfigDir != nil {
		if st, err := os.Stat(a.ConfigDir(e)); err == nil && st.IsDir() {
			p.Folder = a.ConfigDir(e)
		}
	}
	return p
}

// Change is one file the installer writes, removes or leaves alone.
type Change struct {
	Agent string
	Path  string
	Old   []byte // nil: the file does not exist
	New   []byte // nil: remove the file
	Mode  fs.FileMode
	Notes []string // what the vendor needs beyond the file
	// NoBackup skips the backup: the old file is entirely aep-hook's own
	// (a hook script it wrote, a settings file holding nothing else).
	NoBackup bool
	// Made is the ledger of the folders install created (Env.Made).
	Made string
	// Target, when Path is a symbolic link install may write through, is
	// the file it leads to (see checkLink); Apply refuses any other link.
	Target string
}

// Changed reports whether applying c does anything.
func (c Change) Changed() bool {
	if (c.Old == nil) != (c.New == nil) {
		return true
	}
	return !bytes.Equal(c.Old, c.New)
}

// ErrScope says the agent has no settings at the requested scope.
var ErrScope = errors.New("not supported at this scope")

// PlanInstall computes the changes that register agent a at scope s.
func PlanInstall(a Agent, e Env, s Scope) ([]Change, error) {
	return plan(a, e, s, false)
}

// PlanUninstall computes the changes that remove agent a's registrations
// at scope s.
func PlanUninstall(a Agent, e Env, s Scope) ([]Change, error) {
	return plan(a, e, s, true)
}

func plan(a Agent, e Env, s Scope, remove bool) ([]Change, error) {
	if !a.Supports(s) {
		return nil, fmt.Errorf("%s: %w (it reads %s)", a.Name, ErrScope, scopeList(a.Scopes))
	}
	path := a.Path(e, s)
	var notes []string
	if a.Notes != nil && !remove {
		notes = a.Notes(e, s, path)
	}
	if !remove {
		notes = append(notes, a.ControlNotes(e.Control)...)
	}
	if d, ok := a.Format.(FileSet); ok {
		cs, err := d.Plan(e, s, path, a.regs(e), e.owner(a.Name), remove)
		if len(cs) > 0 {
			cs[0].Notes = append(notes, cs[0].Notes...)
		}
		for i := range cs {
			cs[i].Agent, cs[i].Made = a.Name, e.Made
		}
		return cs, err
	}
	c := Change{Agent: a.Name, Path: path, Mode: 0o644, Notes: notes, Made: e.Made}
	target, note, err := checkLink(e, s, path)
	if err != nil {
		return nil, err
	}
	c.Target = target
	if note != "" && !remove {
		c.Notes = append(c.Notes, note)
	}
	old, err := readFile(path)
	if err != nil {
		return nil, err
	}
	if st, err := os.Stat(path); err == nil {
		c.Mode = st.Mode().Perm()
	}
	c.Old = old
	ours, regs := e.owner(a.Name), a.regs(e)
	switch {
	case remove && old == nil:
	case remove:
		c.New, err = a.Format.Uninstall(old, ours)
		// A file left with nothing but aep-hook's hooks goes whole: there
		// is nothing of the user's in it to back up.
		c.NoBackup = err == nil && c.New == nil
	default:
		c.New, err = a.Format.Install(old, regs, ours)
		if err == nil {
			err = checkRegistered(a.Format, c.New, regs, ours)
		}
		if err == nil && old != nil {
			// A file holding nothing but aep-hook's own registrations
			// (install made it) has nothing of the user's to keep.
			rest, uerr := a.Format.Uninstall(old, ours)
			c.NoBackup = uerr == nil && rest == nil
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if !remove {
		return []Change{c}, nil
	}
	// Uninstall also takes the backups that hold nothing but aep-hook's
	// own registrations; a backup of the user's own settings stays.
	var cs []Change
	for _, b := range backups(path) {
		old, err := readFile(b)
		if err != nil || old == nil {
			continue
		}
		if rest, err := a.Format.Uninstall(old, ours); err == nil && rest == nil {
			cs = append(cs, Change{Agent: a.Name, Path: b, Old: old, Mode: 0o600, NoBackup: true, Made: e.Made})
		}
	}
	return append(cs, c), nil
}

// checkRegistered reads the edited file back and confirms every reg is
// there, so a format edit that went wrong is refused rather than written.
func checkRegistered(f Format, b []byte, regs []Reg, ours Owner) error {
	found, err := f.Scan(b, ours)
	if err != nil {
		return fmt.Errorf("the edited file does not read back (%v); register by hand", err)
	}
	have := map[string]string{}
	for _, x := range found {
		have[x.Event] = x.Command
	}
	for _, r := range regs {
		if have[r.Event] != r.Command {
			return fmt.Errorf("the edit did not take for %s; register by hand", r.Event)
		}
	}
	return nil
}

func scopeList(ss []Scope) string {
	var b []string
	for _, s := range ss {
		b = append(b, string(s))
	}
	return strings.Join(b, ", ")
}

// maxSettings bounds a settings file the installer will read.
const maxSettings = 16 << 20

// readFile returns the file's bytes, nil when it does not exist.
func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.IsDir() {
		return nil, fmt.Errorf("%s is a folder, not a settings file", path)
	}
	if st.Size() > maxSettings {
		return nil, fmt.Errorf("%s is %d bytes; refusing to edit a settings file above %d", path, st.Size(), maxSettings)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxSettings+1))
	if err != nil {
		return nil, err
	}
	if b == nil {
		b = []byte{}
	}
	return b, nil
}

// Status is what doctor needs to know about one agent at one scope.
type Status struct {
	Path    string
	Found   []Found
	Missing []string // events registered by install but absent here
	Foreign []string // registrations of ours whose command is not this binary
	Err     error
}

// Inspect reads agent a's registrations at scope s.
func Inspect(a Agent, e Env, s Scope) Status {
	st := Status{Path: a.Path(e, s)}
	var found []Found
	var err error
	if d, ok := a.Format.(FileSet); ok {
		found, err = d.ScanDir(st.Path, e.owner(a.Name))
	} else {
		var b []byte
		b, err = readFile(st.Path)
		if err == nil && b != nil {
			found, err = a.Format.Scan(b, e.owner(a.Name))
		}
	}
	if err != nil {
		st.Err = err
		return st
	}
	st.Found = found
	have := map[string]bool{}
	for _, f := range found {
		have[f.Event] = true
		if _, w := CommandEnv(f.Command); e.Binary != "" && runs(w, e.program()) == 0 && runs(w, Quote(e.Binary)) == 0 {
			st.Foreign = append(st.Foreign, f.Event+": "+f.Command)
		}
	}
	for _, h := range a.Hooks {
		if !have[h.Event] {
			st.Missing = append(st.Missing, h.Event)
		}
	}
	return st
}

// notOurs returns the decoded hook entries ({command, ...} tables) whose
// command is not ours: what a verified edit must leave as it was.
func notOurs(items []any, ours Owner) []any {
	var keep []any
	for _, it := range items {
		if t, ok := it.(map[string]any); ok {
			if c, _ := t["command"].(string); ours(c) {
				continue
			}
		}
		keep = append(keep, it)
	}
	return keep
}
