// Package browser starts the real headless Chromium the browser tests
// drive (Debian's chromium, under github.com/chromedp/chromedp) and holds
// the few helpers they share: waiting for a condition in the page,
// evaluating an expression, taking a screenshot. It is test harness,
// never linked into the binary.
package browser

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"testing"
	"time"

	cdpbrowser "github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// Start launches a fresh headless Chromium (its own profile folder, no
// sandbox: the tests run as root) and returns the context that drives its
// first tab, ended after timeout or when the test ends. extra adds
// launch options (host resolver rules, a window size). It skips the test
// when Chromium is absent, except under CI=true, where it fails: .ci/run
// installs it.
func Start(t testing.TB, timeout time.Duration, extra ...chromedp.ExecAllocatorOption) context.Context {
	t.Helper()
	if ExecPath() == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("chromium is not installed (.ci/run installs it)")
		}
		t.Skip("chromium is not installed")
	}
	ctx, stop, err := Launch(t.TempDir(), timeout, extra...)
	if err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	t.Cleanup(stop)
	return ctx
}

// ExecPath is the Chromium the harness runs, "" when none is installed.
func ExecPath() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// Launch is Start outside a test (the bench): profile is the browser's
// profile folder, and stop ends the browser.
func Launch(profile string, timeout time.Duration, extra ...chromedp.ExecAllocatorOption) (ctx context.Context, stop func(), err error) {
	path := ExecPath()
	if path == "" {
		return nil, nil, errors.New("chromium is not installed")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.UserDataDir(profile),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
	)
	opts = append(opts, extra...)
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelB := chromedp.NewContext(actx)
	ctx, cancelC := context.WithTimeout(ctx, timeout)
	stop = func() { cancelC(); cancelB(); cancelA() }
	if err := chromedp.Do(ctx, unwatchNetwork); err != nil {
		stop()
		return nil, nil, err
	}
	return ctx, stop, nil
}

// unwatchNetwork turns off the Network domain chromedp enables on every
// tab: with it on, the browser reports each request and each WebSocket
// frame, payload included, to the test process, a per-frame cost no
// user's browser pays that would swamp what the tests measure.
var unwatchNetwork = chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
	_, err := cdp.Call(ctx, t, network.Disable, cdp.Empty{})
	return err
})

// Tab opens another tab of the browser ctx drives (its own page, the
// same cookies).
func Tab(t testing.TB, ctx context.Context) context.Context {
	t.Helper()
	tab, cancel := chromedp.NewContext(ctx)
	t.Cleanup(cancel)
	if err := chromedp.Do(tab, unwatchNetwork); err != nil {
		t.Fatalf("open a tab: %v", err)
	}
	return tab
}

// WaitJS polls expr in the page until it is true, for as long as ctx
// (the bound Start set) lasts.
func WaitJS(t testing.TB, ctx context.Context, expr string) {
	t.Helper()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool](expr, chromedp.WithPollingInterval(20*time.Millisecond), chromedp.WithPollingTimeout(0))); err != nil {
		t.Fatalf("waiting for %s: %v", expr, err)
	}
}

// EvalJS evaluates expr in the page.
func EvalJS[T any](t testing.TB, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// Screenshot is a PNG of the whole page.
func Screenshot(t testing.TB, ctx context.Context) []byte {
	t.Helper()
	b, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	return b
}

// GrantNotifications grants origin the Notification permission, as a
// person would in the browser's prompt (the page still has to ask).
func GrantNotifications(t testing.TB, ctx context.Context, origin string) {
	t.Helper()
	err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		_, err := cdp.Call(ctx, chromedp.FromContext(ctx).Browser, cdpbrowser.SetPermission, cdpbrowser.SetPermissionParams{
			Permission: &cdpbrowser.PermissionDescriptor{Name: "notifications"}, Setting: cdpbrowser.PermissionSettingGranted, Origin: origin})
		return err
	}))
	if err != nil {
		t.Fatalf("grant notifications to %s: %v", origin, err)
	}
}

// WatchNotifications makes every page the tab loads from now on note the
// notifications it creates, in window.__notifications ({title, body, tag,
// n: the Notification}), and count its permission requests in
// window.__notificationAsks; the real Notification is still created.
func WatchNotifications(t testing.TB, ctx context.Context) {
	t.Helper()
	err := chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		_, err := cdp.Call(ctx, tg, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: watchNotifications})
		return err
	}))
	if err != nil {
		t.Fatalf("watch notifications: %v", err)
	}
}

const watchNotifications = `(() => {
  const Real = window.Notification;
  if (!Real) return;
  window.__notifications = [];
  window.__notificationAsks = 0;
  class Watched extends Real {
    constructor(title, opts) {
      super(title, opts);
      window.__notifications.push({title, body: opts && opts.body, tag: opts && opts.tag, n: this});
    }
  }
  Watched.requestPermission = (...a) => { window.__notificationAsks++; return Real.requestPermission(...a); };
  window.Notification = Watched;
})()`
