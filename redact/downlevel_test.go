package redact

import (
	"strings"
	"testing"
)

func env(capture, typ, data string) string {
	s := `{"aep":"0.1","id":"01J","type":"` + typ + `","time":"2026-07-03T10:15:04.221Z","source":"aep://h/agent/codex/session/s","agent":"codex","session":"s","seq":3,"subject":"shell"`
	if capture != "" {
		s += `,"capture":"` + capture + `"`
	}
	if data != "" {
		s += `,"data":` + data
	}
	return s + "}"
}

func TestDownlevel(t *testing.T) {
	tests := []struct {
		name    string
		in      string
		ceiling Level
		want    string
	}{
		{"never up-levels", env("metadata", "tool.requested", `{"tool":{"name":"x"}}`), Full,
			env("metadata", "tool.requested", `{"tool":{"name":"x"}}`)},
		{"absent capture is metadata", env("", "tool.requested", `{"tool":{"name":"x"}}`), Redacted,
			env("", "tool.requested", `{"tool":{"name":"x"}}`)},
		{"full to redacted lands on metadata", env("full", "tool.requested", `{"tool":{"name":"x"},"args":{"a":1},"args_digest":"d"}`), Redacted,
			env("metadata", "tool.requested", `{"args_digest":"d","tool":{"name":"x"}}`)},
		{"redacted passes redacted", env("redacted", "tool.completed", `{"tool":{"name":"x"},"result_redacted":"r"}`), Redacted,
			env("redacted", "tool.completed", `{"result_redacted":"r","tool":{"name":"x"}}`)},
		{"redacted to metadata", env("redacted", "run.started", `{"prompt":"p","trigger":"user"}`), Metadata,
			env("metadata", "run.started", `{"trigger":"user"}`)},
		{"starred degrade", env("redacted", "attention.requested", `{"kind":"permission","prompt":"Run rm?","options":[{"id":"allow","label":"Allow"},{"label":"Deny"}]}`), Metadata,
			env("metadata", "attention.requested", `{"kind":"permission","options":[{"id":"allow","label":"allow"},{"label":"2"}],"prompt":"codex requests permission: shell"}`)},
		{"values degrade", env("full", "attention.answered", `{"answer":{"text":"t","values":{"a":"s","b":1}}}`), Redacted,
			env("metadata", "attention.answered", `{"answer":{"values":{"b":1}}}`)},
		{"unknown x type keeps no data", env("full", "x.codex.session.foo", `{"n":1}`), Metadata,
			env("metadata", "x.codex.session.foo", "")},
		{"unknown core type keeps no data", env("redacted", "message.agent.replied", `{"n":1}`), Metadata,
			env("metadata", "message.agent.replied", "")},
		{"x type at source level kept", env("redacted", "x.codex.session.foo", `{"n":1}`), Redacted,
			env("redacted", "x.codex.session.foo", `{"n":1}`)},
		{"none", env("metadata", "tool.requested", `{"tool":{"name":"x"}}`), None,
			env("none", "tool.requested", "")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := mustJSON(t, tt.in)
			got, err := Downlevel(in, tt.ceiling)
			if err != nil {
				t.Fatal(err)
			}
			if g, w := string(Canonical(got)), string(Canonical(mustJSON(t, tt.want))); g != w {
				t.Errorf("\n got %s\nwant %s", g, w)
			}
		})
	}
}

func TestDownlevelInvalid(t *testing.T) {
	for _, in := range []string{
		`{"aep":"0.1"}`,
		strings.Replace(env("metadata", "run.started", ""), `"capture":"metadata"`, `"capture":"sekrit-value"`, 1),
		env("metadata", "run.started", `"data as text hunter2"`),
	} {
		_, err := Downlevel(mustJSON(t, in), Metadata)
		if err == nil {
			t.Errorf("accepted %s", in)
			continue
		}
		if strings.Contains(err.Error(), "sekrit") || strings.Contains(err.Error(), "hunter2") {
			t.Errorf("error quotes content: %v", err)
		}
	}
	if _, err := Downlevel(nil, Metadata); err == nil {
		t.Error("accepted nil")
	}
}

func TestPolicy(t *testing.T) {
	tests := []struct {
		name      string
		level     string
		overrides []string
		typ       string
		want      Level
		wantErr   bool
	}{
		{"default", "", nil, "tool.requested", Metadata, false},
		{"default attention", "", nil, "attention.requested", Redacted, false},
		{"none means none", "none", nil, "attention.requested", None, false},
		{"full stays full for attention", "full", nil, "attention.answered", Full, false},
		{"explicit override above none", "none", []string{"attention.*=redacted"}, "attention.requested", Redacted, false},
		{"explicit empty list", "metadata", []string{}, "attention.requested", Metadata, false},
		{"most specific wins", "metadata", []string{"*=none", "tool.*=redacted", "tool.completed=full"}, "tool.completed", Full, false},
		{"prefix beats star", "metadata", []string{"*=none", "tool.*=redacted"}, "tool.failed", Redacted, false},
		{"longer prefix wins", "metadata", []string{"x.*=none", "x.codex.*=full"}, "x.codex.session.a", Full, false},
		{"prefix needs dot", "metadata", []string{"tool.*=full"}, "toolx.a", Metadata, false},
		{"bad level fails closed", "loud", nil, "attention.requested", Metadata, true},
		{"bad pattern fails closed", "full", []string{"att*n=full"}, "tool.requested", Metadata, true},
		{"bad override level", "full", []string{"tool.*=max"}, "tool.requested", Metadata, true},
		{"missing =", "full", []string{"tool.*"}, "tool.requested", Metadata, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := ParsePolicy(tt.level, tt.overrides)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err %v", err)
			}
			if got := p.Ceiling(tt.typ); got != tt.want {
				t.Errorf("Ceiling(%s) = %v, want %v", tt.typ, got, tt.want)
			}
		})
	}
}
