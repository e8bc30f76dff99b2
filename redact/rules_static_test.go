package redact

import (
	"slices"
	"strings"
	"testing"
)

// proseKeywords are the keywords of the prose rule: its nouns.
func proseKeywords() []string {
	out := make([]string, len(proseNouns))
	for i, n := range proseNouns {
		out[i] = n.word
	}
	return out
}

// printerKeywords are the keywords of the command-output rule: each
// printer's first word, and the two commands that print a variable.
func printerKeywords() []string {
	out := []string{"printenv ", "echo "}
	for _, p := range secretPrinters {
		w, _, _ := strings.Cut(p.words, " ")
		if w += " "; !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

// TestSpelledKeywords holds the keyword lists the context table spells
// out (a call there would run at every process start) to the tables they
// come from.
func TestSpelledKeywords(t *testing.T) {
	want := map[string][]string{
		"prose-credential":      proseKeywords(),
		"secret-command-output": printerKeywords(),
	}
	for _, r := range contextRuleTable {
		if kw, ok := want[r.id]; ok {
			if !slices.Equal(r.keywords, kw) {
				t.Errorf("rule %s keywords = %q, want %q", r.id, r.keywords, kw)
			}
			delete(want, r.id)
		}
	}
	for id := range want {
		t.Errorf("no rule %s in contextRuleTable", id)
	}
}

// TestLowerTable holds the spelled-out lower-case table to its definition:
// ASCII letters to lower case, every other byte to itself.
func TestLowerTable(t *testing.T) {
	if len(lower) != 256 {
		t.Fatalf("lower has %d bytes, want 256", len(lower))
	}
	for i := range 256 {
		want := byte(i)
		if i >= 'A' && i <= 'Z' {
			want += 'a' - 'A'
		}
		if lower[i] != want {
			t.Errorf("lower[%#x] = %#x, want %#x", i, lower[i], want)
		}
	}
}

// TestNearFunctions holds the named near functions to the vets they name:
// a hit followed by 32 hex digits, and a Discord token's first part
// reaching its '.' 23 to 28 bytes on.
func TestNearFunctions(t *testing.T) {
	hex := strings.Repeat("a1", 16)
	for _, c := range []struct {
		s    string
		i    int
		want bool
	}{
		{"SK" + hex, 0, true},
		{"xSK" + hex, 1, true},
		{"SK" + hex[:31], 0, false},
		{"SK" + hex[:31] + "g", 0, false},
	} {
		if got := hex32After2(c.s, c.i); got != c.want {
			t.Errorf("hex32After2(%q, %d) = %v, want %v", c.s, c.i, got, c.want)
		}
	}
	for _, c := range []struct {
		n    int
		want bool
	}{{22, false}, {23, true}, {28, true}, {29, false}} {
		s := strings.Repeat("M", c.n) + ".abcdef"
		if got := discordFirstPart(s, 0); got != c.want {
			t.Errorf("discordFirstPart(%d bytes then '.') = %v, want %v", c.n, got, c.want)
		}
	}
	if discordFirstPart("MTIz!x.abc", 0) {
		t.Error("discordFirstPart accepts a non-token byte")
	}
}
