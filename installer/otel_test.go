package installer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPlanCodexOTel(t *testing.T) {
	for _, tc := range []struct {
		name, old string
		changed   bool
		want      string // in the new content, or in a note when unchanged
	}{
		{"no file", "", true, `[otel]`},
		{"settings kept", "model = \"m\"\n[tui]\nx = 1\n", true, "model = \"m\"\n[tui]\nx = 1\n\n" + otelMarker},
		{"ours, new token", "a = 1\n\n" + otelMarker + "\n[otel]\nexporter = { otlp-http = { endpoint = \"http://x/v1/logs\", protocol = \"binary\", headers = { authorization = \"Bearer OLD\" } } }\nenvironment = \"dev\"\n",
			true, "environment = \"dev\""},
		{"someone else's [otel]", "[otel]\nenvironment = \"prod\"\n", false, "already has an [otel] table of its own"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := testEnv(t)
			path := filepath.Join(e.Home, ".codex", "config.toml")
			if tc.old != "" {
				os.MkdirAll(filepath.Dir(path), 0o755)
				os.WriteFile(path, []byte(tc.old), 0o600)
			}
			c, err := PlanOTel("codex", e, "http://127.0.0.1:4318", "TOK", filepath.Join(e.Home, ".aep"))
			if err != nil {
				t.Fatal(err)
			}
			if c.Changed() != tc.changed {
				t.Fatalf("changed %v\n%s", c.Changed(), c.New)
			}
			got := string(c.New) + strings.Join(c.Notes, "\n")
			if !strings.Contains(got, tc.want) || tc.changed && (strings.Contains(got, "OLD") || strings.Count(got, "[otel]") != 1) {
				t.Errorf("got:\n%s", got)
			}
			if tc.changed {
				if err := checkCodexOTel(c.New, "TOK"); err != nil {
					t.Error(err)
				}
				if _, err := Apply(c, e.Now()); err != nil {
					t.Fatal(err)
				}
				again, _ := PlanOTel("codex", e, "http://127.0.0.1:4318", "TOK", filepath.Join(e.Home, ".aep"))
				if again.Changed() {
					t.Errorf("a second install changes it again:\n%s", Diff(path, again.Old, again.New))
				}
			}
		})
	}
}
