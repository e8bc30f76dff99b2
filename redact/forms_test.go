package redact

import (
	"slices"
	"strings"
	"testing"
)

func TestSecretFields(t *testing.T) {
	fields := []FormField{
		{ID: "pin", Type: "number"},
		{ID: "otp", Type: "string"},
		{ID: "one_time_code", Type: "string"},
		{ID: "db_login", Type: "string"},
		{ID: "secret_answer", Type: "string"},
		{ID: "password", Type: "string"},
		{ID: "passphrase", Type: "string"},
		{ID: "f1", Type: "string", WriteOnly: true},
		{ID: "f2", Type: "string", Format: "password"},
		{ID: "f3", Type: "string", Title: "Your PIN"},
		{ID: "f4", Type: "string", Description: "The 6-digit verification code we texted you"},
		{ID: "f5", Type: "string", Title: "API key"},
		{ID: "name", Type: "string", Title: "Your name"},
		{ID: "reason", Type: "string", Description: "Why deploy now"},
		{ID: "env", Type: "select"},
		{ID: "confirm", Type: "boolean", Title: "Confirm the password change"},
		{ID: "replicas", Type: "number"},
		{ID: "token_count", Type: "number"},
	}
	got := SecretFields("Configure the deployment", fields)
	want := []string{"pin", "otp", "one_time_code", "db_login", "secret_answer", "password", "passphrase", "f1", "f2", "f3", "f4", "f5"}
	if !slices.Equal(got, want) {
		t.Errorf("SecretFields\n got %v\nwant %v", got, want)
	}
	// The prompt's own words decide for a form's only free-text field.
	only := []FormField{{ID: "value", Type: "string"}, {ID: "remember", Type: "boolean"}}
	if got := SecretFields("Enter the one-time code sent to your phone", only); !slices.Equal(got, []string{"value"}) {
		t.Errorf("prompt wording: %v", got)
	}
	if got := SecretFields("Name the new branch", only); len(got) != 0 {
		t.Errorf("plain prompt: %v", got)
	}
	two := []FormField{{ID: "a", Type: "string"}, {ID: "b", Type: "string"}}
	if got := SecretFields("Enter your password", two); len(got) != 0 {
		t.Errorf("prompt wording with two free-text fields: %v", got)
	}
}

// TestGateFormAnswers is the case: MCP elicitation answers in
// fields named pin, otp, one_time_code, db_login, secret_answer (and the
// schema-marked ones) never leave verbatim at the default posture, and a
// numeric PIN does not pass as structure at metadata.
func TestGateFormAnswers(t *testing.T) {
	p := NewPipeline(Options{})
	values := map[string]any{
		"pin": float64(4921), "otp": "493021", "one_time_code": "771204", "db_login": "admin:Hunter2",
		"secret_answer": "Rosebud", "password": "pw-1", "passphrase": "correct horse", "field_7": "marked by schema",
		"reason": "ship the fix", "replicas": float64(3), "confirm": true, "env": "staging",
	}
	c := Content{Type: "attention.answered", Data: map[string]any{"answer": map[string]any{"values": values}, "via": "oob"},
		Secrets: []string{"field_7"}}
	got, _ := Gate(c, Redacted, p)
	b := string(Canonical(got))
	for _, leak := range []string{"4921", "493021", "771204", "Hunter2", "Rosebud", "pw-1", "correct horse", "marked by schema"} {
		if strings.Contains(b, leak) {
			t.Errorf("redacted answer leaks %q: %s", leak, b)
		}
	}
	for _, keep := range []string{`"reason":"ship the fix"`, `"replicas":3`, `"confirm":true`, `"env":"staging"`, `"pin":"[REDACTED:secret]"`} {
		if !strings.Contains(b, keep) {
			t.Errorf("redacted answer lost %s: %s", keep, b)
		}
	}
	c.Meta = map[string]any{"answer": map[string]any{"values": map[string]any{"pin": float64(4921), "replicas": float64(3), "env": "staging"}}}
	got, _ = Gate(c, Metadata, p)
	if b := string(Canonical(got)); b != `{"answer":{"values":{"env":"staging","replicas":3}},"via":"oob"}` {
		t.Errorf("metadata with Meta: %s", b)
	}
	c.Meta = nil
	got, _ = Gate(c, Metadata, p)
	if b := string(Canonical(got)); b != `{"answer":{"values":{"confirm":true,"replicas":3}},"via":"oob"}` {
		t.Errorf("metadata: %s", b)
	}
}

// TestValueKeys is the case: at redacted, object keys pass the same
// pipeline as values, keep a stable placeholder, and a key that asks for a
// secret (an AskUserQuestion answer is keyed by its question) hides its
// value.
func TestValueKeys(t *testing.T) {
	p := NewPipeline(Options{})
	in := map[string]any{
		"ghp_0123456789abcdefghijABCDEFGHIJ012345": "a",
		"Use AKIAIOSFODNN7EXAMPLE?":                "yes",
		"Use AKIAIOSFODNN7EXAMPL2?":                "no",
		"What is the database password?":           "Hunter2!",
		"Which region?":                            "eu-west-1",
		"password=hunter2 as the setting":          float64(1),
		"nested":                                   map[string]any{"sk-proj-AbCdEf0123456789AbCdEf0123456789AbCd": true},
	}
	for range 3 { // map order must not change the placeholders
		got := p.Value(in).(map[string]any)
		want := map[string]any{
			secretMark:                                   "a",
			"Use " + secretMark + "?":                    "no",
			"Use " + secretMark + "? #2":                 "yes",
			"What is the database password?":             secretMark,
			"Which region?":                              "eu-west-1",
			"password=" + secretMark + " as the setting": secretMark,
			"nested": map[string]any{secretMark: true},
		}
		if g, w := string(Canonical(got)), string(Canonical(want)); g != w {
			t.Fatalf("keys\n got %s\nwant %s", g, w)
		}
	}
}
