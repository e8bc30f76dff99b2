// Package auth is the relay's part of the AEP security model: who a
// bearer token speaks for (an identity), what it may do (scopes), which
// tenant's events it may see or write, and the most content it may
// receive (a capture ceiling). Grants are loaded from the tokens file, one
// JSON object a line:
//
//	{"token": "...", "identity": "consumer:alice", "scopes": ["subscribe:*", "read:*",
//	 "write:claude-code", "control:control.*"], "tenant": "acme", "capture": "metadata"}
//
// Identities are consumer:NAME or emitter:HOST/AGENT. Scopes are
// subscribe:<type glob>, read:<source glob>, write:<agent glob> and
// control:<command type glob>, where * matches any run of characters.
// Package auth decides; the relay enforces and audits.
package auth

import (
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/aep-hook/aep-hook/consumer/attrmatch"
	"github.com/aep-hook/aep-hook/consumer/relay/event"
	"github.com/aep-hook/aep-hook/redact"
)

// AllTenants is the tenant of a grant that sees and writes every tenant's
// events (an operator's token; also the relay without a tokens file).
const AllTenants = "*"

// Kind is what an identity names.
type Kind int

// The identity kinds.
const (
	// Local is the relay without a tokens file: whoever reaches its
	// loopback listener, watching and writing, never commanding.
	Local Kind = iota + 1
	// Consumer is consumer:NAME, a person or program that watches and
	// may command.
	Consumer
	// Emitter is emitter:HOST/AGENT, a producer of one agent's events on
	// one host.
	Emitter
)

// Grant is what one token allows.
type Grant struct {
	Identity string // as written: consumer:alice, emitter:host-a/claude-code, or "local"
	Kind     Kind
	Name     string // the consumer's NAME
	Host     string // the emitter's HOST (a glob)
	Agent    string // the emitter's AGENT (a glob)

	Subscribe []string // type globs
	Read      []string // source globs
	Write     []string // agent globs
	Control   []string // command type globs

	// Tenant is the one tenant this grant sees and writes, "" for events
	// without a tenant, AllTenants for every one.
	Tenant string
	// Capture is the most content delivered to this grant (its ceiling).
	Capture redact.Level
}

// LocalGrant is the posture without a tokens file: everything may be
// watched and written on loopback, nothing commanded (AEP-0004 §4.1).
func LocalGrant() *Grant {
	return &Grant{Identity: "local", Kind: Local, Subscribe: []string{"*"}, Read: []string{"*"},
		Write: []string{"*"}, Tenant: AllTenants, Capture: redact.Full}
}

// Authenticated reports a grant a token proved.
func (g *Grant) Authenticated() bool { return g.Kind != Local }

// SeesTenant reports whether events of tenant t (or none, "") reach this
// grant: a tenant's events never reach another tenant's consumers.
func (g *Grant) SeesTenant(t string) bool {
	return g.Tenant == AllTenants || g.Tenant == t
}

// Sees reports whether ev may be delivered to this grant at all: its
// tenant, and its type and source within the grant's scopes.
func (g *Grant) Sees(ev *event.Event) bool {
	return g.SeesTenant(ev.Tenant) && anyGlob(g.Subscribe, ev.Type) && anyGlob(g.Read, ev.Source)
}

// Reads reports whether source lies within the grant's read scopes.
func (g *Grant) Reads(source string) bool { return anyGlob(g.Read, source) }

// Subscribable checks a subscription's filter against the scopes (the
// security model's enforcement at subscribe): every type the filter admits
// needs a subscribe scope and every source a read scope; a filter that
// does not narrow type or source asks for all of them. The error names
// what is not allowed.
func (g *Grant) Subscribable(f attrmatch.Filter) error {
	if err := covered(f, "type", g.Subscribe, "subscribe"); err != nil {
		return err
	}
	return covered(f, "source", g.Read, "read")
}

func covered(f attrmatch.Filter, key string, globs []string, scope string) error {
	vals, all := f.Values(key)
	if all {
		// "*" stands for every value: only a glob that matches it
		// literally (an all-star glob) covers it.
		if !anyGlob(globs, "*") {
			return fmt.Errorf("the filter admits every %s; this token's %s scopes do not cover them all (narrow the filter by %s)", key, scope, key)
		}
		return nil
	}
	for _, v := range vals {
		// A type pattern "p.*" is checked as that literal text: a glob
		// matches it only if its own * absorbs the pattern's, which is
		// exactly when it matches every type the pattern does.
		if !anyGlob(globs, v) {
			return fmt.Errorf("%s %s is outside this token's %s scopes", key, quote(v), scope)
		}
	}
	return nil
}

