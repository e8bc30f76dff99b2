package console_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/aep-hook/aep-hook/harness/browser"
)

const (
	fullToken = "0123456789abcdef-console-full"
	metaToken = "0123456789abcdef-console-meta"
	watchOnly = "0123456789abcdef-console-watch"
)

// The tokens the browser tests sign in with: alice may answer and sees
// everything, bob sees metadata only, carol may watch but not answer.
func consoleTokens(t testing.TB) string {
	return tokensFile(t,
		token(fullToken, "consumer:alice", "", "subscribe:*", "read:*", "write:alice", "control:control.attention.respond"),
		token(metaToken, "consumer:bob", "metadata", "subscribe:*", "read:*", "write:bob", "control:control.attention.respond"),
		token(watchOnly, "consumer:carol", "", "subscribe:*", "read:*"),
	)
}

// signIn opens the sign-in URL and checks the browser lands on the page
// without the token, holding it only in a cookie scripts cannot read.
func signIn(t *testing.T, ctx context.Context, p *relayProc, tok string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Navigate(p.base+"/?access_token="+tok)); err != nil {
		t.Fatal(err)
	}
	if u := browser.EvalJS[string](t, ctx, `location.href`); u != p.base+"/" {
		t.Errorf("after sign-in the page is %q, want %q", u, p.base+"/")
	}
	if c := browser.EvalJS[string](t, ctx, `document.cookie`); c != "" {
		t.Errorf("the page can read a cookie: %q", c)
	}
	browser.WaitJS(t, ctx, `window.aepConsole && window.aepConsole.timing.synced !== undefined`)
}

func rows(t *testing.T, ctx context.Context) int {
	return browser.EvalJS[int](t, ctx, `document.querySelectorAll('#fleet-body tr').length`)
}

// TestFleetFromRealHooks: the fleet lists the sessions real hook processes
// wrote (recorded real Claude Code sessions replayed through the binary),
// a new one appears live, and the session view shows its runs, tools with
// durations and outcomes, attention, compaction and a subagent's nested
// lane.
func TestFleetFromRealHooks(t *testing.T) {
	ctx := browser.Start(t, 3*wait)
	home := t.TempDir()
	env := hookEnv(home)
	// Before the relay starts: it loads them from the logs.
	fire(t, fixture(t, "claude-code", "dialog"), env, 0, 0)
	fire(t, fixture(t, "claude-code", "subagent"), env, 0, 0)
	p := startRelay(t, home, "127.0.0.1:0", "--tokens", consoleTokens(t))
	if !strings.Contains(p.output(), "the fleet console for consumer:alice: "+p.base+"/?access_token="+fullToken) {
		t.Errorf("the relay does not print the sign-in URL:\n%s", p.output())
	}
	signIn(t, ctx, p, fullToken)
	browser.WaitJS(t, ctx, `document.querySelectorAll('#fleet-body tr').length === 2`)
	dialog := "ee962a2e-3bee-4788-ac64-83fe39ed9593"
	state := browser.EvalJS[string](t, ctx, fmt.Sprintf(`document.querySelector('#fleet-body tr[data-key$="%s"] td').textContent`, dialog))
	if state != "ended" {
		t.Errorf("the dialog session is %q, want ended", state)
	}

	// Live: a session that starts now appears without a reload.
	fire(t, fixture(t, "claude-code", "interrupt-compact"), env, 1, 2)
	browser.WaitJS(t, ctx, `document.querySelectorAll('#fleet-body tr').length === 3`)
	compact := "e193e078-e5a8-4d3f-a476-531deaf487b9"
	browser.WaitJS(t, ctx, fmt.Sprintf(`document.querySelector('#fleet-body tr[data-key$="%s"] td').textContent === 'running'`, compact))
	fire(t, fixture(t, "claude-code", "interrupt-compact"), env, 3, 0)
	browser.WaitJS(t, ctx, fmt.Sprintf(`document.querySelector('#fleet-body tr[data-key$="%s"] td').textContent === 'ended'`, compact))

	// The session view of the dialog session.
	open := func(session string) {
		t.Helper()
		browser.EvalJS[bool](t, ctx, fmt.Sprintf(`document.querySelector('#fleet-body tr[data-key$="%s"] a').click(), true`, session))
		browser.WaitJS(t, ctx, `!document.getElementById('session-view').hidden && document.querySelectorAll('#session-lanes .lane').length > 0`)
	}
	open(dialog)
	text := browser.EvalJS[string](t, ctx, `document.getElementById('session-view').innerText`)
	for _, want := range []string{"Bash", "completed", "2.6 s", "attention · permission", "answered allow via oob", "resolved: dismissed", "cancelled", "touch allowed-file", "full ×15"} {
		if !strings.Contains(text, want) {
			t.Errorf("the dialog session view lacks %q:\n%s", want, text)
		}
	}
	// The subagent's run is a lane nested in the run that delegated it.
	browser.EvalJS[bool](t, ctx, `location.hash = '#/', true`)
	open("303a9a7c-fbcd-4b61-86a1-9d47af3c1b4f")
	if n := browser.EvalJS[int](t, ctx, `document.querySelectorAll('#session-lanes .lane .lane[data-run="aa73197646125d708"]').length`); n != 1 {
		t.Errorf("the subagent's run is in %d nested lanes, want 1", n)
	}
	browser.EvalJS[bool](t, ctx, `location.hash = '#/', true`)
	open(compact)
	if text := browser.EvalJS[string](t, ctx, `document.getElementById('session-lanes').innerText`); !strings.Contains(text, "context compacted") {
		t.Errorf("no compaction in:\n%s", text)
	}
}

