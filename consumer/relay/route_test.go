package relay_test

import (
	"fmt"
	"strings"
	"testing"
)

const (
	opTok     = "0123456789abcdef-operator"
	viewTok   = "0123456789abcdef-viewer"
	emTok     = "0123456789abcdef-emitter"
	em2Tok    = "0123456789abcdef-emitter2"
	acmeTok   = "0123456789abcdef-acme-consumer"
	betaTok   = "0123456789abcdef-beta-consumer"
	acmeEmTok = "0123456789abcdef-acme-emitter"
	betaEmTok = "0123456789abcdef-beta-emitter"
)

func controlTokens(t *testing.T) string {
	return tokensFile(t,
		`{"token":"`+opTok+`","identity":"consumer:op","scopes":["subscribe:*","read:*","write:op","control:control.*"]}`,
		`{"token":"`+viewTok+`","identity":"consumer:viewer","scopes":["subscribe:*","read:*"]}`,
		`{"token":"`+emTok+`","identity":"emitter:h/target","scopes":[]}`,
		`{"token":"`+em2Tok+`","identity":"emitter:h/*","scopes":[]}`,
		`{"token":"`+acmeTok+`","identity":"consumer:alice","scopes":["subscribe:*","read:*","control:control.*"],"tenant":"acme"}`,
		`{"token":"`+betaTok+`","identity":"consumer:bob","scopes":["subscribe:*","read:*","control:control.*"],"tenant":"beta"}`,
		`{"token":"`+acmeEmTok+`","identity":"emitter:h/target","tenant":"acme"}`,
		`{"token":"`+betaEmTok+`","identity":"emitter:h/target","tenant":"beta"}`,
	)
}

// command is a control command from agent about session.
func command(id, typ, agent, session, extra string) string {
	return fmt.Sprintf(`{"aep":"0.1","id":%q,"type":%q,"time":"2026-07-03T10:15:05Z","source":"aep://h/agent/%s","agent":%q,"session":%q,"capture":"metadata"%s,"data":{"answer":{"option":"allow"}}}`,
		id, typ, agent, agent, session, extra)
}

// claim dials an emitter that accepts accepts and claims session.
func claim(t *testing.T, p *relayProc, token, agent, session, accepts, tenant string) *wsClient {
	t.Helper()
	em := p.mustDial(token, "emitter", agent, `{"control":{"accepts":[`+accepts+`],"ack_window_ms":10000}}`)
	ext := ""
	if tenant != "" {
		ext = fmt.Sprintf(`,"tenant":%q`, tenant)
	}
	em.send(mkEvent("session.started", agent, session, 0, ext))
	// The claim has landed once the roster shows it (roster is answered
	// after the event frame was taken, on the same relay).
	c := p.mustDial(opOr(token, tenant), "consumer", "op", "")
	for {
		c.send(`{"type":"roster","id":"wait"}`)
		f := c.expect("roster")
		if strings.Contains(string(f.raw), fmt.Sprintf(`"session":%q`, session)) && strings.Contains(string(f.raw), agent) {
			break
		}
	}
	return em
}

func opOr(token, tenant string) string {
	if tenant == "acme" {
		return acmeTok
	}
	return opTok
}

