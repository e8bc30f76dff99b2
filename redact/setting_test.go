package redact

import (
	"strings"
	"testing"
)

func TestDiagnostic(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"empty", "", ""},
		{"plain", "write log: no space left on device", "write log: no space left on device"},
		{"query token", `destination "http://127.0.0.1:9/x?token=SECRETQ1": a query or fragment is not allowed`,
			`destination "http://127.0.0.1:9/x?[REDACTED:secret]": a query or fragment is not allowed`},
		{"fragment", `destination "http://h/x#SECRETFRAG2": no`, `destination "http://h/x#[REDACTED:secret]": no`},
		{"invalid escape in password", `destination "http://user:pa%ZZSECRET3@h:9/": parse "http://user:pa%ZZSECRET3@h:9/": invalid URL escape "%ZZ"`,
			`destination "http://[REDACTED:secret]@h:9/": parse "http://[REDACTED:secret]@h:9/": invalid URL escape "%ZZ"`},
		{"userinfo without password", "https://tok3n@h/x", "https://[REDACTED:secret]@h/x"},
		{"no scheme", `destination "collector:4318/v1?key=SECRET5": first path segment`, `destination "collector:4318/v1?[REDACTED:secret]": first path segment`},
		{"secret shape", "token ghp_0123456789abcdefghijABCDEFGHIJ012345 refused", "token [REDACTED:secret] refused"},
		{"prose question", "what? x=1", "what? x=1"},
		{"userinfo without a scheme", `destination "deploy:PW7@127.0.0.1:9": no host`, `destination "[REDACTED:secret]@127.0.0.1:9": no host`},
		{"userinfo without a scheme, bare", "parse deploy:PW7@h:9/x failed", "parse [REDACTED:secret]@h:9/x failed"},
		{"e-mail kept", "sent by alice@example.com: ok", "sent by alice@example.com: ok"},
		{"path then at kept", "open /srv/a:b@c", "open /srv/a:b@c"},
		{"paths kept", "open /home/alice/.aep/state/x.json: permission denied", "open /home/alice/.aep/state/x.json: permission denied"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Diagnostic(tt.in); got != tt.want {
				t.Errorf("Diagnostic(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestSettingClips(t *testing.T) {
	got := Setting("attention.*=redacted,x.codex.*=none,tool.*=full,more")
	if !strings.HasSuffix(got, "...") || len(got) > 43 {
		t.Errorf("Setting = %q", got)
	}
	if got := Setting("ééééééééééééééééééééééé"); !strings.HasSuffix(got, "...") || strings.ContainsRune(got, '\uFFFD') {
		t.Errorf("Setting cut a rune: %q", got)
	}
}

func TestDestination(t *testing.T) {
	for in, want := range map[string]string{
		"https://aep.example/base":                  "https://aep.example/base",
		"deploy:PW@127.0.0.1:9":                     "[REDACTED:secret]@127.0.0.1:9",
		"PW@127.0.0.1:9":                            "[REDACTED:secret]@127.0.0.1:9",
		"http://u:PW@h:9/x":                         "http://[REDACTED:secret]@h:9/x",
		"http://127.0.0.1:9/x?access_token=PW":      "http://127.0.0.1:9/x?[REDACTED:secret]",
		"h:9/x#PW":                                  "h:9/x#[REDACTED:secret]",
		"https://a.example,otlp+http://k:PW@o:4318": "https://a.example,otlp+http://[REDACTED:secret]@o:4318",
		"host/p@th":                                 "host/p@th",
	} {
		if got := Destination(in); got != want || strings.Contains(got, "PW") {
			t.Errorf("Destination(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzDestination: any setting is shown without panicking, and the
// password of a user:password@ authority never survives.
func FuzzDestination(f *testing.F) {
	for _, s := range []string{"deploy:PW@127.0.0.1:9", "http://u:p@h/x?t=1#f", "a,b@c,,[REDACTED:secret]@", "@@::,//?#"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Destination(s)
		_ = Diagnostic(s)
		if i := strings.Index(s, "://"); i < 0 && !strings.ContainsAny(s, ",/?#\"'`[] \t\n\r<>") {
			if at := strings.LastIndexByte(s, '@'); at > 0 && !strings.HasPrefix(got, secretMark+"@") {
				t.Fatalf("Destination(%q) = %q keeps the userinfo", s, got)
			}
		}
	})
}