// Controls reports whether the grant may send commands of type typ
// (AEP-0004 §4.3); never without a token.
func (g *Grant) Controls(typ string) bool {
	return g.Authenticated() && anyGlob(g.Control, typ)
}

// ErrFalsified marks a refusal of an event that claims an identity the
// token does not hold.
var ErrFalsified = errors.New("falsified source")

// Writes checks an event posted under this grant: its agent and source
// are the token's identity (a transport that cannot verify an identity
// rejects a falsified source), and its tenant is the token's.
func (g *Grant) Writes(ev *event.Event) error {
	if !g.SeesTenant(ev.Tenant) {
		t := ev.Tenant
		if t == "" {
			t = "none"
		}
		return fmt.Errorf("%w: the event's tenant (%s) is not this token's", ErrFalsified, quote(t))
	}
	host, agent, ok := SourceParts(ev.Source)
	if ok && agent != ev.Agent {
		return fmt.Errorf("%w: source names agent %s, the event's agent is %s", ErrFalsified, quote(agent), quote(ev.Agent))
	}
	if err := g.Emits(ev.Agent); err != nil {
		return err
	}
	if g.Kind == Emitter {
		if !ok {
			return fmt.Errorf("%w: an emitter token's events carry a source aep://HOST/agent/AGENT/...", ErrFalsified)
		}
		if !glob(g.Host, host) {
			return fmt.Errorf("%w: source host %s is not this token's host", ErrFalsified, quote(host))
		}
	}
	return nil
}

// Emits checks that the grant may speak as agent: an emitter token as its
// own AGENT, a consumer token as its NAME or an agent its write scopes
// name. A hello's identity.agent is checked the same way.
func (g *Grant) Emits(agent string) error {
	switch g.Kind {
	case Local:
		return nil
	case Emitter:
		if !glob(g.Agent, agent) {
			return fmt.Errorf("%w: agent %s is not this token's agent", ErrFalsified, quote(agent))
		}
		if len(g.Write) > 0 && !anyGlob(g.Write, agent) {
			return fmt.Errorf("%w: agent %s is outside this token's write scopes", ErrFalsified, quote(agent))
		}
	default:
		if agent != g.Name && !anyGlob(g.Write, agent) {
			return fmt.Errorf("%w: agent %s is neither this token's name nor within its write scopes", ErrFalsified, quote(agent))
		}
	}
	return nil
}

// Ceiling is the capture level delivered to this grant for a requested
// ceiling (the lower of the two).
func (g *Grant) Ceiling(asked redact.Level) redact.Level {
	return min(asked, g.Capture)
}

// SourceParts reads the RECOMMENDED source form aep://{host}/agent/{agent}[/...]
// (segments path-unescaped).
func SourceParts(source string) (host, agent string, ok bool) {
	rest, found := strings.CutPrefix(source, "aep://")
	if !found {
		return "", "", false
	}
	parts := strings.SplitN(rest, "/", 4)
	if len(parts) < 3 || parts[1] != "agent" || parts[0] == "" || parts[2] == "" {
		return "", "", false
	}
	h, err1 := url.PathUnescape(parts[0])
	a, err2 := url.PathUnescape(parts[2])
	if err1 != nil || err2 != nil {
		return "", "", false
	}
	return h, a, true
}

func anyGlob(globs []string, s string) bool {
	for _, g := range globs {
		if glob(g, s) {
			return true
		}
	}
	return false
}

// glob matches s against pattern, where * matches any run of characters
// (none included) and everything else itself. It runs in time linear in
// len(pattern)+len(s) times the stars backtracked over, with one
// backtrack point (the classic wildcard match).
func glob(pattern, s string) bool {
	p, i := 0, 0
	star, mark := -1, 0
	for i < len(s) {
		switch {
		case p < len(pattern) && pattern[p] == '*':
			star, mark = p, i
			p++
		case p < len(pattern) && pattern[p] == s[i]:
			p++
			i++
		case star >= 0:
			p = star + 1
			mark++
			i = mark
		default:
			return false
		}
	}
	for p < len(pattern) && pattern[p] == '*' {
		p++
	}
	return p == len(pattern)
}

func quote(s string) string {
	if len(s) > 80 {
		s = s[:80] + "..."
	}
	return fmt.Sprintf("%q", s)
}
