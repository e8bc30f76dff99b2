package notify

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"runtime"
)

// desktop shows a notification on this machine's desktop through the
// system's own tool: notify-send (libnotify) on Linux and the BSDs,
// osascript on macOS, a PowerShell toast on Windows. Title and body are
// handed over as arguments or environment values, never spliced into a
// script.
type desktop struct {
	path string
	argv func(m *Message) []string
	env  func(m *Message) []string
}

// toastScript shows a toast through the Windows Runtime's notification
// manager, reading its text from the environment; it runs under
// PowerShell's own application id, which Windows lets show toasts.
const toastScript = `[Windows.UI.Notifications.ToastNotificationManager, Windows.UI.Notifications, ContentType = WindowsRuntime] > $null
$x = [Windows.UI.Notifications.ToastNotificationManager]::GetTemplateContent([Windows.UI.Notifications.ToastTemplateType]::ToastText02)
$t = $x.GetElementsByTagName('text')
$t.Item(0).AppendChild($x.CreateTextNode($env:AEP_NOTIFY_TITLE)) > $null
$t.Item(1).AppendChild($x.CreateTextNode($env:AEP_NOTIFY_BODY)) > $null
[Windows.UI.Notifications.ToastNotificationManager]::CreateToastNotifier('{1AC14E77-02E7-4E5D-B744-2EB1AE5198B7}\WindowsPowerShell\v1.0\powershell.exe').Show([Windows.UI.Notifications.ToastNotification]::new($x))`

// newDesktop finds this system's notification tool; the error says what
// is missing.
func newDesktop() (*desktop, string, error) {
	switch runtime.GOOS {
	case "darwin":
		p, err := exec.LookPath("osascript")
		if err != nil {
			return nil, "", errors.New("desktop: osascript is not on PATH")
		}
		return &desktop{path: p, argv: func(m *Message) []string {
			return []string{"-e", "on run argv", "-e", "display notification (item 2 of argv) with title (item 1 of argv)", "-e", "end run", m.Title, m.Body}
		}}, "osascript", nil
	case "windows":
		p, err := exec.LookPath("powershell.exe")
		if err != nil {
			return nil, "", errors.New("desktop: powershell.exe is not on PATH")
		}
		return &desktop{path: p,
			argv: func(*Message) []string { return []string{"-NoProfile", "-NonInteractive", "-Command", toastScript} },
			env:  func(m *Message) []string { return []string{"AEP_NOTIFY_TITLE=" + m.Title, "AEP_NOTIFY_BODY=" + m.Body} },
		}, "toast", nil
	}
	p, err := exec.LookPath("notify-send")
	if err != nil {
		return nil, "", errors.New("desktop: notify-send is not on PATH (install libnotify-bin, or drop the desktop route)")
	}
	return &desktop{path: p, argv: func(m *Message) []string {
		return []string{"--app-name=aep-hook", "--urgency=critical", "--", m.Title, m.Body}
	}}, "notify-send", nil
}

func (d *desktop) send(ctx context.Context, _ *http.Client, m *Message) error {
	cmd := exec.CommandContext(ctx, d.path, d.argv(m)...)
	if d.env != nil {
		cmd.Env = append(os.Environ(), d.env(m)...)
	}
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return &SendError{Msg: "the desktop notifier did not finish within the timeout"}
		}
		// The tool's stderr is not kept: it may echo the message.
		return &SendError{Msg: fmt.Sprintf("%s: %v", d.path, err)}
	}
	return nil
}
