package console_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/aep-hook/aep-hook/harness/browser"
	"github.com/aep-hook/aep-hook/harness/realagents"
)

// heldResult is what a held hook process wrote and how it ended.
type heldResult struct {
	stdout, stderr string
	err            error
}

// hold runs firing n of fx as a control-enabled hook process against the
// relay p (it holds the moment until an answer comes) and returns where
// its result arrives.
func hold(t *testing.T, fx realagents.Fixture, env []string, p *relayProc, n int) <-chan heldResult {
	t.Helper()
	var f *realagents.Firing
	for i := range fx.Firings {
		if fx.Firings[i].N == n {
			f = &fx.Firings[i]
		}
	}
	if f == nil {
		t.Fatalf("%s has no firing %d", fx.Scenario.Name, n)
	}
	env = append(append([]string(nil), env...), "AEP_CONTROL=1", "AEP_RELAY=ws://"+p.addr+"/socket",
		"AEP_RELAY_TOKEN="+emitTok, "AEP_CONTROL_BUDGET=25s")
	done := make(chan heldResult, 1)
	go func() {
		out, errOut, err := runHook(fx.Scenario.Agent, env, *f, nil)
		done <- heldResult{out, errOut, err}
	}()
	return done
}

// TestAnswerFromPage: a held hook of a recorded real Claude Code session
// (the PermissionRequest of control-allow, the AskUserQuestion form of
// question, each run by the built binary with control on against a real
// relay) is answered by clicking the page's control under a token with
// control scope: the hook writes exactly the vendor's reply, and the page
// shows the attention.answered it records (by the page's sender, via
// control) and the request resolved.
func TestAnswerFromPage(t *testing.T) {
	cases := []struct {
		name     string
		scenario string
		held     int // the firing the hook holds
		answer   func(t *testing.T, ctx context.Context, card string)
		stdout   string
		shows    string // the card's status once answered
	}{
		{
			name: "allow", scenario: "control-allow", held: 4,
			answer: clickOption("yes"),
			stdout: `{"hookSpecificOutput":{"decision":{"behavior":"allow"},"hookEventName":"PermissionRequest"}}`,
			shows:  "answered yes by alice via control; resolved: answered",
		},
		{
			name: "deny", scenario: "control-allow", held: 4,
			answer: clickOption("no"),
			stdout: `{"hookSpecificOutput":{"decision":{"behavior":"deny","message":"Denied over the control loop (aep-hook): do not run this call."},"hookEventName":"PermissionRequest"}}`,
			shows:  "answered no by alice via control; resolved: answered",
		},
		{
			name: "form", scenario: "question", held: 4,
			answer: fillForm,
			stdout: `{"hookSpecificOutput":{"decision":{"behavior":"allow","updatedInput":{"answers":{"Which color should the file be?":"Blue"},"questions":[{"question":"Which color should the file be?","header":"Color","options":[{"label":"Red","description":"A warm color"},{"label":"Blue","description":"A cool color"}],"multiSelect":false}]}},"hookEventName":"PermissionRequest"}}`,
			shows:  `answered values {"1":"2"} by alice via control; resolved: answered`,
		},
	}
	ctx := browser.Start(t, 4*wait, chromedp.WindowSize(1280, 860))
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			home := t.TempDir()
			env := hookEnv(home)
			fx := fixture(t, "claude-code", c.scenario)
			p := startRelay(t, home, "127.0.0.1:0", "--tokens", consoleTokens(t))
			fire(t, fx, env, 1, c.held-1)
			done := hold(t, fx, env, p, c.held)
			signIn(t, ctx, p, fullToken)
			card := `#pending .card:not(.settled)`
			// The card is answerable and the held hook claims its session.
			browser.WaitJS(t, ctx, `(() => { const s = document.querySelector('`+card+` > .status'); return !!s && s.textContent === 'the agent waits for an answer on this relay'; })()`)
			if c.name == "allow" {
				shot(t, ctx, "answer.png")
			}
			c.answer(t, ctx, card)
			var res heldResult
			select {
			case res = <-done:
			case <-time.After(2 * wait):
				t.Fatal("the held hook did not finish")
			}
			if res.err != nil || res.stderr != "" {
				t.Fatalf("the held hook: %v %s", res.err, res.stderr)
			}
			if res.stdout != c.stdout {
				t.Errorf("the hook replied\n%s\nwant\n%s", res.stdout, c.stdout)
			}
			browser.WaitJS(t, ctx, `document.querySelector('#pending .card.settled > .status') !== null && document.querySelector('#pending .card.settled > .status').textContent.includes('resolved:')`)
			got := browser.EvalJS[string](t, ctx, `document.querySelector('#pending .card.settled > .status').textContent`)
			if got != c.shows {
				t.Errorf("the card shows %q, want %q", got, c.shows)
			}
			// The session's own record, newest first: the page's command,
			// the hook's ack and the answer it applied.
			browser.EvalJS[bool](t, ctx, `document.querySelector('#pending .card.settled h3 a').click(), true`)
			browser.WaitJS(t, ctx, `!document.getElementById('session-view').hidden`)
			rows := browser.EvalJS[string](t, ctx, `[...document.querySelectorAll('#session-events tbody tr td:nth-child(3)')].map((e) => e.textContent).join(' ')`)
			if want := "attention.resolved attention.answered control.accepted control.attention.respond (from alice) attention.requested tool.requested run.started session.started"; rows != want {
				t.Errorf("the session's events: %s", rows)
			}
			signOut(t, ctx, p)
		})
	}
}

// clickOption clicks the card's button for the option id.
func clickOption(id string) func(t *testing.T, ctx context.Context, card string) {
	return func(t *testing.T, ctx context.Context, card string) {
		t.Helper()
		sel := fmt.Sprintf(`%s button[data-option=%q]`, card, id)
		if err := chromedp.Do(ctx, chromedp.Click(sel)); err != nil {
			t.Fatal(err)
		}
	}
}

// fillForm picks the second choice (Blue) of the form's one question in
// its select and submits the form, as a person would.
func fillForm(t *testing.T, ctx context.Context, card string) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.SetValue(card+` form.form select`, "2")); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.Click(card+` form.form button[type=submit]`)); err != nil {
		t.Fatal(err)
	}
}
