package main

import (
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// permissionPrompts are commands whose permission cards once came back
// verbatim in the log at the default setting, each with the secret it holds.
var permissionPrompts = []struct{ command, secret string }{
	{"mysql -u root -pPASSWORD1x prod", "PASSWORD1x"},
	{"sshpass -p PASSWORD2x ssh deploy@web1 uptime", "PASSWORD2x"},
	{"curl -u admin:PASSWORD3x https://ci.example.com/api", "PASSWORD3x"},
	{"docker login -u ci -p PASSWORD4x registry.example.com", "PASSWORD4x"},
	{"aws configure set aws_secret_access_key AWSVALUE5xyzAbc --profile prod", "AWSVALUE5xyzAbc"},
	{"printf 'machine api.example.com login me password NETRCVALUE6\\n' >> ~/.netrc", "NETRCVALUE6"},
	{"MY_SERVICE_CRED=4f9c2a7e1b8d3f6a0c5e9b2d7a4f1c8e ./bin/sync", "4f9c2a7e1b8d3f6a0c5e9b2d7a4f1c8e"},
	{"echo Z2hwXzAxMjM0NTY3ODlhYmNkZWZnaGlqQUJDREVGR0hJSjAxMjM0NQ== | base64 -d > token", "Z2hwXzAxMjM0NTY3ODlhYmNkZWZnaGlqQUJDREVGR0hJSjAxMjM0NQ"},
	{"export GH_TOKEN=ghp_0123456789abcdefghij\\\nSPLITHALF0123456 && gh repo list", "SPLITHALF0123456"},
	{"DISCORD=MTIzNDU2Nzg5MDEyMzQ1Njc4.GhIjKl.abcdefghijklmnopqrstuvwxyz0123456789AB node bot.js", "MTIzNDU2Nzg5MDEyMzQ1Njc4.GhIjKl"},
	{"git push https://ghp_9aB8cD7eF6gH5iJ4kL3mN2oP1qR0sT9uV8wX7yZ6@github.com/acme/app.git", "ghp_9aB8cD7eF6gH5iJ4kL3mN2oP1qR0sT9uV8wX7yZ6"},
	{"export STRIPE_API_KEY=\n  NEXTLINEVALUE7abc", "NEXTLINEVALUE7abc"},
	{"cloudflare = \"3a7f9c1e5b2d8f4a6c0e9b3d7f1a5c8e2b6d0f4a\"", "3a7f9c1e5b2d8f4a6c0e9b3d7f1a5c8e2b6d0f4a"},
	{"SECRET_KEY_BASE=8c5f0a3e9d2b7f4a1e6c9b0d5a8f3e2c rails s", "8c5f0a3e9d2b7f4a1e6c9b0d5a8f3e2c"},
}

// formSecrets are the answers of an MCP elicitation whose fields say they
// hold secrets, by name or by schema, each a distinct fake.
var formSecrets = map[string]any{
	"pin": float64(48213579), "otp": "OTPVALUE493021", "one_time_code": "OTCVALUE771204",
	"db_login": "admin:DBLOGINVALUE8", "secret_answer": "SECRETANSWERRosebud", "password": "PASSWORDFIELDpw1",
	"passphrase": "PASSPHRASEcorrect horse", "recovery": "WRITEONLYVALUE42", "pwfmt": "FORMATVALUE43",
	"code": "TITLEVALUE44",
}

// TestNoSecretAtDefaultSetting: every one of those commands, run
// through the built binary at the default setting (metadata, attention.*
// at redacted), leaves no raw secret anywhere under $AEP_HOME, on stdout or
// on stderr.
func TestNoSecretAtDefaultSetting(t *testing.T) {
	home, tmp := t.TempDir(), t.TempDir()
	var secrets []string
	var outs []hookRun
	run := func(env []string, payload any, args ...string) {
		t.Helper()
		b, err := json.Marshal(payload)
		if err != nil {
			t.Fatal(err)
		}
		r := runHook(t, env, b, args...)
		if r.code != 0 {
			t.Fatalf("hook exit %d, stderr %q", r.code, r.stderr)
		}
		outs = append(outs, r)
	}
	env := hookEnv(home, tmp)
	for i, p := range permissionPrompts {
		secrets = append(secrets, p.secret)
		for _, vendor := range []string{"claude-code", "qwen-code"} {
			run(env, map[string]any{
				"hook_event_name": "PermissionRequest", "session_id": "perm", "cwd": "/srv/app",
				"tool_name": "Bash", "tool_input": map[string]any{"command": p.command, "description": "step " + string(rune('a'+i))},
			}, vendor)
		}
	}

	// An MCP elicitation: secrets judged by field name, writeOnly, format,
	// title wording; then its answers.
	props := map[string]any{
		"pin": map[string]any{"type": "integer"}, "otp": map[string]any{"type": "string"},
		"one_time_code": map[string]any{"type": "string"}, "db_login": map[string]any{"type": "string"},
		"secret_answer": map[string]any{"type": "string"}, "password": map[string]any{"type": "string"},
		"passphrase": map[string]any{"type": "string"}, "recovery": map[string]any{"type": "string", "writeOnly": true},
		"pwfmt": map[string]any{"type": "string", "format": "password"}, "code": map[string]any{"type": "string", "title": "Your 2FA code"},
		"reason": map[string]any{"type": "string", "title": "Why now"},
	}
	run(env, map[string]any{"hook_event_name": "UserPromptSubmit", "session_id": "form", "cwd": "/srv/app", "prompt": "connect the db"}, "claude-code")
	run(env, map[string]any{"hook_event_name": "Elicitation", "session_id": "form", "cwd": "/srv/app", "mcp_server_name": "db",
		"elicitation_id": "e1", "message": "Sign in to the database", "requested_schema": map[string]any{"type": "object", "properties": props}}, "claude-code")
	answers := map[string]any{"reason": "rotate the keys"}
	for k, v := range formSecrets {
		answers[k] = v
		if s, ok := v.(string); ok {
			secrets = append(secrets, strings.Fields(s)[0])
		}
	}
	secrets = append(secrets, "48213579")
	run(env, map[string]any{"hook_event_name": "ElicitationResult", "session_id": "form", "cwd": "/srv/app", "mcp_server_name": "db",
		"elicitation_id": "e1", "action": "accept", "content": answers}, "claude-code")

	// Settings: every AEP_OUT form of the issue, recorded as a config
	// failure by the hook.
	for _, out := range []struct{ value, secret string }{
		{"http://127.0.0.1:9/x?token=OUTSECRETQ1", "OUTSECRETQ1"},
		{"http://127.0.0.1:9/x#OUTSECRETFRAG2", "OUTSECRETFRAG2"},
		{"http://user:pa%ZZOUTSECRET3@127.0.0.1:9/", "OUTSECRET3"},
	} {
		secrets = append(secrets, out.secret)
		run(hookEnv(home, tmp, "AEP_OUT="+out.value), map[string]any{"hook_event_name": "SessionStart", "session_id": "cfg", "cwd": "/srv/app", "source": "startup"}, "claude-code")
	}

	// JSON keys: AskUserQuestion answers are keyed by the question's own
	// words. Tool results reach the log only above the default ceiling, so
	// this one runs at AEP_CAPTURE=redacted, where keys pass the pipeline.
	question := "Deploy with token ghp_KEYQUESTION0123456789abcdefghijABCD?"
	secrets = append(secrets, "ghp_KEYQUESTION0123456789abcdefghijABCD", "ANSWERVALUEhunter9")
	ask := map[string]any{"questions": []any{map[string]any{"question": question, "header": "Deploy", "multiSelect": false,
		"options": []any{map[string]any{"label": "Yes"}, map[string]any{"label": "No"}}}}}
	renv := hookEnv(home, tmp, "AEP_CAPTURE=redacted")
	run(renv, map[string]any{"hook_event_name": "PreToolUse", "session_id": "keys", "cwd": "/srv/app", "tool_name": "AskUserQuestion",
		"tool_use_id": "t1", "tool_input": ask}, "claude-code")
	run(renv, map[string]any{"hook_event_name": "PostToolUse", "session_id": "keys", "cwd": "/srv/app", "tool_name": "AskUserQuestion",
		"tool_use_id": "t1", "tool_input": ask, "tool_response": map[string]any{"answers": map[string]any{
			question: "Yes", "What is the database password?": "ANSWERVALUEhunter9"}}}, "claude-code")

	var files int
	err := filepath.WalkDir(home, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		files++
		for _, s := range secrets {
			if strings.Contains(string(b), s) {
				t.Errorf("%s holds the raw secret %q", strings.TrimPrefix(path, home), s)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range outs {
		for _, s := range secrets {
			if strings.Contains(r.stdout, s) || strings.Contains(r.stderr, s) {
				t.Errorf("stdout/stderr holds the raw secret %q", s)
			}
		}
	}
	// The redaction must have happened in the log, not by dropping events.
	perm := readLog(t, filepath.Join(home, "logs", "claude-code", "perm.jsonl"))
	if len(perm) < len(permissionPrompts) {
		t.Fatalf("%d permission events, want %d", len(perm), len(permissionPrompts))
	}
	redacted := 0
	for _, e := range perm {
		if d, _ := e["data"].(map[string]any); e["capture"] == "redacted" && strings.Contains(d["prompt"].(string), "[REDACTED:secret]") {
			redacted++
		}
	}
	if redacted != len(perm) {
		t.Errorf("%d of %d permission prompts carry a redaction mark", redacted, len(perm))
	}
	keyed := readLog(t, filepath.Join(home, "logs", "claude-code", "keys.jsonl"))
	var result string
	for _, e := range keyed {
		if e["type"] == "tool.completed" {
			b, _ := json.Marshal(e["data"])
			result = string(b)
		}
	}
	if !strings.Contains(result, `"Deploy with token [REDACTED:secret]?":`) ||
		!strings.Contains(result, `"What is the database password?":"[REDACTED:secret]"`) {
		t.Errorf("question-keyed answers at redacted: %s", result)
	}
	if _, err := os.Stat(filepath.Join(home, "internal", "errors.jsonl")); err != nil {
		t.Errorf("the AEP_OUT failures were not recorded: %v", err)
	}
	t.Logf("%d files under AEP_HOME, %d secrets checked", files, len(secrets))
}
