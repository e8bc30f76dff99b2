package auth

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/aep-hook/aep-hook/consumer/attrmatch"
	"github.com/aep-hook/aep-hook/consumer/relay/event"
	"github.com/aep-hook/aep-hook/redact"
)

func TestGlob(t *testing.T) {
	for _, c := range []struct {
		p, s string
		ok   bool
	}{
		{"*", "", true}, {"*", "anything", true}, {"a*", "abc", true}, {"a*", "ba", false},
		{"*.requested", "attention.requested", true}, {"*.requested", "attention.*", false},
		{"attention.*", "attention.*", true}, {"attention.*", "attention.requested", true},
		{"attention.requested", "attention.*", false}, {"a*b*c", "aXbYc", true}, {"a*b*c", "aXbY", false},
		{"claude-code", "claude-code", true}, {"claude-code", "claude-codex", false}, {"**", "*", true},
	} {
		if glob(c.p, c.s) != c.ok {
			t.Errorf("glob(%q, %q) != %v", c.p, c.s, c.ok)
		}
	}
}

func filter(t *testing.T, s string) attrmatch.Filter {
	t.Helper()
	f, err := attrmatch.Parse([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestSubscribable(t *testing.T) {
	g := &Grant{Kind: Consumer, Subscribe: []string{"attention.*", "tool.completed"}, Read: []string{"aep://host-a/*"}}
	all := &Grant{Kind: Consumer, Subscribe: []string{"*"}, Read: []string{"*"}}
	for _, c := range []struct {
		g      *Grant
		filter string
		ok     bool
	}{
		{all, `{}`, true},
		{g, `{}`, false}, // every type, every source
		{g, `{"type":"attention.*","source":"aep://host-a/agent/a/session/s"}`, true},
		{g, `{"type":["attention.requested","tool.completed"],"source":["aep://host-a/agent/a"]}`, true},
		{g, `{"type":"tool.*","source":"aep://host-a/x"}`, false},
		{g, `{"type":"attention.*","source":"aep://host-b/agent/a"}`, false},
		{g, `{"type":"attention.*"}`, false}, // every source
		{g, `{"type":"attention.*","source":"aep://host-a/x","severity":{"gte":"notice"}}`, true},
	} {
		err := c.g.Subscribable(filter(t, c.filter))
		if (err == nil) != c.ok {
			t.Errorf("%s: %v, want ok=%v", c.filter, err, c.ok)
		}
	}
}

func ev(t *testing.T, typ, source, agent, tenant string) *event.Event {
	t.Helper()
	ext := ""
	if tenant != "" {
		ext = fmt.Sprintf(`,"tenant":%q`, tenant)
	}
	raw := fmt.Sprintf(`{"aep":"0.1","id":"x","type":%q,"time":"2026-07-03T10:15:04Z","source":%q,"agent":%q,"session":"s","seq":0%s}`, typ, source, agent, ext)
	e, err := event.Parse([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func TestSeesAndTenants(t *testing.T) {
	acme := &Grant{Kind: Consumer, Subscribe: []string{"*"}, Read: []string{"*"}, Tenant: "acme"}
	none := &Grant{Kind: Consumer, Subscribe: []string{"tool.*"}, Read: []string{"*"}}
	op := &Grant{Kind: Consumer, Subscribe: []string{"*"}, Read: []string{"*"}, Tenant: AllTenants}
	a := ev(t, "tool.completed", "aep://h/agent/a/session/s", "a", "acme")
	b := ev(t, "tool.completed", "aep://h/agent/a/session/s", "a", "beta")
	n := ev(t, "tool.completed", "aep://h/agent/a/session/s", "a", "")
	r := ev(t, "run.started", "aep://h/agent/a/session/s", "a", "")
	for _, c := range []struct {
		g    *Grant
		e    *event.Event
		sees bool
	}{
		{acme, a, true}, {acme, b, false}, {acme, n, false},
		{none, n, true}, {none, a, false}, {none, r, false},
		{op, a, true}, {op, b, true}, {op, n, true},
	} {
		if c.g.Sees(c.e) != c.sees {
			t.Errorf("%+v sees %s/%s: want %v", c.g, c.e.Type, c.e.Tenant, c.sees)
		}
	}
}

func TestWrites(t *testing.T) {
	em := &Grant{Kind: Emitter, Host: "host-a", Agent: "claude-code", Tenant: "acme"}
	alice := &Grant{Kind: Consumer, Name: "alice", Write: []string{"telegram-*"}, Tenant: "acme"}
	for _, c := range []struct {
		g  *Grant
		e  *event.Event
		ok bool
	}{
		{em, ev(t, "tool.completed", "aep://host-a/agent/claude-code/session/s", "claude-code", "acme"), true},
		{em, ev(t, "tool.completed", "aep://host-b/agent/claude-code/session/s", "claude-code", "acme"), false},
		{em, ev(t, "tool.completed", "aep://host-a/agent/codex/session/s", "codex", "acme"), false},
		{em, ev(t, "tool.completed", "aep://host-a/agent/codex/session/s", "claude-code", "acme"), false}, // source and agent disagree
		{em, ev(t, "tool.completed", "urn:x", "claude-code", "acme"), false},
		{em, ev(t, "tool.completed", "aep://host-a/agent/claude-code/session/s", "claude-code", "beta"), false},
		{em, ev(t, "tool.completed", "aep://host-a/agent/claude-code/session/s", "claude-code", ""), false},
		{alice, ev(t, "tool.completed", "aep://x/agent/alice", "alice", "acme"), true},
		{alice, ev(t, "tool.completed", "urn:alice", "telegram-sink", "acme"), true},
		{alice, ev(t, "tool.completed", "aep://x/agent/bob", "bob", "acme"), false},
		{LocalGrant(), ev(t, "tool.completed", "aep://x/agent/bob", "bob", "any"), true},
	} {
		err := c.g.Writes(c.e)
		if (err == nil) != c.ok || (err != nil && !errors.Is(err, ErrFalsified)) {
			t.Errorf("%s writes %s/%s tenant %q: %v, want ok=%v", c.g.Identity, c.e.Source, c.e.Agent, c.e.Tenant, err, c.ok)
		}
	}
}

func TestControls(t *testing.T) {
	g := &Grant{Kind: Consumer, Control: []string{"control.attention.*"}}
	if !g.Controls("control.attention.respond") || g.Controls("control.cancel") {
		t.Error("control scope")
	}
	l := LocalGrant()
	l.Control = []string{"*"}
	if l.Controls("control.cancel") {
		t.Error("control without a token")
	}
}

const line = `{"token":"0123456789abcdef-alice","identity":"consumer:alice","scopes":["subscribe:*","read:*","write:claude-code","control:control.*"],"tenant":"acme","capture":"metadata"}`

func TestParse(t *testing.T) {
	toks, err := Parse(strings.NewReader("# operators\n\n" + line + "\n" +
		`{"token":"0123456789abcdef-host","identity":"emitter:host-a/claude-code","scopes":["write:claude-code"]}` + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	g, ok := toks.Lookup("0123456789abcdef-alice")
	if !ok || g.Name != "alice" || g.Tenant != "acme" || g.Capture != redact.Metadata || len(g.Control) != 1 {
		t.Errorf("alice: %+v", g)
	}
	g, ok = toks.Lookup("0123456789abcdef-host")
	if !ok || g.Kind != Emitter || g.Host != "host-a" || g.Agent != "claude-code" || g.Capture != redact.Full {
		t.Errorf("emitter: %+v", g)
	}
	if _, ok := toks.Lookup("0123456789abcdef-alicE"); ok {
		t.Error("a near token matched")
	}
	if _, ok := toks.Lookup(""); ok {
		t.Error("the empty token matched")
	}
	for _, bad := range []string{
		``,
		`{"token":"short","identity":"consumer:a"}`,
		`{"token":"0123456789abcdef x","identity":"consumer:a"}`,
		`{"token":"0123456789abcdef-a","identity":"alice"}`,
		`{"token":"0123456789abcdef-a","identity":"consumer:a b"}`,
		`{"token":"0123456789abcdef-a","identity":"emitter:host"}`,
		`{"token":"0123456789abcdef-a","identity":"consumer:a","scopes":["admin:*"]}`,
		`{"token":"0123456789abcdef-a","identity":"consumer:a","scopes":["read"]}`,
		`{"token":"0123456789abcdef-a","identity":"consumer:a","tenant":"Acme"}`,
		`{"token":"0123456789abcdef-a","identity":"consumer:a","capture":"most"}`,
		`{"token":"0123456789abcdef-a","identity":"consumer:a","role":"admin"}`,
		`{"token":"0123456789abcdef-a","identity":"consumer:a","scopes":"read:*"}`,
		`{"token":"0123456789abcdef-a","identity":"consumer:a"` + "\n",
		line + "\n" + line,
	} {
		_, err := Parse(strings.NewReader(bad))
		if err == nil {
			t.Errorf("accepted %s", bad)
			continue
		}
		if strings.Contains(err.Error(), "0123456789abcdef") {
			t.Errorf("the error quotes the token: %v", err)
		}
	}
}

func TestLoadRefusesReadableFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "tokens")
	os.WriteFile(p, []byte(line+"\n"), 0o644)
	if _, err := Load(p); err == nil || !strings.Contains(err.Error(), "chmod 600") {
		t.Errorf("a world-readable tokens file: %v", err)
	}
	os.Chmod(p, 0o600)
	if _, err := Load(p); err != nil {
		t.Errorf("a private tokens file: %v", err)
	}
	l := filepath.Join(dir, "link")
	os.Symlink(p, l)
	if _, err := Load(l); err == nil {
		t.Error("a tokens file behind a link")
	}
}

// FuzzParse: the tokens file parser refuses or loads any input without
// panicking, and never quotes a token in its refusal.
func FuzzParse(f *testing.F) {
	f.Add(line)
	f.Add(`{"token":"0123456789abcdef-h","identity":"emitter:*/claude-code","scopes":["write:*"],"tenant":"*"}`)
	f.Add("# c\n\n{}")
	f.Fuzz(func(t *testing.T, s string) {
		toks, err := Parse(strings.NewReader(s))
		if err != nil {
			return
		}
		for _, g := range toks.Grants() {
			if g.Kind != Consumer && g.Kind != Emitter {
				t.Fatalf("grant of kind %d", g.Kind)
			}
		}
	})
}

// The user's own token: one consumer grant with every scope over every
// tenant, its sign-in token, nothing else accepted; a short or blank
// token refused.
func TestUser(t *testing.T) {
	const tok = "0123456789abcdef-user"
	toks, err := User(tok, "alice")
	if err != nil {
		t.Fatal(err)
	}
	g, ok := toks.Lookup(tok)
	if !ok || g.Identity != "consumer:alice" || g.Kind != Consumer || g.Tenant != AllTenants || !toks.UserOnly() {
		t.Fatalf("%+v %v", g, ok)
	}
	if !g.Controls("control.attention.respond") || g.Emits("claude-code") != nil || !g.SeesTenant("acme") {
		t.Errorf("the user's grant is narrower than the user: %+v", g)
	}
	if _, ok := toks.Lookup("0123456789abcdef-other"); ok {
		t.Error("another token was accepted")
	}
	if s, sg := toks.SignIn(); s != tok || sg != g {
		t.Errorf("sign-in %q %v", s, sg)
	}
	if toks, _ := User(tok, `DOMAIN\alice`); toks.Grants()[0].Identity != "consumer:local" {
		t.Errorf("an unusable login name: %s", toks.Grants()[0].Identity)
	}
	for _, bad := range []string{"tiny-tok", "0123456789abcdef user"} {
		if _, err := User(bad, "alice"); err == nil || strings.Contains(err.Error(), bad) {
			t.Errorf("User(%q): %v", bad, err)
		}
	}
}
