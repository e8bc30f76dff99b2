package shim

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/aep-hook/aep-hook/redact"
)

// Config is what every emitting mode needs, gathered from flags and their
// environment twins by main.
type Config struct {
	Home      string   // AEP_HOME; "" means ~/.aep
	Host      string   // AEP_HOST; "" means the machine's host name
	Capture   string   // AEP_CAPTURE
	Overrides []string // AEP_CAPTURE_OVERRIDES; nil means the default
	SecretEnv []string // AEP_SECRET_ENV
	NoPII     bool
	Tenant    string // AEP_TENANT: stamped on every event as the extension attribute tenant
	// LockWait bounds each wait for a session's lock (and its log's); past
	// it a hook writes without the lock, in a fresh epoch (FileStore.Unlocked).
	// 0 waits as long as it takes.
	LockWait time.Duration
}

// HomeDir resolves the AEP home.
func (c Config) HomeDir() string {
	if c.Home != "" {
		return c.Home
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".aep")
	}
	// No home: this user's private folder in the temporary directory, and
	// never one someone else may have prepared there (then nothing can be
	// written: a path under the null device).
	if dir, err := FallbackDir(); err == nil {
		return filepath.Join(dir, "home")
	}
	return filepath.Join(os.DevNull, "aep")
}

// HostName resolves the source host.
func (c Config) HostName() string {
	if c.Host != "" {
		return c.Host
	}
	if h, err := os.Hostname(); err == nil && h != "" {
		return h
	}
	return "localhost"
}

// Policy parses the capture settings. On error it returns the fail-closed
// metadata policy with the error, for the caller to report or record.
func (c Config) Policy() (redact.Policy, error) {
	return redact.ParsePolicy(c.Capture, c.Overrides)
}

// Pipeline builds the redaction pipeline (it compiles nothing until used).
func (c Config) Pipeline() *redact.Pipeline {
	home, _ := os.UserHomeDir()
	return redact.NewPipeline(redact.Options{
		Home: home, SecretEnv: c.SecretEnv, Getenv: os.Getenv, NoPII: c.NoPII,
	})
}

// TenantAttr returns the tenant to stamp on events: "" when none is
// configured, and an error (with "") when the configured value is not a
// ValidTenant, so the caller can report it; an emitter never writes a
// malformed extension attribute (AEP-0001 §5.4).
func (c Config) TenantAttr() (string, error) {
	if c.Tenant == "" {
		return "", nil
	}
	if err := ValidTenant(c.Tenant); err != nil {
		return "", fmt.Errorf("AEP_TENANT: %w", err)
	}
	return c.Tenant, nil
}

func (c Config) tenant() string {
	t, _ := c.TenantAttr()
	return t
}

// LogRoot is the JSONL log root under the home.
func (c Config) LogRoot() string { return filepath.Join(c.HomeDir(), "logs") }

// NewFileEmitter wires the on-disk emitter: the state store under
// home/state, recovering from the JSONL log under home/logs, plus any extra
// sinks after the log. The policy is passed in so the caller decides how a
// bad capture setting is reported.
func (c Config) NewFileEmitter(p redact.Policy, extra ...Sink) *Emitter {
	log := &JSONL{Root: c.LogRoot(), LockWait: c.LockWait}
	sinks := Sinks{log}
	sinks = append(sinks, extra...)
	return &Emitter{
		Host:     c.HostName(),
		Policy:   p,
		Pipeline: c.Pipeline(),
		Store:    &FileStore{Dir: filepath.Join(c.HomeDir(), "state"), Log: log, Now: time.Now, LockWait: c.LockWait},
		Sink:     sinks,
		IDs:      NewIDs(),
		Tenant:   c.tenant(),
	}
}
