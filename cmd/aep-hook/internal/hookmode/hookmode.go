// Package hookmode is one hook firing as both builds of aep-hook run it: the
// full binary (every verb, behind kong) and the hook-only build that the
// installed aep-hook is (the hook path and nothing else, so a hook process
// starts like the smallest Go program). It parses the hook-mode command line
// by hand and runs the fail-open hook runner on the file emitter; delivery
// to --out destinations stays with the full binary.
package hookmode

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/aep-hook/aep-hook/adapters/hook"
	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/redact"
	"github.com/aep-hook/aep-hook/shim"
	"github.com/aep-hook/aep-hook/shim/control"
)

// Capture are the capture settings of every emitting mode, as given.
type Capture struct {
	Capture         string
	CaptureOverride []string
	SecretEnv       []string
	KeepPII         bool
}

// Config is the shim configuration the settings and environment give.
func (c Capture) Config(getenv func(string) string) shim.Config {
	return shim.Config{
		Home:      getenv("AEP_HOME"),
		Host:      getenv("AEP_HOST"),
		Capture:   c.Capture,
		Overrides: CleanList(c.CaptureOverride),
		SecretEnv: CleanList(c.SecretEnv),
		NoPII:     c.KeepPII,
		Tenant:    getenv("AEP_TENANT"),
	}
}

// Flags are hook mode's settings: the capture settings, the delivery
// settings (used by the full binary only) and the moment's name when the
// vendor passes it on the command line.
type Flags struct {
	Capture
	Out            []string
	Token          string
	Insecure       bool
	OtlpMaxCapture string
	Hook           string
	// Secure is Go's dialer and TLS for a control-enabled hook's relay. The
	// full binary sets it; the hook-only build leaves it nil, so as not to
	// link crypto/tls and net, and hands a hook whose relay needs them (a
	// wss:// one, one named by a host name) to the full binary (see
	// [RelayNeedsSecure]).
	Secure control.Secure
}

// RelayNeedsSecure returns the relay URL of a hook with this environment
// when it holds its moments over a relay that only a [Flags.Secure]
// reaches (see control.NeedsSecure), "" otherwise.
func RelayNeedsSecure(getenv func(string) string) string {
	c, err := control.FromEnv(getenv)
	if err == nil && c != nil && control.NeedsSecure(c.URL) {
		return c.URL
	}
	return ""
}

// AdapterFromArgv0 returns the adapter a link named aep-<adapter> stands
// for, "" for any other name.
func AdapterFromArgv0(arg0 string) string {
	base := strings.TrimSuffix(filepath.Base(arg0), ".exe")
	if name, ok := strings.CutPrefix(base, "aep-"); ok && name != "hook" {
		for _, known := range adapterNames {
			if name == known {
				return name
			}
		}
	}
	return ""
}

// adapterNames are mapping.Names: the names alone, because asking the
// registry builds every table and so links every vendor's mapping code
// (the stream, OTLP and ACP adapters' among it) into the hook-only build,
// where only the hook vendors' is run; every hook process would map and
// verify that code at start. TestAdapterNames holds this list to the
// registry.
var adapterNames = [...]string{"a2a", "acp", "agui", "antigravity", "claude-code", "cline", "codex", "codex-otel",
	"gemini-cli", "hermes", "kilocode", "kilocode-sse", "kimi-code", "kimi-web", "openclaw", "opencode",
	"opencode-sse", "openhands", "pi", "qwen-code", "vscode", "vscode-otel"}

// HookVendor returns the hook vendor args name (args[0]), if they name one.
func HookVendor(args []string) (mapping.Vendor, bool) {
	if len(args) == 0 {
		return mapping.Vendor{}, false
	}
	for _, h := range hookVendors {
		if h.name == args[0] {
			return h.table(), true
		}
	}
	return mapping.Vendor{}, false
}

// hookVendors are the tables of the vendors whose transport is the hook,
// by name. mapping.Lookup builds every table and sorts them to find one;
// a hook process builds only its own (TestHookVendors holds this list to
// mapping.Vendors).
var hookVendors = [...]struct {
	name  string
	table func() mapping.Vendor
}{
	{"antigravity", mapping.Antigravity},
	{"claude-code", mapping.ClaudeCode},
	{"cline", mapping.Cline},
	{"codex", mapping.Codex},
	{"gemini-cli", mapping.Gemini},
	{"hermes", mapping.Hermes},
	{"kimi-code", mapping.KimiCode},
	{"qwen-code", mapping.Qwen},
	{"vscode", mapping.VSCode},
}

