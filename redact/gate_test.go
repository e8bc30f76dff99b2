package redact

import (
	"encoding/json"
	"testing"
)

func mustJSON(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestGate(t *testing.T) {
	p := NewPipeline(Options{Home: "/home/op"})
	// An AskUserQuestion-like form: real labels at redacted, ids at
	// metadata, the prompt from Meta (claude-code.json ask_user_question).
	form := `{"kind":"form","prompt":"Pick for /home/op/app","fields":[
		{"id":"1","type":"select","label":"DB: which?","required":true,"other":true,
		 "choices":[{"id":"1","label":"PostgreSQL"},{"id":"2","label":"SQLite"}]},
		{"id":"env","type":"string","label":"Why now"}],"respond_via":["control"]}`
	tests := []struct {
		name    string
		c       Content
		ceiling Level
		want    string // canonical JSON; "null" for no data
	}{
		{"none", Content{Type: "tool.requested", Data: mustJSON(t, `{"tool":{"name":"Bash"}}`)}, None, `null`},
		{"args metadata", Content{Type: "tool.requested", Data: mustJSON(t, `{"tool":{"name":"Bash","call_id":"c1"},"args_digest":"d","args":{"command":"ls /home/op","password":"x"}}`)},
			Metadata, `{"args_digest":"d","tool":{"call_id":"c1","name":"Bash"}}`},
		{"args redacted", Content{Type: "tool.requested", Data: mustJSON(t, `{"tool":{"name":"Bash"},"args":{"command":"ls /home/op","password":"x"}}`)},
			Redacted, `{"args_redacted":{"command":"ls ~","password":"[REDACTED:secret]"},"tool":{"name":"Bash"}}`},
		{"args full", Content{Type: "tool.requested", Data: mustJSON(t, `{"tool":{"name":"Bash"},"args":{"command":"ls /home/op"},"args_redacted":{"command":"stale"}}`)},
			Full, `{"args":{"command":"ls /home/op"},"tool":{"name":"Bash"}}`},
		{"result string redacted", Content{Type: "tool.completed", Data: mustJSON(t, `{"tool":{"name":"Read"},"result":"mail a@example.com","result_digest":"r"}`)},
			Redacted, `{"result_digest":"r","result_redacted":"mail [REDACTED:pii]","tool":{"name":"Read"}}`},
		{"vendor member metadata", Content{Type: "tool.failed", Data: mustJSON(t, `{"tool":{"name":"x"},"error":{"type":"E","message":"boom at /home/op"},"vendor_ts":"t"}`)},
			Metadata, `{"error":{"type":"E"},"tool":{"name":"x"},"vendor_ts":"t"}`},
		{"error message redacted", Content{Type: "error.raised", Data: mustJSON(t, `{"error":{"message":"boom at /home/op/x"},"code":"E1"}`)},
			Redacted, `{"code":"E1","error":{"message":"boom at ~/x"}}`},
		{"emptied optional object dropped", Content{Type: "error.raised", Data: mustJSON(t, `{"error":{"message":"boom"},"code":"E1"}`)},
			Metadata, `{"code":"E1"}`},
		{"codex permission at redacted", Content{Type: "attention.requested", Agent: "codex", Subject: "shell",
			Data: mustJSON(t, `{"kind":"permission","prompt":"Permission requested: shell — rm -rf build (clean build dir)","options":[{"id":"allow","label":"Allow"},{"id":"deny","label":"Deny"}],"respond_via":["control"]}`)},
			Redacted, `{"kind":"permission","options":[{"id":"allow","label":"Allow"},{"id":"deny","label":"Deny"}],"prompt":"Permission requested: shell — rm -rf build (clean build dir)","respond_via":["control"]}`},
		{"permission at metadata", Content{Type: "attention.requested", Agent: "codex", Subject: "shell",
			Data: mustJSON(t, `{"kind":"permission","prompt":"rm -rf /secret","options":[{"label":"Allow"},{"id":"deny","label":"Deny"}],"context":{"x":1}}`)},
			Metadata, `{"kind":"permission","options":[{"label":"1"},{"id":"deny","label":"deny"}],"prompt":"codex requests permission: shell"}`},
		{"prompt without subject", Content{Type: "attention.requested", Agent: "pi", Data: mustJSON(t, `{"kind":"input","prompt":"what?"}`)},
			Metadata, `{"kind":"input","prompt":"pi requests input"}`},
		{"form at redacted", Content{Type: "attention.requested", Agent: "claude-code", Data: mustJSON(t, form)},
			Redacted, `{"fields":[{"choices":[{"id":"1","label":"PostgreSQL"},{"id":"2","label":"SQLite"}],"id":"1","label":"DB: which?","other":true,"required":true,"type":"select"},{"id":"env","label":"Why now","type":"string"}],"kind":"form","prompt":"Pick for ~/app","respond_via":["control"]}`},
		{"form at metadata with Meta prompt", Content{Type: "attention.requested", Agent: "claude-code", Data: mustJSON(t, form),
			Meta: map[string]any{"prompt": "claude-code asks 2 questions", "kind": "ignored"}},
			Metadata, `{"fields":[{"choices":[{"id":"1","label":"1"},{"id":"2","label":"2"}],"id":"1","label":"1","other":true,"required":true,"type":"select"},{"id":"env","label":"env","type":"string"}],"kind":"form","prompt":"claude-code asks 2 questions","respond_via":["control"]}`},
		{"answer values metadata", Content{Type: "attention.answered", Data: mustJSON(t, `{"answer":{"text":"free","values":{"a":"free text","b":2,"c":true,"d":["x","y"],"e":{"k":"v"}}},"via":"oob"}`)},
			Metadata, `{"answer":{"values":{"b":2,"c":true}},"via":"oob"}`},
		{"answer values all strings", Content{Type: "attention.answered", Data: mustJSON(t, `{"answer":{"values":{"1":"ship them both"}}}`)},
			Metadata, `{"answer":{}}`},
		{"answer Meta", Content{Type: "attention.answered", Data: mustJSON(t, `{"answer":{"values":{"1":"3"}}}`), Meta: map[string]any{"answer": map[string]any{"values": map[string]any{"1": "3"}}}},
			Metadata, `{"answer":{"values":{"1":"3"}}}`},
		{"answer redacted", Content{Type: "attention.answered", Data: mustJSON(t, `{"answer":{"text":"token=abc","values":{"1":"ship them both"}}}`)},
			Redacted, `{"answer":{"text":"token=[REDACTED:secret]","values":{"1":"ship them both"}}}`},
		{"documents", Content{Type: "resource.retrieval.returned", Data: mustJSON(t, `{"documents":[{"id":"d1","score":0.5,"content":"a@example.com"},"loose"],"count":1}`)},
			Redacted, `{"count":1,"documents":[{"content_redacted":"[REDACTED:pii]","id":"d1","score":0.5}]}`},
		{"citations metadata", Content{Type: "resource.citation.recorded", Data: mustJSON(t, `{"citations":[{"source":{"id":"s","uri":"https://x","title":"T"},"cited_text":"q","offset":{"char":{"start":1,"end":2}}}]}`)},
			Metadata, `{"citations":[{"offset":{"char":{"end":2,"start":1}},"source":{"id":"s"}}]}`},
		{"guardrail", Content{Type: "assessment.guardrail.recorded", Data: mustJSON(t, `{"guardrail":{"verdict":"blocked","explanation":"quoted bad"}}`)},
			Metadata, `{"guardrail":{"verdict":"blocked"}}`},
		{"vendor x levels", Content{Type: "x.codex.session.foo", Data: mustJSON(t, `{"n":1,"note":"a@example.com","raw":"secret stuff"}`), Levels: map[string]Level{"n": Metadata, "note": Redacted}},
			Redacted, `{"n":1,"note":"[REDACTED:pii]"}`},
		{"vendor x metadata", Content{Type: "x.codex.session.foo", Data: mustJSON(t, `{"n":1,"note":"a","raw":"r"}`), Levels: map[string]Level{"n": Metadata, "note": Redacted}},
			Metadata, `{"n":1}`},
		{"vendor x full", Content{Type: "x.codex.session.foo", Data: mustJSON(t, `{"n":1,"raw":"r"}`)},
			Full, `{"n":1,"raw":"r"}`},
		{"shape mismatch fails closed", Content{Type: "tool.requested", Data: mustJSON(t, `{"tool":"Bash as a string"}`)},
			Metadata, `{}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, honoured := Gate(tt.c, tt.ceiling, p)
			if honoured != tt.ceiling {
				t.Errorf("honoured %v, want %v", honoured, tt.ceiling)
			}
			if g := string(Canonical(got)); g != tt.want {
				t.Errorf("data\n got %s\nwant %s", g, tt.want)
			}
		})
	}
	if _, h := Gate(Content{Type: "run.started"}, Level(9), nil); h != Full {
		t.Errorf("ceiling above full honoured as %v", h)
	}
}
