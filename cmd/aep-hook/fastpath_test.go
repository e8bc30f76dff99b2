package main

import (
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
			want: func(c HookCmd) bool { return c.NoPII && !c.Insecure }},
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
