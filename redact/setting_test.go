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
