package printable

import (
	"testing"
	"unicode/utf8"
)

func TestString(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"empty", "", ""},
		{"plain", "Bash rm -rf build", "Bash rm -rf build"},
		{"non-ascii kept", "café — 日本語 ✓", "café — 日本語 ✓"},
		{"clear screen", "x\x1b[2J\x1b[H", `x\x1b[2J\x1b[H`},
		{"set title", "\x1b]0;owned\x07tool", `\x1b]0;owned\x07tool`},
		{"newline and tab", "a\nb\tc\r", `a\nb\tc\r`},
		{"nul and del", "a\x00b\x7f", `a\x00b\x7f`},
		{"c1 csi", "a\u009b2Jb", `a\u009b2Jb`},
		{"bidi override", "abc\u202edcba", `abc\u202edcba`},
		{"bidi isolate", "\u2066x\u2069", `\u2066x\u2069`},
		{"line separator", "a\u2028b", `a\u2028b`},
		{"invalid utf8", "a\xffb\xc3", `a\xffb\xc3`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := String(tt.in)
			if got != tt.want {
				t.Errorf("String(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if String(got) != got {
				t.Errorf("not idempotent on %q", got)
			}
		})
	}
}

func TestClip(t *testing.T) {
	if got := Clip("日本語テキスト", 3); got != "日本語…" {
		t.Errorf("Clip runes = %q", got)
	}
	if got := Clip("short", 10); got != "short" {
		t.Errorf("Clip short = %q", got)
	}
	if got := Clip("\x1b[2Jabc", 2); got != `\x1b[…` {
		t.Errorf("Clip escape = %q", got)
	}
}

// FuzzString asserts the output never holds a byte or rune a terminal acts
// on, and is valid UTF-8.
func FuzzString(f *testing.F) {
	for _, s := range []string{"", "a\x1b[31mred", "\u202e", "\xff\xfe", "ok"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := String(s)
		if !utf8.ValidString(out) {
			t.Fatalf("invalid UTF-8 out of %q", s)
		}
		for _, r := range out {
			if unsafe(r, utf8.RuneLen(r)) {
				t.Fatalf("unsafe rune %U survived in %q", r, out)
			}
		}
		if !hasUnsafe(s) && out != s {
			t.Fatalf("changed a safe string %q -> %q", s, out)
		}
	})
}

func hasUnsafe(s string) bool {
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if unsafe(r, n) {
			return true
		}
		i += n
	}
	return false
}
