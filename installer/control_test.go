package installer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestControlInstall installs each held agent with a control posture, then
// again (no change), then without it (the plain registrations come back),
// then uninstalls: the file goes, as install made it. At each step the
// registrations read back exactly as the posture says.
func TestControlInstall(t *testing.T) {
	q := Quote(testBin)
	cases := []struct {
		agent string
		ctl   Control
		// want maps the events to check to their command under control
		// (events not named must stay plain).
		want map[string]string
		// timeout is the held event's timeout under control and without
		// it (TOML: the text "timeout = N"), "" when the agent has none.
		event            string
		timeout, plainTo string
		// plain is the registration without control, when it is not
		// the binary and the agent's name.
		plain string
	}{
		{agent: "claude-code", ctl: Control{},
			want: map[string]string{
				"PermissionRequest": "AEP_CONTROL=1 AEP_RELAY=ws://127.0.0.1:8787/socket " + q + " claude-code",
				"Elicitation":       "AEP_CONTROL=1 AEP_RELAY=ws://127.0.0.1:8787/socket " + q + " claude-code",
				"PreToolUse":        q + " claude-code",
			}},
		{agent: "codex", ctl: Control{Relay: "ws://10.0.0.5:9000/socket", Budget: 20 * time.Second},
			want: map[string]string{
				"PermissionRequest": "AEP_CONTROL=1 AEP_RELAY=ws://10.0.0.5:9000/socket AEP_CONTROL_BUDGET=20s " + q + " codex",
				"PreToolUse":        q + " codex",
			}},
		{agent: "qwen-code", ctl: Control{},
			want: map[string]string{
				"PermissionRequest": "AEP_CONTROL=1 AEP_RELAY=ws://127.0.0.1:8787/socket " + q + " qwen-code",
			}},
		{agent: "kimi-code", ctl: Control{Tools: []string{"Shell", "WriteFile"}},
			want: map[string]string{
				"PreToolUse":        "AEP_CONTROL=1 AEP_RELAY=ws://127.0.0.1:8787/socket AEP_CONTROL_TOOLS=Shell,WriteFile " + q + " kimi-code",
				"PermissionRequest": q + " kimi-code",
			},
			event: "PreToolUse", timeout: "timeout = 60", plainTo: "timeout = 30"},
		{agent: "kimi-code", ctl: Control{}, // a gate with no tools holds nothing
			want: map[string]string{"PreToolUse": q + " kimi-code"}},
		{agent: "pi", ctl: Control{Tools: []string{"bash", "write"}, Budget: 30 * time.Second}, // the posture rides the extension file
			want: map[string]string{
				"aep-hook.js": "AEP_CONTROL=1 AEP_RELAY=ws://127.0.0.1:8787/socket AEP_CONTROL_BUDGET=30s AEP_CONTROL_TOOLS=bash,write " + q + " forward pi",
			},
			plain: q + " forward pi"},
		{agent: "pi", ctl: Control{}, // a gate with no tools holds nothing
			want: map[string]string{"aep-hook.js": q + " forward pi"}, plain: q + " forward pi"},
		{agent: "gemini-cli", ctl: Control{}, // nothing held
			want: map[string]string{"BeforeTool": q + " gemini-cli"}},
	}
	for _, tc := range cases {
		t.Run(tc.agent, func(t *testing.T) {
			a := mustAgent(t, tc.agent)
			e := testEnv(t)
			ctl := tc.ctl
			e.Control = &ctl
			path := a.Path(e, User)
			check := func(step string, control bool) {
				t.Helper()
				st := Inspect(a, e, User)
				if st.Err != nil || len(st.Missing) > 0 || len(st.Foreign) > 0 {
					t.Fatalf("%s: inspect: err %v missing %v foreign %v", step, st.Err, st.Missing, st.Foreign)
				}
				got := map[string]string{}
				for _, f := range st.Found {
					got[f.Event] = f.Command
				}
				for ev, want := range tc.want {
					if !control {
						want = q + " " + tc.agent
						if tc.plain != "" {
							want = tc.plain
						}
					}
					if got[ev] != want {
						t.Errorf("%s: %s registers %q, want %q", step, ev, got[ev], want)
					}
				}
				if tc.timeout == "" {
					return
				}
				b, _ := os.ReadFile(path)
				want := tc.plainTo
				if control {
					want = tc.timeout
				}
				line := entryOf(string(b), tc.event)
				if !strings.Contains(line, want) {
					t.Errorf("%s: %s entry %q lacks %q", step, tc.event, line, want)
				}
			}
			apply(t, a, e, User, false)
			check("control install", true)
			if cs, _ := PlanInstall(a, e, User); anyChanged(cs) {
				t.Error("a second control install changes the file")
			}
			e.Control = nil
			apply(t, a, e, User, false)
			check("plain install", false)
			e.Control = &ctl
			apply(t, a, e, User, false)
			apply(t, a, e, User, true)
			if fi, err := os.Stat(path); err == nil && fi.IsDir() {
				path = filepath.Join(path, "aep-hook.js") // a plugin folder stays: the file goes
			}
			if _, err := os.Stat(path); err == nil {
				b, _ := os.ReadFile(path)
				t.Errorf("uninstall left %s:\n%s", path, b)
			}
		})
	}
}

