package main

import (
	"bytes"
	"reflect"
	"testing"
)

func TestParseHookArgs(t *testing.T) {
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	cases := []struct {
		name string
		args []string
		env  map[string]string
		ok   bool
		want func(c HookCmd) bool
	}{
		{name: "bare", ok: true, want: func(c HookCmd) bool { return c.Capture == "" && c.Hook == "" }},
		{name: "hook name", args: []string{"PreToolUse"}, ok: true, want: func(c HookCmd) bool { return c.Hook == "PreToolUse" }},
		{name: "env twins", env: map[string]string{"AEP_CAPTURE": "full", "AEP_CAPTURE_OVERRIDES": "attention.*=full, tool.*=none", "AEP_OUT": "http://a,http://b", "AEP_INSECURE": "true"}, ok: true,
			want: func(c HookCmd) bool {
				return c.Capture == "full" && reflect.DeepEqual(c.CaptureOverride, []string{"attention.*=full", "tool.*=none"}) &&
					reflect.DeepEqual(c.Out, []string{"http://a", "http://b"}) && c.Insecure
			}},
		{name: "flags beat env", args: []string{"--capture", "none", "--capture-override=x.*=full", "--capture-override", "tool.*=redacted"},
			env: map[string]string{"AEP_CAPTURE": "full", "AEP_CAPTURE_OVERRIDES": "attention.*=full"}, ok: true,
			want: func(c HookCmd) bool {
				return c.Capture == "none" && reflect.DeepEqual(c.CaptureOverride, []string{"x.*=full", "tool.*=redacted"})
			}},
		{name: "booleans", args: []string{"--no-pii", "--insecure=false"}, env: map[string]string{"AEP_INSECURE": "1"}, ok: true,
			want: func(c HookCmd) bool { return c.KeepPII && !c.Insecure }},
		{name: "help goes to kong", args: []string{"--help"}},
		{name: "short flag goes to kong", args: []string{"-h"}},
		{name: "unknown flag goes to kong", args: []string{"--bogus"}},
		{name: "missing value goes to kong", args: []string{"--capture"}},
		{name: "two positionals go to kong", args: []string{"A", "B"}},
		{name: "bad env bool goes to kong", env: map[string]string{"AEP_INSECURE": "maybe"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, ok := parseHookArgs(c.args, env(c.env))
			if ok != c.ok {
				t.Fatalf("ok = %v, want %v", ok, c.ok)
			}
			if ok && !c.want(got) {
				t.Errorf("parsed %+v", got)
			}
		})
	}
}

// TestParseHookArgsMatchesKong holds the hook fast path to kong: for every
// command line and environment parseHookArgs accepts, kong parses the same
// hook command into the same settings (as they are read: kong keeps the
// spaces and empty items of a comma list, which the settings drop).
func TestParseHookArgsMatchesKong(t *testing.T) {
	envs := []map[string]string{
		nil,
		{"AEP_CAPTURE": "full", "AEP_CAPTURE_OVERRIDES": "attention.*=full, tool.*=none", "AEP_OUT": "http://a,http://b",
			"AEP_INSECURE": "true", "AEP_TOKEN": "tok", "AEP_SECRET_ENV": "A,B", "AEP_OTLP_MAX_CAPTURE": "redacted"},
		{"AEP_INSECURE": "0", "AEP_OUT": "otlp+http://c"},
	}
	argss := [][]string{
		nil,
		{"PreToolUse"},
		{"--capture", "none"},
		{"--capture=redacted", "--capture-override=x.*=full", "--capture-override", "tool.*=redacted,run.*=none"},
		{"--out", "http://x", "--out=http://y,http://z", "--token", "t2", "--insecure"},
		{"--insecure=false", "--no-pii", "--secret-env", "S1", "--secret-env=S2,S3"},
		{"--no-pii=true", "--otlp-max-capture", "full", "Stop"},
		{"Stop", "--capture", "metadata"},
		{"--keep-pii", "Stop"},
		{"--keep-pii=false"},
		{"--secret-env", "", "--out", " http://spaced , "},
		{"--capture-override", ""},
	}
	for ei, env := range envs {
		getenv := func(k string) string { return env[k] }
		for _, args := range argss {
			fast, ok := parseHookArgs(args, getenv)
			if !ok {
				t.Errorf("env %d %q: the fast path declined a command line it should take", ei, args)
				continue
			}
			var out, errb bytes.Buffer
			p, err := newParser(&Streams{Out: &out, Err: &errb}, getenv)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := p.Parse(append([]string{"codex"}, args...)); err != nil || p.exit != nil {
				t.Errorf("env %d %q: kong: %v (exit %v) %s", ei, args, err, p.exit, errb.String())
				continue
			}
			slow := p.hooks["codex"]
			if !reflect.DeepEqual(norm(fast.CaptureFlags), norm(slow.CaptureFlags)) || !reflect.DeepEqual(normOut(fast.OutFlags), normOut(slow.OutFlags)) || fast.Hook != slow.Hook {
				t.Errorf("env %d %q:\n fast %+v %+v %q\n kong %+v %+v %q", ei, args,
					fast.CaptureFlags, fast.OutFlags, fast.Hook, slow.CaptureFlags, slow.OutFlags, slow.Hook)
			}
		}
	}
}

// norm and normOut are the settings as they are read (cleanList; the
// destinations trim their items alike); a nil and an empty list alike, but
// for the overrides, where nil means the default.
func norm(c CaptureFlags) CaptureFlags {
	c.CaptureOverride, c.SecretEnv = cleanList(c.CaptureOverride), nonNil(cleanList(c.SecretEnv))
	return c
}

func normOut(o OutFlags) OutFlags {
	o.Out = nonNil(cleanList(o.Out))
	return o
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