// TestRouting: a command goes to the one emitter connection that claims
// its session, byte for byte, and the target's ack comes back through
// the relay (AEP-0004 §4); every refusal is a cause-correlated error frame
// toward the sender that never enters the session's history.
func TestRouting(t *testing.T) {
	p := startRelay(t, "", "--tokens", controlTokens(t))
	target := claim(t, p, emTok, "target", "t1", `"control.attention.respond"`, "")
	sender := p.mustDial(opTok, "consumer", "op", "")
	sender.send(`{"type":"subscribe","id":"watch","filter":{"session":"t1"}}`)
	sender.expect("subscribed")
	cmd := command("cmd-1", "control.attention.respond", "op", "t1", `,"subject":"req-1"`)
	sender.send(cmd)
	if f := target.next(); string(f.raw) != cmd {
		t.Fatalf("the target got %s, want the command byte for byte", f.raw)
	}
	ack := mkEvent("control.accepted", "target", "t1", 1, `,"cause":"cmd-1"`)
	target.send(ack)
	seen := sender.until(func(f wsFrame) bool { return f.str("type") == "control.accepted" })
	if string(seen[len(seen)-1].raw) != ack {
		t.Errorf("ack: %s", seen[len(seen)-1].raw)
	}
	if string(seen[0].raw) != cmd {
		t.Errorf("the routed command is not in the session's live history: %s", seen[0].raw)
	}
	// Redelivery of the same command is routed again (the target re-acks).
	sender.send(cmd)
	if f := target.next(); string(f.raw) != cmd {
		t.Errorf("redelivery: %s", f.raw)
	}

	p.post(mkEvent("session.started", "op", "history-only", 0, ""), "application/json", opTok)
	second := claim(t, p, em2Tok, "other", "t1", `"control.attention.respond"`, "")
	viewer := p.mustDial(viewTok, "consumer", "viewer", "")
	for _, c := range []struct {
		name, id, cmd string
		via           *wsClient
		code          string
	}{
		{"unsupported", "cmd-2", command("cmd-2", "control.pause", "op", "t2", ""), sender, "unsupported"},
		{"no-route", "cmd-3", command("cmd-3", "control.pause", "op", "history-only", ""), sender, "no-route"},
		{"ambiguous", "cmd-4", command("cmd-4", "control.attention.respond", "op", "t1", ""), sender, "ambiguous"},
		{"no control scope", "cmd-5", command("cmd-5", "control.attention.respond", "viewer", "t1", ""), viewer, "unauthorized"},
	} {
		if c.name == "unsupported" {
			claim(t, p, em2Tok, "third", "t2", `"control.attention.respond"`, "")
		}
		c.via.send(c.cmd)
		f := c.via.until(func(f wsFrame) bool { return f.typ() == "error" })
		last := f[len(f)-1]
		if last.str("cause") != c.id || last.str("code") != c.code {
			t.Errorf("%s: %s", c.name, last.raw)
		}
	}
	second.c.CloseNow()
	// A falsified sender: the command's agent is not the token's.
	sender.send(command("cmd-6", "control.attention.respond", "mallory", "t1", ""))
	f := sender.until(func(f wsFrame) bool { return f.typ() == "error" })
	if last := f[len(f)-1]; last.str("code") != "unauthorized" || last.str("cause") != "cmd-6" || !strings.Contains(last.str("detail"), "falsified") {
		t.Errorf("falsified: %s", last.raw)
	}
	// The refused commands are in no session's history.
	for _, m := range p.stream(q("from", "all", "live", "0"), "Authorization", "Bearer "+opTok).rest() {
		for _, id := range []string{"cmd-2", "cmd-3", "cmd-4", "cmd-5", "cmd-6"} {
			if strings.Contains(m.Data, `"id":"`+id+`"`) {
				t.Errorf("refused command %s in the history: %s", id, m.Data)
			}
		}
	}
	audit := p.auditLines()
	routed, refused := 0, 0
	for _, a := range audit {
		switch a["kind"] {
		case "command-routed":
			routed++
		case "command-refused":
			refused++
		}
	}
	if routed != 2 || refused != 5 {
		t.Errorf("audit: %d routed, %d refused", routed, refused)
	}
}

// TestControlNeedsToken: an --open relay (no token at all) is watch-only:
// a command is refused unauthorized and reaches no target (AEP-0004 §4.1).
func TestControlNeedsToken(t *testing.T) {
	p := startRelay(t, "", "--open")
	em := p.mustDial("", "emitter", "target", `{"control":{"accepts":["control.attention.respond"]}}`)
	em.send(mkEvent("session.started", "target", "t", 0, ""))
	s := p.mustDial("", "consumer", "op", "")
	s.send(command("c1", "control.attention.respond", "op", "t", ""))
	f := s.expect("error")
	if f.str("code") != "unauthorized" || f.str("cause") != "c1" {
		t.Errorf("%s", f.raw)
	}
	em.send(`{"type":"ping","t":1}`)
	if f := em.next(); f.typ() != "pong" {
		t.Errorf("the target got %s", f.raw)
	}
}

// TestTenantRouting: a tenant's command reaches only its own tenant's
// claimant; another tenant's consumer finds no route (and no trace of the
// session).
func TestTenantRouting(t *testing.T) {
	p := startRelay(t, "", "--tokens", controlTokens(t))
	target := claim(t, p, acmeEmTok, "target", "ts", `"control.attention.respond"`, "acme")
	bob := p.mustDial(betaTok, "consumer", "bob", "")
	bob.send(command("b1", "control.attention.respond", "bob", "ts", `,"tenant":"beta"`))
	if f := bob.expect("error"); f.str("code") != "no-route" {
		t.Errorf("cross-tenant command: %s", f.raw)
	}
	bob.send(`{"type":"roster","id":"r"}`)
	if f := bob.expect("roster"); len(f.m["entries"].([]any)) != 0 {
		t.Errorf("another tenant's claim in the roster: %s", f.raw)
	}
	bob.send(command("b2", "control.attention.respond", "bob", "ts", `,"tenant":"acme"`))
	if f := bob.expect("error"); f.str("code") != "unauthorized" {
		t.Errorf("a command in another tenant's name: %s", f.raw)
	}
	alice := p.mustDial(acmeTok, "consumer", "alice", "")
	cmd := command("a1", "control.attention.respond", "alice", "ts", `,"tenant":"acme"`)
	alice.send(cmd)
	if f := target.next(); string(f.raw) != cmd {
		t.Errorf("same-tenant command: %s", f.raw)
	}
}
