package redact

import (
	"fmt"
	"strings"
)

// Override sets the ceiling for the event types a pattern matches. A pattern
// is an exact type ("tool.completed"), a prefix glob ending in ".*"
// ("attention.*", "x.codex.*") or "*".
type Override struct {
	Pattern string
	Level   Level
}

// ParseOverride parses "PATTERN=LEVEL", e.g. "attention.*=redacted".
func ParseOverride(s string) (Override, error) {
	pat, lvl, ok := strings.Cut(strings.TrimSpace(s), "=")
	if !ok {
		return Override{}, fmt.Errorf("capture override %q: want CATEGORY_GLOB=LEVEL", Setting(s))
	}
	pat = strings.TrimSpace(pat)
	if !validPattern(pat) {
		return Override{}, fmt.Errorf("capture override %q: pattern must be a type, a prefix ending in .*, or *", Setting(s))
	}
	l, err := ParseLevel(strings.TrimSpace(lvl))
	if err != nil {
		return Override{}, fmt.Errorf("capture override for %q: %w", Setting(pat), err)
	}
	return Override{Pattern: pat, Level: l}, nil
}

func validPattern(p string) bool {
	if p == "*" {
		return true
	}
	base := strings.TrimSuffix(p, ".*")
	if base == "" || strings.Contains(base, "*") {
		return false
	}
	for _, r := range base {
		if !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return false
		}
	}
	return !strings.HasPrefix(base, ".") && !strings.HasSuffix(base, ".") && !strings.Contains(base, "..")
}

// specificity ranks a pattern: exact types beat longer prefixes beat shorter
// ones beat "*". It returns -1 when the pattern does not match typ.
func specificity(pattern, typ string) int {
	switch {
	case pattern == "*":
		return 0
	case strings.HasSuffix(pattern, ".*"):
		prefix := strings.TrimSuffix(pattern, "*")
		if strings.HasPrefix(typ, prefix) {
			return len(prefix)
		}
		return -1
	case pattern == typ:
		return 1 << 20
	}
	return -1
}

// Policy is the configured capture posture: a global ceiling and
// per-category overrides, the most specific matching pattern winning.
type Policy struct {
	Default   Level
	Overrides []Override
}

// DefaultPolicy is the AEP-0003 §9.1 default: metadata, with attention.* at
// redacted so prompts stay readable.
func DefaultPolicy() Policy {
	return Policy{Default: Metadata, Overrides: []Override{{Pattern: "attention.*", Level: Redacted}}}
}

// ParsePolicy builds a policy from a level and override specs. An empty level
// means metadata. Nil overrides mean the default attention.*=redacted, which
// only ever raises: it applies when the global ceiling is metadata, so an
// explicit "none" means none everywhere and "redacted" or "full" apply to
// attention.* as to everything else. Explicit overrides apply as given, also
// above the global ceiling (an operator may run "none" with
// attention.*=redacted). A non-nil empty list means no overrides.
//
// On error the returned policy is the fail-closed metadata posture with no
// overrides. The modes that stand between an agent and its user (a hook, a
// tee) record the error and carry on with it; the others (the OTLP sidecar,
// the stream followers, the dry-run verb) refuse to start.
func ParsePolicy(level string, overrides []string) (Policy, error) {
	p := DefaultPolicy()
	if level = strings.TrimSpace(level); level != "" {
		l, err := ParseLevel(level)
		if err != nil {
			return Policy{Default: Metadata}, err
		}
		p.Default = l
	}
	if overrides == nil && p.Default != Metadata {
		p.Overrides = nil
	}
	if overrides != nil {
		p.Overrides = nil
		for _, s := range overrides {
			if strings.TrimSpace(s) == "" {
				continue
			}
			o, err := ParseOverride(s)
			if err != nil {
				return Policy{Default: Metadata}, err
			}
			p.Overrides = append(p.Overrides, o)
		}
	}
	return p, nil
}

// Ceiling returns the capture ceiling for events of type typ.
func (p Policy) Ceiling(typ string) Level {
	best, lvl := -1, p.Default
	for _, o := range p.Overrides {
		if s := specificity(o.Pattern, typ); s > best {
			best, lvl = s, o.Level
		}
	}
	return lvl
}