// ParseArgs reads the hook-mode flags (args after the adapter's name) by
// hand, with kong's semantics: flags over environment twins, repeatable
// lists also split on commas, lists given as flags replacing their twin.
// Building kong's model of the whole command tree costs more than the rest
// of a hook together. Anything it does not recognise (--help, an unknown
// flag, a bad value) returns ok=false: the full command line parser takes
// over.
func ParseArgs(args []string, getenv func(string) string) (c Flags, ok bool) {
	list := func(env string) []string {
		if v := getenv(env); v != "" {
			return SplitList(v)
		}
		return nil
	}
	c.Capture.Capture = getenv("AEP_CAPTURE")
	c.CaptureOverride = list("AEP_CAPTURE_OVERRIDES")
	c.SecretEnv = list("AEP_SECRET_ENV")
	c.Out = list("AEP_OUT")
	c.Token = getenv("AEP_TOKEN")
	c.OtlpMaxCapture = getenv("AEP_OTLP_MAX_CAPTURE")
	if v := getenv("AEP_INSECURE"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return c, false
		}
		c.Insecure = b
	}
	flagged := map[string]bool{}
	setList := func(name string, dst *[]string, v string) {
		if !flagged[name] {
			// Non-nil: an empty override list given on purpose means no
			// overrides (redact.ParsePolicy), not the default.
			*dst, flagged[name] = []string{}, true
		}
		*dst = append(*dst, SplitList(v)...)
	}
	positional := 0
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") || a == "-" {
			if positional++; positional > 1 {
				return c, false
			}
			c.Hook = a
			continue
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "--") {
			return c, false
		}
		switch name {
		case "keep-pii", "no-pii", "insecure":
			b := true
			if hasVal {
				var err error
				if b, err = strconv.ParseBool(val); err != nil {
					return c, false
				}
			}
			if name != "insecure" {
				c.KeepPII = b
			} else {
				c.Insecure = b
			}
			continue
		case "capture", "capture-override", "secret-env", "out", "token", "otlp-max-capture":
		default:
			return c, false
		}
		if !hasVal {
			if i+1 >= len(args) {
				return c, false
			}
			i++
			val = args[i]
		}
		switch name {
		case "capture":
			c.Capture.Capture = val
		case "capture-override":
			setList(name, &c.CaptureOverride, val)
		case "secret-env":
			setList(name, &c.SecretEnv, val)
		case "out":
			setList(name, &c.Out, val)
		case "token":
			c.Token = val
		case "otlp-max-capture":
			c.OtlpMaxCapture = val
		}
	}
	return c, true
}

// CleanList is a list flag as the settings read it, however it was parsed:
// items trimmed, empty ones dropped (kong keeps both). It keeps a nil list
// nil: nil means "the default" where an empty list does not.
func CleanList(xs []string) []string {
	if xs == nil {
		return nil
	}
	out := []string{}
	for _, x := range xs {
		out = append(out, SplitList(x)...)
	}
	return out
}

// SplitList splits a comma list, trimming items and dropping empty ones.
func SplitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// Result is what one firing left for its caller.
type Result struct {
	Code        int
	Interrupted bool // the agent asked the hook to stop: the record is written, delivery can wait for ship
	Config      shim.Config
	Emitter     *shim.Emitter
}

// Run handles one hook firing of vendor v: the payload on in, the reply on
// out, the events in the local log (and extra sinks after it). setup is a
// configuration failure the caller already fell back from; it is
// recorded. The exit status is always 0.
func Run(v mapping.Vendor, f Flags, setup error, in io.Reader, out io.Writer, getenv func(string) string, extra ...shim.Sink) Result {
	cfg := f.Config(getenv)
	home := cfg.HomeDir()
	p, err := cfg.Policy()
	if err != nil {
		// Fail closed: record and continue on the metadata posture.
		setup, p = err, redact.Policy{Default: redact.Metadata}
	}
	if _, err := cfg.TenantAttr(); err != nil {
		// Recorded, and the events go out without the attribute.
		setup = errors.Join(setup, err)
	}
	ctl, err := control.FromEnv(getenv)
	if err != nil {
		// Recorded, and the hook stays observe-only.
		setup = errors.Join(setup, err)
	}
	if ctl != nil {
		ctl.Secure = f.Secure
	}
	d, _ := Deadline(getenv("AEP_HOOK_DEADLINE"))
	// A session lock whose holders make no progress for a third of the
	// deadline has a stuck holder: the hook then writes without it, in a
	// fresh epoch, rather than lose the moment to the deadline.
	cfg.LockWait = d / 3
	r := hook.Runner{
		Vendor:   v,
		Emitter:  cfg.NewFileEmitter(p, extra...),
		Errors:   shim.NewErrorLog(home),
		Deadline: d,
		Setup:    setup,
		Control:  ctl,
		// Without destinations nothing follows the reply that a signal
		// should cancel (the sweep is harmless), so nothing need watch for
		// signals: ignoring them saves the hook a goroutine and a thread.
		// (The runner catches them once a relay takes a held moment's
		// connection: the wait ends when the agent gives up on its hook.)
		IgnoreSignals: len(extra) == 0,
	}
	code := r.Run(f.Hook, in, out)
	return Result{Code: code, Interrupted: r.Interrupted(), Config: cfg, Emitter: r.Emitter}
}

// Sessions may never end, so idle session state is swept by recency: about
// one hook in sweepEvery, after its reply, removes up to sweepMax state
// files of its agent untouched for sweepAge (the logs stay).
const (
	sweepEvery = 256
	sweepAge   = 30 * 24 * time.Hour
	sweepMax   = 32
)

// SweepOccasionally is the recency sweep of the agent's idle session
// state, run by about one hook in 256 after its reply.
func SweepOccasionally(em *shim.Emitter, agent string) {
	fs, ok := em.Store.(*shim.FileStore)
	if !ok || time.Now().UnixNano()%sweepEvery != 0 {
		return
	}
	fs.Sweep(agent, sweepAge, sweepMax)
}

// MaxDeadline caps AEP_HOOK_DEADLINE: the vendors' own hook timeouts
// start near it, and a hook that outlived its agent's patience would
// harm it.
const MaxDeadline = 30 * time.Second

// Deadline reads AEP_HOOK_DEADLINE (a Go duration): "" is the default,
// a value above MaxDeadline is capped there, one that is not a positive
// duration falls back to the default. note says what was done to a value
// that was not taken as given ("" when it was), for doctor to show.
func Deadline(s string) (d time.Duration, note string) {
	if s == "" {
		return hook.DefaultDeadline, ""
	}
	d, err := time.ParseDuration(s)
	switch {
	case err != nil || d <= 0:
		return hook.DefaultDeadline, fmt.Sprintf("not a positive duration: hooks use the default %s", hook.DefaultDeadline)
	case d > MaxDeadline:
		return MaxDeadline, fmt.Sprintf("over the %s cap: hooks use %s", MaxDeadline, MaxDeadline)
	}
	return d, ""
}