// entryOf is the line of a Kimi config.toml inline hooks array naming
// event.
func entryOf(s, event string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, `"`+event+`"`) {
			return l
		}
	}
	return ""
}

// TestControlOwnership: a registration with leading settings is still
// aep-hook's, and its settings read back.
func TestControlOwnership(t *testing.T) {
	cases := []struct {
		command string
		ours    bool
		env     map[string]string
	}{
		{"AEP_CONTROL=1 AEP_RELAY=ws://h:1/socket /usr/bin/aep-hook codex", true,
			map[string]string{"AEP_CONTROL": "1", "AEP_RELAY": "ws://h:1/socket"}},
		{"/usr/bin/aep-hook codex", true, map[string]string{}},
		{"AEP_CONTROL=1 /usr/bin/other codex", false, map[string]string{"AEP_CONTROL": "1"}},
		{"1X=2 /usr/bin/aep-hook codex", false, map[string]string{}},
		{"AEP_CONTROL=1", false, map[string]string{"AEP_CONTROL": "1"}},
	}
	for _, tc := range cases {
		if got := Owns("codex")(tc.command); got != tc.ours {
			t.Errorf("Owns(%q) = %v, want %v", tc.command, got, tc.ours)
		}
		env, _ := CommandEnv(tc.command)
		if len(env) != len(tc.env) {
			t.Errorf("CommandEnv(%q) = %v, want %v", tc.command, env, tc.env)
		}
		for k, v := range tc.env {
			if env[k] != v {
				t.Errorf("CommandEnv(%q)[%s] = %q, want %q", tc.command, k, env[k], v)
			}
		}
	}
}

func TestControlCheck(t *testing.T) {
	cases := []struct {
		c  Control
		ok bool
	}{
		{Control{}, true},
		{Control{Relay: "wss://relay.example/socket", Budget: time.Minute, Tools: []string{"*"}}, true},
		{Control{Relay: "http://127.0.0.1:8787/socket"}, false},
		{Control{Budget: 11 * time.Minute}, false},
		{Control{Tools: []string{"Shell;id"}}, false},
	}
	for _, tc := range cases {
		if err := tc.c.Check(); (err == nil) != tc.ok {
			t.Errorf("Check(%+v) = %v, want ok=%v", tc.c, err, tc.ok)
		}
	}
}

func TestFitTimeout(t *testing.T) {
	for _, tc := range []struct {
		budget time.Duration
		want   int
	}{{55 * time.Second, 60}, {20 * time.Second, 25}, {10 * time.Minute, 605}} {
		if got := FitTimeout(tc.budget); got != tc.want {
			t.Errorf("FitTimeout(%s) = %d, want %d", tc.budget, got, tc.want)
		}
	}
}

// TestControlRelayQuoted: a relay URL with shell characters rides the
// command line as one quoted word and reads back whole.
func TestControlRelayQuoted(t *testing.T) {
	a := mustAgent(t, "codex")
	e := testEnv(t)
	relay := "ws://h:1/socket?a=1&b=$(id);x"
	e.Control = &Control{Relay: relay}
	for _, r := range a.regs(e) {
		if r.Event != "PermissionRequest" {
			continue
		}
		env, words := CommandEnv(r.Command)
		if env["AEP_RELAY"] != relay || len(words) != 2 {
			t.Errorf("command %q reads back relay %q and words %q", r.Command, env["AEP_RELAY"], words)
		}
		if !strings.Contains(r.Command, "'"+relay+"'") {
			t.Errorf("relay not quoted in %q", r.Command)
		}
	}
}
