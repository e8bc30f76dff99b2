// Command firstcall measures, in a fresh process, what a hook process pays
// the first time it redacts: building the rule table and its keyword
// index, compiling the patterns the payload's keywords hit, and the
// redaction itself. `make bench` runs it many times and prints the median.
// It also times the metadata path, which must compile nothing.
package main

import (
	"fmt"
	"time"

	"github.com/aep-hook/aep-hook/redact"
)

// prompt is a permission card carrying the usual command-line credential
// forms (a password flag, basic auth, a bearer header, a token query).
const prompt = "Permission requested: Bash — mysql -u root -pS3cr3tPw app && " +
	"curl -u admin:Adm1nPw -H 'Authorization: Bearer abc123def456ghi789' https://ci.example.com/api?token=t0k3n " +
	"&& export GH_TOKEN=ghp_0123456789abcdefghijABCDEFGHIJ012345 (deploy)"

func main() {
	st := time.Now()
	_, _ = redact.Gate(redact.Content{Type: "tool.requested", Agent: "claude-code",
		Data: map[string]any{"tool": map[string]any{"name": "Bash"}, "args": map[string]any{"command": prompt}}}, redact.Metadata, nil)
	meta := time.Since(st)
	st = time.Now()
	p := redact.NewPipeline(redact.Options{Home: "/home/dev"})
	_ = p.Text(prompt)
	first := time.Since(st)
	st = time.Now()
	_ = p.Text(prompt)
	second := time.Since(st)
	fmt.Println(first.Nanoseconds(), second.Nanoseconds(), meta.Nanoseconds())
}
