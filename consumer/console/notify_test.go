package console_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/aep-hook/aep-hook/harness/browser"
)

// TestBrowserNotifications: the page asks for the Notification permission
// only when its button is pressed; then every permission or form request
// that starts waiting shows one notification (none for those already
// waiting when the page loaded), whose text obeys the token's ceiling;
// clicking it focuses the request's card; and the page records each
// delivery in the request's session as attention.routed under its own
// name.
func TestBrowserNotifications(t *testing.T) {
	ctx := browser.Start(t, 4*wait, chromedp.WindowSize(1280, 860))
	home := t.TempDir()
	env := hookEnv(home)
	// Already waiting when the page loads: the queue shows it, no
	// notification does.
	fire(t, fixture(t, "claude-code", "dialog"), env, 1, 4)
	p := startRelay(t, home, "127.0.0.1:0", "--tokens", consoleTokens(t))
	browser.GrantNotifications(t, ctx, p.base)
	browser.WatchNotifications(t, ctx)
	signIn(t, ctx, p, fullToken)
	browser.WaitJS(t, ctx, `document.querySelectorAll('#pending .card').length === 1 && document.getElementById('conn').textContent === 'live'`)
	if got := browser.EvalJS[string](t, ctx, `document.getElementById('notify').textContent + ' ' + window.__notificationAsks + ' ' + window.__notifications.length`); got != "Turn on notifications 0 0" {
		t.Errorf("on load: %q, want the button, no permission asked and no notification", got)
	}
	if err := chromedp.Do(ctx, chromedp.Click(`#notify`)); err != nil {
		t.Fatal(err)
	}
	browser.WaitJS(t, ctx, `document.getElementById('notify').textContent === 'Notifications on'`)
	if n := browser.EvalJS[int](t, ctx, `window.__notificationAsks`); n != 1 {
		t.Errorf("the button asked for the permission %d times, want 1", n)
	}

	// A permission request that starts waiting now (a recorded real
	// session's PermissionRequest through a real hook process).
	allow := fixture(t, "claude-code", "control-allow")
	var first struct {
		Session string `json:"session_id"`
	}
	if err := json.Unmarshal(allow.Firings[0].Input, &first); err != nil || first.Session == "" {
		t.Fatalf("the recording's session id: %v", err)
	}
	fire(t, allow, env, 1, 4)
	browser.WaitJS(t, ctx, `window.__notifications.length === 1`)
	note := browser.EvalJS[map[string]string](t, ctx, `(() => { const n = window.__notifications[0]; return {title: n.title, body: n.body, tag: n.tag}; })()`)
	want := map[string]string{"title": "claude-code requests permission: Bash",
		"body": "Permission requested: Bash — touch made-by-control (Create a file)\non devbox · session " + first.Session}
	if note["title"] != want["title"] || note["body"] != want["body"] {
		t.Errorf("the notification is %q / %q, want %q / %q", note["title"], note["body"], want["title"], want["body"])
	}
	req := strings.TrimPrefix(note["tag"], "aep-attention-")
	// Clicking it focuses the request's card.
	browser.EvalJS[bool](t, ctx, `window.__notifications[0].n.dispatchEvent(new Event('click')), true`)
	if got := browser.EvalJS[string](t, ctx, `(() => { const c = document.activeElement.closest('.card'); return c ? c.dataset.request : document.activeElement.tagName; })()`); got != req {
		t.Errorf("after the click the focus is in %q, want the card of %s", got, req)
	}
	// The delivery is in the request's session, and the session going on
	// shows nothing again.
	fire(t, allow, env, 5, 0)
	browser.EvalJS[bool](t, ctx, `location.hash = '#/s/' + encodeURIComponent('aep://devbox/agent/claude-code/session/`+first.Session+`'), true`)
	browser.WaitJS(t, ctx, `document.getElementById('session-events').innerText.includes('attention.routed (from alice)')`)
	if text := browser.EvalJS[string](t, ctx, `document.getElementById('session-lanes').innerText`); !strings.Contains(text, "routed to browser via notification") {
		t.Errorf("the session view does not show the delivery:\n%s", text)
	}
	if n := browser.EvalJS[int](t, ctx, `window.__notifications.length`); n != 1 {
		t.Errorf("%d notifications, want 1", n)
	}
	signOut(t, ctx, p)

	// Under a metadata ceiling a form request shows no free text.
	signIn(t, ctx, p, metaToken)
	browser.WaitJS(t, ctx, `document.getElementById('conn').textContent === 'live' && document.getElementById('notify').textContent === 'Notifications on'`)
	fire(t, fixture(t, "claude-code", "question"), env, 1, 4)
	browser.WaitJS(t, ctx, `window.__notifications.length === 1`)
	note = browser.EvalJS[map[string]string](t, ctx, `(() => { const n = window.__notifications[0]; return {title: n.title, body: n.body}; })()`)
	if got, want := note["title"]+" / "+note["body"], "claude-code asks you to fill in a form: AskUserQuestion / on devbox · session 2680099b-26b9-4d4d-8b36-b4ca3f2cca88"; got != want {
		t.Errorf("under a metadata ceiling the notification is %q, want %q", got, want)
	}
}
