package redact

import (
	"strings"
	"testing"
)

// TestName holds identifiers to the token rules: the token replaced, the
// name's structure kept, ordinary names untouched.
func TestName(t *testing.T) {
	tests := []struct{ in, want string }{
		{"mcp__gh_ghp_Xw8Lq2Zr5Tn9Vb1Mc4Kd7Hf0Js3Pa6Ye2Gu_create_issue", "mcp__gh_" + secretMark + "_create_issue"},
		{"https://svc:Vq3#mZ8p@mcp.internal.example:8443/sse", "https://svc:" + secretMark + "@mcp.internal.example:8443/sse"},
		{"mcp__db_https://admin:Pw0rd-77@db.example__query", "mcp__db_https://admin:" + secretMark + "@db.example__query"},
		{"slack-xoxb-7731940266-8812045539174-qL3vNw8Rt2Zp6Yk9Hc1Df4Sa", "slack-" + secretMark},
		{"api?token=glpat-y7dJNC8r1WT8Kyievt2V", "api?token=" + secretMark},
		{"tool:mcp__gh_ghp_Xw8Lq2Zr5Tn9Vb1Mc4Kd7Hf0Js3Pa6Ye2Gu_list", "tool:mcp__gh_" + secretMark + "_list"},
		{"mcp__openai_sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4zAb7cDe0fGh3iJk6lMn__chat", "mcp__openai_" + secretMark + "__chat"},
	}
	for _, tt := range tests {
		if got := Name(tt.in); got != tt.want {
			t.Errorf("Name(%q)\n got %q\nwant %q", tt.in, got, tt.want)
		}
	}
	for _, ordinary := range []string{
		"", "Bash", "mcp__github__create_issue", "mcp__filesystem__read_text_file", "toolu_0100",
		"01M8SVVQFQ0M4WBNE7TVFKVAZB", "550e8400-e29b-41d4-a716-446655440000", "attn:tool:Bash:1df8bccaec747dc615b50678f35bf5b5",
		"claude-opus-4-1-20250805", "gpt-4o-2024-08-06", "ReadTextFileWithEncoding", "run:01J9Z3K4M5N6P7Q8R9S0T1V2W3",
		"end:session:", "sub:Explore", "tool:call_0123456789abcdef",
	} {
		if nameSuspect(ordinary) {
			t.Errorf("nameSuspect(%q) = true: an ordinary name builds the rules", ordinary)
		}
		if got := Name(ordinary); got != ordinary {
			t.Errorf("Name(%q) = %q", ordinary, got)
		}
	}
	// A call id looks like a token and is judged, but stays.
	for _, id := range []string{"toolu_01AbCdEfGhIjKlMnOpQrStUv", "call_Q1w2E3r4T5y6U7i8O9p0A1s2"} {
		if got := Name(id); got != id {
			t.Errorf("Name(%q) = %q", id, got)
		}
	}
}

// TestGateNames: identifiers kept verbatim below full still lose their
// tokens, at metadata and at redacted; at full they stay as they are.
func TestGateNames(t *testing.T) {
	tool := "mcp__gh_ghp_Xw8Lq2Zr5Tn9Vb1Mc4Kd7Hf0Js3Pa6Ye2Gu_create_issue"
	c := Content{Type: "tool.requested", Agent: "claude-code", Subject: tool,
		Data: map[string]any{"tool": map[string]any{"name": tool, "call_id": "toolu_01AbCdEfGhIjKlMnOpQrStUv"}, "args": map[string]any{"title": "x"},
			"vendor_extra": "server https://u:Pw0rd-77x@mcp.example/sse"}}
	for _, l := range []Level{Metadata, Redacted} {
		out, _ := Gate(c, l, nil)
		b := string(Canonical(out))
		if strings.Contains(b, "ghp_") || strings.Contains(b, "Pw0rd-77x") || !strings.Contains(b, "mcp__gh_"+secretMark+"_create_issue") {
			t.Errorf("%v: %s", l, b)
		}
		if !strings.Contains(b, "toolu_01AbCdEfGhIjKlMnOpQrStUv") {
			t.Errorf("%v: the call id was changed: %s", l, b)
		}
	}
	out, _ := Gate(Content{Type: "attention.requested", Agent: "claude-code", Subject: tool,
		Data: map[string]any{"kind": "permission", "prompt": "Permission requested: " + tool}}, Metadata, nil)
	if p := out["prompt"].(string); p != "claude-code requests permission: mcp__gh_"+secretMark+"_create_issue" {
		t.Errorf("metadata prompt %q", p)
	}
	out, _ = Gate(c, Full, nil)
	if out["tool"].(map[string]any)["name"] != tool {
		t.Errorf("full changed the tool name")
	}
	if c.Data["tool"].(map[string]any)["name"] != tool {
		t.Errorf("the gate modified its input")
	}
}

// TestValueForms: answers whose secrecy their structure states.
func TestValueForms(t *testing.T) {
	p := NewPipeline(Options{NoPII: true})
	in := map[string]any{
		"fields": []any{
			map[string]any{"field": "passphrase", "value": "amber falcon river 1987"},
			map[string]any{"name": "Signing key passphrase", "answer": "lantern orbit"},
			map[string]any{"name": "region", "value": "eu-west-1"},
		},
		"answers": map[string]any{
			"What do I paste into the runner config?": "Vm4Qs8Lk2Xd6Rt0Bp3Hz7Nc1Jw5Fy9Ea4Gu8Ko2Mi6Tl0Sv",
			"Which commit should I revert?":           "3f786850e387550fdab836ed7e6dc881de23001b",
		},
		"license_key": "7H3K-9QPX-2M4W-Z8RT-5VNB",
		"note":        "value: the password is Gl4ss-Otter-61",
	}
	got := string(Canonical(p.Value(in)))
	for _, leak := range []string{"amber", "lantern", "Vm4Qs8Lk", "7H3K", "Gl4ss"} {
		if strings.Contains(got, leak) {
			t.Errorf("%q survived: %s", leak, got)
		}
	}
	for _, keep := range []string{"eu-west-1", "3f786850e387550fdab836ed7e6dc881de23001b"} {
		if !strings.Contains(got, keep) {
			t.Errorf("%q lost: %s", keep, got)
		}
	}
	if out := p.Text("passphrase: amber falcon river 1987\nremember: true"); out != "passphrase: "+secretMark+"\nremember: true" {
		t.Errorf("phrase value: %q", out)
	}
}
