package console_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"

	"github.com/aep-hook/aep-hook/harness/browser"
)

const (
	fullToken = "0123456789abcdef-console-full"
	metaToken = "0123456789abcdef-console-meta"
	watchOnly = "0123456789abcdef-console-watch"
	emitTok   = "0123456789abcdef-console-emit"
)

// The tokens the browser tests sign in with: alice may answer and sees
// everything, bob sees metadata only, carol may watch but not answer.
func consoleTokens(t testing.TB) string {
	return tokensFile(t,
		token(fullToken, "consumer:alice", "", "subscribe:*", "read:*", "write:alice", "control:control.attention.respond"),
		token(metaToken, "consumer:bob", "metadata", "subscribe:*", "read:*", "write:bob", "control:control.attention.respond"),
		token(watchOnly, "consumer:carol", "", "subscribe:*", "read:*"),
		token(emitTok, "emitter:devbox/claude-code", "", "write:claude-code"),
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

// signOut forgets the browser's token.
func signOut(t *testing.T, ctx context.Context, p *relayProc) {
	t.Helper()
	if err := chromedp.Do(ctx, chromedp.Navigate(p.base+"/signout")); err != nil {
		t.Fatal(err)
	}
	browser.WaitJS(t, ctx, `window.aepConsole && window.aepConsole.config.signin === true`)
}

// TestFleetFromRealHooks: the fleet lists the sessions real hook processes
// wrote (recorded real Claude Code sessions replayed through the binary),
// a new one appears live, and the session view shows its runs, tools with
// durations and outcomes, attention, compaction and a subagent's nested
// lane.
func TestFleetFromRealHooks(t *testing.T) {
	ctx := browser.Start(t, 3*wait, chromedp.WindowSize(1280, 860))
	home := t.TempDir()
	env := hookEnv(home)
	// Before the relay starts: it loads them from the logs.
	fire(t, fixture(t, "claude-code", "dialog"), env, 0, 0)
	fire(t, fixture(t, "claude-code", "subagent"), env, 0, 0)
	p := startRelay(t, home, "127.0.0.1:0", "--tokens", consoleTokens(t))
	// Its stderr is no terminal: the sign-in URL goes to a private file,
	// and no token to the output.
	urlFile := filepath.Join(home, "relay", "console-url")
	if !p.printed("the fleet console for consumer:alice: " + p.base + "/ (its sign-in URL is in " + urlFile + ")") {
		t.Errorf("the relay does not say where the sign-in URL is:\n%s", p.output())
	}
	if b, err := os.ReadFile(urlFile); err != nil || string(b) != p.base+"/?access_token="+fullToken+"\n" {
		t.Errorf("the sign-in URL file holds %q (%v)", b, err)
	}
	if st, err := os.Stat(urlFile); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("the sign-in URL file: %v %v", st.Mode(), err)
	}
	if strings.Contains(p.output(), fullToken) {
		t.Errorf("a token is in the relay's output:\n%s", p.output())
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
	shot(t, ctx, "fleet.png")
	fire(t, fixture(t, "claude-code", "interrupt-compact"), env, 3, 0)
	browser.WaitJS(t, ctx, fmt.Sprintf(`document.querySelector('#fleet-body tr[data-key$="%s"] td').textContent === 'ended'`, compact))

	// The session view of the dialog session.
	open := func(session string) {
		t.Helper()
		browser.EvalJS[bool](t, ctx, fmt.Sprintf(`document.querySelector('#fleet-body tr[data-key$="%s"] a').click(), true`, session))
		browser.WaitJS(t, ctx, `!document.getElementById('session-view').hidden && document.querySelectorAll('#session-lanes .lane').length > 0`)
	}
	open(dialog)
	shot(t, ctx, "session.png")
	text := browser.EvalJS[string](t, ctx, `document.getElementById('session-view').innerText`)
	for _, want := range []string{"Bash", "completed", "2.6 s", "attention · permission", "answered via oob; resolved: answered", "resolved: dismissed", "cancelled", "touch allowed-file", "full ×15"} {
		if !strings.Contains(text, want) {
			t.Errorf("the dialog session view lacks %q:\n%s", want, text)
		}
	}
	if strings.Contains(text, "null") || strings.Contains(text, "undefined") {
		t.Errorf("the dialog session view shows a missing value as a word:\n%s", text)
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

// The free text of the dialog recording's first turn: what a metadata
// ceiling must keep off the page.
var freeText = []string{"make two files", "touch allowed-file", "Create the allowed file", "/home/user/proj", "Permission requested"}

// TestMetadataCeiling: a consumer token with a metadata ceiling sees the
// fleet, the session and the pending request, and no free text anywhere
// in the page; the same page under a full token shows it (so the check
// can fail).
func TestMetadataCeiling(t *testing.T) {
	ctx := browser.Start(t, 3*wait)
	home := t.TempDir()
	// The turn up to its permission card, which stays pending.
	fire(t, fixture(t, "claude-code", "dialog"), hookEnv(home), 1, 4)
	p := startRelay(t, home, "127.0.0.1:0", "--tokens", consoleTokens(t))
	dialog := "ee962a2e-3bee-4788-ac64-83fe39ed9593"
	look := func() string {
		t.Helper()
		browser.WaitJS(t, ctx, `document.querySelectorAll('#fleet-body tr').length === 1 && document.querySelectorAll('#pending .card').length === 1`)
		browser.EvalJS[bool](t, ctx, `location.hash = '#/s/' + encodeURIComponent(document.querySelector('#fleet-body tr').dataset.key), true`)
		browser.WaitJS(t, ctx, `document.querySelectorAll('#session-lanes .lane .items li').length >= 2`)
		return browser.EvalJS[string](t, ctx, `document.documentElement.outerHTML + document.body.innerText`)
	}

	signIn(t, ctx, p, fullToken)
	full := look()
	for _, s := range freeText {
		if !strings.Contains(full, s) {
			t.Errorf("under a full token the page lacks %q", s)
		}
	}
	signOut(t, ctx, p)

	signIn(t, ctx, p, metaToken)
	meta := look()
	for _, s := range freeText {
		if strings.Contains(meta, s) {
			t.Errorf("under a metadata ceiling the page shows %q", s)
		}
	}
	for _, want := range []string{"sees at most: metadata", "claude-code requests permission", "Bash", dialog} {
		if !strings.Contains(meta, want) {
			t.Errorf("under a metadata ceiling the page lacks %q", want)
		}
	}
	if n := browser.EvalJS[int](t, ctx, `[...document.querySelectorAll('.cap')].filter((e) => e.textContent !== 'metadata').length`); n != 0 {
		t.Errorf("%d items shown above metadata", n)
	}
}

// TestNoControlScope: a token without a control scope sees the pending
// requests and no answer controls; a token with one sees them for the
// same requests (a permission card and a form).
func TestNoControlScope(t *testing.T) {
	ctx := browser.Start(t, 3*wait)
	p := startRelay(t, t.TempDir(), "127.0.0.1:0", "--tokens", consoleTokens(t), "--no-follow")
	now := time.Now()
	form := `"capture":"full","severity":"notice","data":{"kind":"form","prompt":"Set up the database","respond_via":["control"],` +
		`"fields":[{"id":"name","type":"string","label":"Database name","required":true},{"id":"seed","type":"boolean","label":"Seed it"},` +
		`{"id":"engine","type":"select","label":"Engine","choices":[{"id":"pg","label":"PostgreSQL"},{"id":"lite","label":"SQLite"}],"other":true},` +
		`{"id":"ext","type":"select","label":"Extensions","multi":true,"choices":[{"id":"gis","label":"PostGIS"},{"id":"vec","label":"pgvector"}]},` +
		`{"id":"pool","type":"number","label":"Pool size","min":1,"max":64}],"options":[{"id":"decline","label":"Decline"}]}`
	p.post(emitTok,
		ev("s-ctl", 0, "session.started", now, `"capture":"metadata","data":{}`),
		ev("s-ctl", 1, "run.started", now, `"run":"r1","capture":"metadata","data":{"trigger":"user"}`),
		ev("s-ctl", 2, "attention.requested", now, `"run":"r1","subject":"Bash","capture":"full","severity":"notice","data":{"kind":"permission","prompt":"Run ls?","respond_via":["control"],"options":[{"id":"allow","label":"Allow"},{"id":"deny","label":"Deny"}]}`),
		ev("s-ctl", 3, "attention.requested", now, `"run":"r1",`+form),
	)
	cards := `document.querySelectorAll('#pending .card').length === 2`
	signIn(t, ctx, p, fullToken)
	browser.WaitJS(t, ctx, cards)
	if n := browser.EvalJS[int](t, ctx, `document.querySelectorAll('#pending .card .controls').length`); n != 2 {
		t.Errorf("a control token sees controls on %d cards, want 2", n)
	}
	buttons := browser.EvalJS[[]string](t, ctx, `[...document.querySelectorAll('#pending .card button[data-option]')].map((b) => b.dataset.option)`)
	if strings.Join(buttons, ",") != "allow,deny,decline" {
		t.Errorf("option buttons %v", buttons)
	}
	fields := browser.EvalJS[[]string](t, ctx, `[...document.querySelectorAll('#pending .card form.form input, #pending .card form.form select')].map((e) => e.type)`)
	if strings.Join(fields, ",") != "text,checkbox,select-one,text,checkbox,checkbox,number" {
		t.Errorf("form controls %v", fields)
	}
	// No agent connection claims the session (its events came over POST):
	// the cards say an answer would find no one to take it.
	browser.WaitJS(t, ctx, `[...document.querySelectorAll('#pending .card > .status')].every((e) => e.textContent.startsWith('no live connection from the agent claims this session now'))`)
	signOut(t, ctx, p)

	signIn(t, ctx, p, watchOnly)
	browser.WaitJS(t, ctx, cards)
	if n := browser.EvalJS[int](t, ctx, `document.querySelectorAll('#pending button, #pending input, #pending select, #pending textarea, #pending form').length`); n != 0 {
		t.Errorf("a token without control scope sees %d answer controls", n)
	}
	text := browser.EvalJS[string](t, ctx, `document.getElementById('pending-view').innerText`)
	for _, want := range []string{"this token may not answer", "Run ls?", "Allow (allow)", "Database name (string, required)"} {
		if !strings.Contains(text, want) {
			t.Errorf("the queue lacks %q:\n%s", want, text)
		}
	}
}

// TestResumeAfterDrop: the relay goes away and comes back; the page
// reconnects, resumes every session from the last position it saw (each
// event shown once) and finds the session that began meanwhile.
func TestResumeAfterDrop(t *testing.T) {
	ctx := browser.Start(t, 3*wait)
	home := t.TempDir()
	env := hookEnv(home)
	toks := consoleTokens(t)
	p := startRelay(t, home, "127.0.0.1:0", "--tokens", toks)
	signIn(t, ctx, p, fullToken)
	dialog := fixture(t, "claude-code", "dialog")
	fire(t, dialog, env, 1, 3)
	browser.WaitJS(t, ctx, `document.getElementById('fleet-summary').textContent.includes('3 events')`)

	p.stop()
	browser.WaitJS(t, ctx, `document.getElementById('conn').textContent.startsWith('connection lost')`)
	fire(t, dialog, env, 4, 0)
	fire(t, fixture(t, "claude-code", "subagent"), env, 1, 3)

	startRelay(t, home, p.addr, "--tokens", toks)
	browser.WaitJS(t, ctx, `document.getElementById('conn').textContent === 'live' && document.querySelectorAll('#fleet-body tr').length === 2`)
	browser.WaitJS(t, ctx, `document.getElementById('fleet-summary').textContent.includes('18 events')`)
	st := browser.EvalJS[map[string]any](t, ctx, `window.aepConsole.stats`)
	from, _ := st["lastFrom"].([]any)
	// The resume names the session's own epoch (a clock reading) and seq 2.
	if len(from) != 1 {
		t.Fatalf("the page resumed with %v", st)
	}
	last, _ := from[0].(map[string]any)
	if epoch, _ := last["epoch"].(float64); epoch <= 0 || st["resumes"] != float64(1) || last["session"] != "ee962a2e-3bee-4788-ac64-83fe39ed9593" || last["seq"] != float64(2) {
		t.Errorf("the page resumed with %v", st)
	}
	// Each event once: the dialog session's 15 and the subagent session's 3.
	text := browser.EvalJS[string](t, ctx, `document.getElementById('fleet-body').innerText`)
	if !strings.Contains(text, "ended") || !strings.Contains(text, "303a9a7c") {
		t.Errorf("after the drop the fleet is:\n%s", text)
	}
	browser.EvalJS[bool](t, ctx, `location.hash = '#/s/' + encodeURIComponent('aep://devbox/agent/claude-code/session/ee962a2e-3bee-4788-ac64-83fe39ed9593'), true`)
	browser.WaitJS(t, ctx, `document.querySelectorAll('#session-events tbody tr').length === 15`)
	// One epoch in the session: its rows show the seq alone.
	seqs := browser.EvalJS[string](t, ctx, `[...document.querySelectorAll('#session-events tbody tr td:first-child')].map((e) => e.textContent).join(',')`)
	if seqs != "14,13,12,11,10,9,8,7,6,5,4,3,2,1,0" {
		t.Errorf("the session's events after the drop: %s", seqs)
	}
}

// TestLargeFleet: 500 sessions and 100,000 events on the relay; the page
// lists every session with its state in its first whole render, and the
// test logs how long that took (navigation start to the render after the
// first load) beside its baselines from the same run: the same page over
// an empty relay, the same replay fetched by a bare page that only counts
// it, and by a Go client. The figures are logged, never asserted: this
// machine is shared and its load varies (the bench holds the goal).
func TestLargeFleet(t *testing.T) {
	if testing.Short() {
		t.Skip("100,000 events")
	}
	const sessions, perSession = 500, 200
	ctx := browser.Start(t, 6*wait)
	empty := startRelay(t, t.TempDir(), "127.0.0.1:0", "--tokens", consoleTokens(t), "--no-follow")
	p := startRelay(t, t.TempDir(), "127.0.0.1:0", "--tokens", consoleTokens(t), "--no-follow")
	batches, want := browser.Fleet(sessions, perSession)
	for _, b := range batches {
		if err := browser.Post(p.base, emitTok, b); err != nil {
			t.Fatal(err)
		}
	}

	base, err := browser.FirstRender(ctx, empty.base, fullToken)
	if err != nil {
		t.Fatal(err)
	}
	tm, err := browser.FirstRender(ctx, p.base, fullToken)
	if err != nil {
		t.Fatal(err)
	}
	if n := int(tm["completeRows"]); n != sessions {
		t.Errorf("the fleet's first whole render listed %d sessions, want %d", n, sessions)
	}
	if n := browser.EvalJS[int](t, ctx, `document.querySelectorAll('#fleet-body tr').length`); n != sessions {
		t.Errorf("the fleet lists %d sessions, want %d", n, sessions)
	}
	if st := browser.EvalJS[map[string]any](t, ctx, `window.aepConsole.stats`); st["bulk"] != true {
		t.Errorf("the first load did not come in one body: %v", st)
	}
	summary := browser.EvalJS[string](t, ctx, `document.getElementById('fleet-summary').textContent`)
	if !strings.Contains(summary, "100,000 events") {
		t.Errorf("the fleet summary is %q, want 100,000 events", summary)
	}
	got := browser.EvalJS[map[string]float64](t, ctx, `(() => { const c = {}; for (const td of document.querySelectorAll('#fleet-body tr td:first-child')) c[td.textContent] = (c[td.textContent] || 0) + 1; return c; })()`)
	for k, n := range want {
		if int(got[k]) != n {
			t.Errorf("%d sessions %s, want %d (all: %v)", int(got[k]), k, n, got)
		}
	}
	took, n, err := browser.BareFetch(browser.Tab(t, ctx), p.base)
	if err != nil || n != sessions*perSession {
		t.Errorf("the bare page got %d events (%v)", n, err)
	}
	goTook, goEvents, err := browser.GoFetch(p.base, fullToken)
	if err != nil || goEvents != sessions*perSession {
		t.Errorf("the Go client got %d events (%v)", goEvents, err)
	}
	// After the first load the page is live: a new session appears.
	browser.WaitJS(t, ctx, `document.getElementById('conn').textContent === 'live'`)
	now := time.Now()
	p.post(emitTok, ev("s-late", 0, "session.started", now, `"capture":"metadata","data":{}`))
	// (The relay keeps 500 sessions: the oldest goes, the page keeps it.)
	browser.WaitJS(t, ctx, `document.querySelector('#fleet-body tr[data-key$="/s-late"]') !== null`)

	load, _ := os.ReadFile("/proc/loadavg")
	goMs := float64(goTook.Microseconds()) / 1000
	t.Logf("500 sessions, 100,000 events: the fleet view whole %.0f ms after navigation start (first load folded in by %.0f ms; page busy folding %.0f ms, rendering %.0f ms in %v renders); "+
		"baselines: the same page over an empty relay %.0f ms, the same replay to a bare page that only counts it %.0f ms (%.1f×), to a Go client %.0f ms (%.1f×); shared machine, load average %s",
		tm["fleetComplete"], tm["synced"], tm["busy"], tm["renderBusy"], tm["renders"],
		base["fleetComplete"], took, tm["fleetComplete"]/took, goMs, tm["fleetComplete"]/goMs, strings.Join(strings.Fields(string(load))[:3], " "))
}

// TestKeyboardAndContrast: the page is used from the keyboard alone (real
// key events: the skip link first, j/k through the fleet, Enter into a
// session, Esc back, / into the filter, p to the first answer control, a
// visible focus ring), and every piece of text it shows, in each view,
// is readable: at least 4.5:1 against what is behind it (WCAG 2 AA).
func TestKeyboardAndContrast(t *testing.T) {
	ctx := browser.Start(t, 3*wait)
	p := startRelay(t, t.TempDir(), "127.0.0.1:0", "--tokens", consoleTokens(t), "--no-follow")
	now := time.Now()
	for _, s := range []string{"s-one", "s-two"} {
		p.post(emitTok,
			ev(s, 0, "session.started", now, `"capture":"metadata","data":{}`),
			ev(s, 1, "run.started", now, `"run":"r1","capture":"metadata","data":{"trigger":"user"}`),
			ev(s, 2, "tool.requested", now, `"run":"r1","subject":"Bash","capture":"metadata","data":{"tool":{"name":"Bash","call_id":"c1"}}`),
			ev(s, 3, "tool.failed", now, `"run":"r1","subject":"Bash","capture":"metadata","data":{"tool":{"name":"Bash","call_id":"c1"},"error":{"message":"exit 1"}}`))
	}
	p.post(emitTok, ev("s-two", 4, "attention.requested", now, `"run":"r1","subject":"Bash","capture":"full","severity":"notice","data":{"kind":"permission","prompt":"Run ls?","respond_via":["control"],"options":[{"id":"allow","label":"Allow"},{"id":"deny","label":"Deny"}]}`))
	signIn(t, ctx, p, fullToken)
	browser.WaitJS(t, ctx, `document.querySelectorAll('#fleet-body a.sess-link').length === 2 && document.querySelectorAll('#pending .card button').length > 0`)

	key := func(k string) {
		t.Helper()
		if err := chromedp.Do(ctx, chromedp.KeyEvent(k)); err != nil {
			t.Fatal(err)
		}
	}
	// A shortcut is pressed as a keyboard types it: a keyDown that
	// carries its character (so the page's preventDefault keeps the
	// character out of the field it focuses), then a keyUp. chromedp's
	// KeyEvent sends the character as an event of its own.
	press := func(ch, code string) {
		t.Helper()
		err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			if _, err := cdp.Call(ctx, tg, input.DispatchKeyEvent, input.DispatchKeyEventParams{Type: input.DispatchKeyEventTypeKeyDown, Key: ch, Code: code, Text: ch}); err != nil {
				return err
			}
			_, err := cdp.Call(ctx, tg, input.DispatchKeyEvent, input.DispatchKeyEventParams{Type: input.DispatchKeyEventTypeKeyUp, Key: ch, Code: code})
			return err
		}))
		if err != nil {
			t.Fatal(err)
		}
	}
	focused := func() string {
		t.Helper()
		return browser.EvalJS[string](t, ctx, `(() => { const e = document.activeElement; return e.tagName + ' ' + (e.getAttribute('href') || e.id || e.dataset.option || e.textContent); })()`)
	}
	links := browser.EvalJS[[]string](t, ctx, `[...document.querySelectorAll('#fleet-body a.sess-link')].map((a) => a.getAttribute('href'))`)

	key(kb.Tab)
	if f := focused(); f != "A #main" {
		t.Errorf("the first Tab reaches %q, want the skip link", f)
	}
	browser.EvalJS[bool](t, ctx, `document.activeElement.blur(), true`)
	press("j", "KeyJ")
	if f := focused(); f != "A "+links[0] {
		t.Errorf("j focuses %q, want the first session %s", f, links[0])
	}
	ring := browser.EvalJS[string](t, ctx, `(() => { const s = getComputedStyle(document.activeElement); return s.outlineStyle + ' ' + s.outlineWidth; })()`)
	if ring != "solid 3px" {
		t.Errorf("the focused link's outline is %q, want a visible ring", ring)
	}
	press("j", "KeyJ")
	if f := focused(); f != "A "+links[1] {
		t.Errorf("j again focuses %q, want %s", f, links[1])
	}
	press("k", "KeyK")
	if f := focused(); f != "A "+links[0] {
		t.Errorf("k focuses %q, want %s", f, links[0])
	}
	key(kb.Enter)
	browser.WaitJS(t, ctx, `!document.getElementById('session-view').hidden && document.querySelectorAll('#session-lanes .lane').length > 0`)
	contrast(t, ctx, "the session view")
	key(kb.Escape)
	browser.WaitJS(t, ctx, `!document.getElementById('fleet-view').hidden && document.getElementById('session-view').hidden`)
	contrast(t, ctx, "the fleet view")

	press("p", "KeyP")
	if f := focused(); f != "BUTTON allow" {
		t.Errorf("p focuses %q, want the first answer button", f)
	}
	press("/", "Slash")
	if f := focused(); f != "INPUT filter" {
		t.Errorf("/ focuses %q, want the filter", f)
	}
	if err := chromedp.Do(ctx, chromedp.KeyEvent(`{"session":"s-one"}`), chromedp.KeyEvent(kb.Enter)); err != nil {
		t.Fatal(err)
	}
	browser.WaitJS(t, ctx, `document.querySelectorAll('#fleet-body a.sess-link').length === 1 && document.getElementById('conn').textContent === 'live'`)
	key(kb.Escape)
	if f := focused(); f == "INPUT filter" {
		t.Errorf("Esc leaves the focus in the filter")
	}
}

// contrast fails the test for every visible text whose colour is below
// 4.5:1 against the first opaque background behind it, and logs the
// lowest ratio found.
func contrast(t *testing.T, ctx context.Context, where string) {
	t.Helper()
	res := browser.EvalJS[map[string]any](t, ctx, contrastJS)
	bad, _ := res["bad"].([]any)
	for _, b := range bad {
		t.Errorf("%s: text below 4.5:1: %v", where, b)
	}
	if n, _ := res["checked"].(float64); n < 10 {
		t.Errorf("%s: only %v texts checked", where, n)
	}
	t.Logf("%s: %v texts, lowest contrast %.2f:1 (%v)", where, res["checked"], res["min"], res["minAt"])
}

const contrastJS = `(() => {
  const rgb = (s) => { const m = s.match(/[\d.]+/g).map(Number); return {r: m[0], g: m[1], b: m[2], a: m.length > 3 ? m[3] : 1}; };
  const lum = (c) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); }; return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b); };
  const bgOf = (el) => {
    for (let e = el; e; e = e.parentElement) { const c = rgb(getComputedStyle(e).backgroundColor); if (c.a > 0) return c; }
    return {r: 255, g: 255, b: 255, a: 1};
  };
  const out = {checked: 0, min: 99, minAt: '', bad: []};
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  const done = new Set();
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const el = n.parentElement;
    if (!n.textContent.trim() || done.has(el) || !el.checkVisibility() || el.closest('.skip')) continue;
    done.add(el);
    const s = getComputedStyle(el);
    const fg = rgb(s.color), bg = bgOf(el);
    const a = fg.a;
    const mix = {r: fg.r * a + bg.r * (1 - a), g: fg.g * a + bg.g * (1 - a), b: fg.b * a + bg.b * (1 - a)};
    const l1 = lum(mix), l2 = lum(bg);
    const ratio = (Math.max(l1, l2) + 0.05) / (Math.min(l1, l2) + 0.05);
    out.checked++;
    const what = el.tagName.toLowerCase() + (el.className ? '.' + String(el.className).split(' ').join('.') : '') + ' "' + n.textContent.trim().slice(0, 30) + '" ' + s.color + ' on ' + JSON.stringify(bg);
    if (ratio < out.min) { out.min = ratio; out.minAt = what; }
    if (ratio < 4.5) out.bad.push(ratio.toFixed(2) + ' ' + what);
  }
  return out;
})()`

// shot takes a screenshot of the page. With AEP_SCREENSHOTS=1 it renews
// docs/console/NAME, the picture the README shows; otherwise it goes to the
// test's own folder, so a test run leaves the checkout as it found it.
func shot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	dir := t.TempDir()
	if os.Getenv("AEP_SCREENSHOTS") == "1" {
		dir = filepath.Join("..", "..", "docs", "console")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, name), browser.Screenshot(t, ctx), 0o644); err != nil {
		t.Fatal(err)
	}
}
