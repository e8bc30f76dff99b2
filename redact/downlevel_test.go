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
		{"absent capture counts as full", env("", "tool.requested", `{"tool":{"name":"x"},"args":{"c":"cat .env"}}`), Redacted,
			env("metadata", "tool.requested", `{"tool":{"name":"x"}}`)},
		{"absent capture at metadata strips free text", env("", "attention.requested", `{"kind":"permission","prompt":"mysql -pHUNTER2"}`), Metadata,
			env("metadata", "attention.requested", `{"kind":"permission","prompt":"codex requests permission: shell"}`)},
		{"metadata claim is not trusted", env("metadata", "attention.requested", `{"kind":"permission","prompt":"mysql -pHUNTER2","options":[{"id":"a","label":"Allow rm -rf /x"}]}`), Metadata,
			env("metadata", "attention.requested", `{"kind":"permission","options":[{"id":"a","label":"a"}],"prompt":"codex requests permission: shell"}`)},
		{"metadata claim under a redacted ceiling", env("metadata", "run.started", `{"prompt":"free text","trigger":"user"}`), Redacted,
			env("metadata", "run.started", `{"trigger":"user"}`)},
		{"none claim with data", env("none", "run.started", `{"prompt":"p"}`), Metadata,
			env("none", "run.started", "")},
		{"redacted claim drops full fields", env("redacted", "tool.requested", `{"tool":{"name":"x"},"args":{"c":"raw"},"args_redacted":{"c":"r"}}`), Redacted,
			env("redacted", "tool.requested", `{"args_redacted":{"c":"r"},"tool":{"name":"x"}}`)},
		{"values lists of strings are free text", env("redacted", "attention.answered", `{"answer":{"values":{"a":["my own words","more"],"b":2,"c":false,"d":"text"}}}`), Metadata,
			env("metadata", "attention.answered", `{"answer":{"values":{"b":2,"c":false}}}`)},
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
		{"unknown x type down-leveled loses its data", env("full", "x.codex.session.foo", `{"anything":"SECRET","n":1,"model":"gpt-5"}`), Redacted,
			env("metadata", "x.codex.session.foo", "")},
		{"unknown x type without a claim loses its data", env("", "x.codex.session.foo", `{"n":1,"model":"gpt-5"}`), Metadata,
			env("metadata", "x.codex.session.foo", "")},
		{"unknown x type redacted to metadata loses its data", env("redacted", "x.codex.session.foo", `{"n":1}`), Metadata,
			env("metadata", "x.codex.session.foo", "")},
		{"unknown x type at its metadata claim keeps structure", env("metadata", "x.codex.session.foo", `{"n":1,"model":"gpt-5","cmd":"rm -rf /x","path":"/home/a/b","pw":"hunter2","nested":{"ok":true,"note":"free text"},"list":["a1","two words"],"tok":"ghp_0123456789abcdefghijABCDEFGHIJ012345"}`), Metadata,
			env("metadata", "x.codex.session.foo", `{"list":["a1"],"model":"gpt-5","n":1,"nested":{"ok":true}}`)},
		{"unknown x type with only text keeps no data", env("metadata", "x.codex.session.foo", `{"prompt":"mysql -pHUNTER2"}`), Metadata,
			env("metadata", "x.codex.session.foo", "")},
		{"unknown core type down-leveled loses its data", env("redacted", "message.agent.replied", `{"n":1,"text":"hello there"}`), Metadata,
			env("metadata", "message.agent.replied", "")},
		{"unknown core type at its claim keeps structure", env("metadata", "message.agent.replied", `{"n":1,"text":"hello there"}`), Metadata,
			env("metadata", "message.agent.replied", `{"n":1}`)},
		{"unannotated member of a known type", env("metadata", "tool.requested", `{"tool":{"name":"x"},"vendor_ts":"t1","vendor_note":"mysql -pHUNTER2"}`), Metadata,
			env("metadata", "tool.requested", `{"tool":{"name":"x"},"vendor_ts":"t1"}`)},
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
