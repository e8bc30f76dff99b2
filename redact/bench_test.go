package redact

import (
	"encoding/base64"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// mixedCorpus is 1 MB of agent-like text, generated deterministically: shell
// output, JSON tool payloads, prose, paths, ids, timestamps, with a planted
// secret or PII value every few lines.
func mixedCorpus() string {
	rng := rand.New(rand.NewPCG(42, 7))
	lines := []string{
		`{"tool_name":"Bash","tool_input":{"command":"go test ./... -run TestX","description":"run tests"},"max_tokens":4096}`,
		"total 48\ndrwxr-xr-x  5 user staff  160 Jul  3 10:15 .\n-rw-r--r--  1 user staff 1204 Jul  3 10:15 go.mod",
		"The secret to fast builds is caching; the bearer of good news said the tokenizer=cl100k_base is fine.",
		"commit 3f786850e387550fdab836ed7e6dc881de23001b Author: Dev <dev@example.com> Date: 2026-07-03T10:15:04Z",
		"cd /home/alice/src/project && make build VERSION=v1.2.3 # took 1240 ms",
		`{"id":"01JX9YB3P4T9ZK3V8Q2W6E5R7T","uuid":"550e8400-e29b-41d4-a716-446655440000","key":"attention.*","value":3}`,
		"export GITHUB_TOKEN=ghp_0123456789abcdefghijABCDEFGHIJ012345",
		"curl -H 'Authorization: Bearer abc123def456ghi789' https://api.example.com/v1/items?page=2",
		"call me at +1 415 555 0123 or mail ops@example.org",
		`Traceback (most recent call last): File "/Users/bob/app/main.py", line 12, in <module>`,
		"postgres://admin:s3cr3t@db.internal:5432/app?sslmode=disable",
		"func (p *Pipeline) Text(s string) string { return strings.TrimSpace(s) }",
	}
	var b strings.Builder
	for b.Len() < 1<<20 {
		b.WriteString(lines[rng.IntN(len(lines))])
		b.WriteByte('\n')
	}
	return b.String()[:1<<20]
}

// BenchmarkSinglePassMixed1MB is the baseline: one RE2 pass of a single
// simple pattern (an e-mail shape) over the same corpus.
func BenchmarkSinglePassMixed1MB(b *testing.B) {
	s := mixedCorpus()
	re := regexp.MustCompile(`[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}`)
	b.SetBytes(int64(len(s)))
	b.ResetTimer()
	for b.Loop() {
		re.ReplaceAllString(s, piiMark)
	}
}

// BenchmarkPipelineMixed1MB is the whole §9.4 pipeline over the corpus.
func BenchmarkPipelineMixed1MB(b *testing.B) {
	s := mixedCorpus()
	p := NewPipeline(Options{Home: "/home/alice"})
	p.Text(s)
	b.SetBytes(int64(len(s)))
	b.ResetTimer()
	for b.Loop() {
		p.Text(s)
	}
}

// BenchmarkFirstCall is a fresh pipeline's first redaction of a typical
// hook payload, rule compilation included.
func BenchmarkFirstCall(b *testing.B) {
	s := `{"command":"curl -H 'Authorization: Bearer abc123def456' https://x.io?token=abc","cwd":"/home/alice/p","note":"mail a@b.io"}`
	for b.Loop() {
		NewPipeline(Options{Home: "/home/alice"}).Text(s)
	}
}

func benchText(b *testing.B, s string) {
	p := NewPipeline(Options{})
	p.Text(s)
	b.SetBytes(int64(len(s)))
	b.ResetTimer()
	for b.Loop() {
		p.Text(s)
	}
}

func BenchmarkWorstOneChar1MB(b *testing.B)  { benchText(b, strings.Repeat("a", 1<<20)) }
func BenchmarkWorstDigits1MB(b *testing.B)   { benchText(b, strings.Repeat("1", 1<<20)) }
func BenchmarkWorstKeywords1MB(b *testing.B) { benchText(b, strings.Repeat("token=a ", 1<<17)) }
func BenchmarkWorstPEMOpen1MB(b *testing.B) {
	benchText(b, strings.Repeat("-----BEGIN A-----", (1<<20)/17))
}
func BenchmarkWorstBase64_1MB(b *testing.B) {
	rng := rand.New(rand.NewPCG(3, 4))
	raw := make([]byte, 3<<18)
	for i := range raw {
		raw[i] = byte(rng.Uint32())
	}
	benchText(b, base64.StdEncoding.EncodeToString(raw))
}

// BenchmarkWorstNestedJSON walks 1 MB of deeply nested JSON as text and a
// 10000-deep value through the walker.
func BenchmarkWorstNestedJSON(b *testing.B) {
	const depth = 10000
	var v any = "password=x"
	for i := 0; i < depth; i++ {
		v = map[string]any{"k": []any{v}}
	}
	text := strings.Repeat(`{"a":[`, (1<<20)/12) + strings.Repeat(`]}`, (1<<20)/12)
	p := NewPipeline(Options{})
	b.ResetTimer()
	for b.Loop() {
		p.Value(v)
		p.Text(text)
	}
}

// BenchmarkWorstProse1MB is one long line of prose nouns and their verbs:
// each hit reads a bounded look ahead, never the rest of the line.
func BenchmarkWorstProse1MB(b *testing.B) {
	benchText(b, strings.Repeat("the PIN is the key is ", (1<<20)/22))
}
