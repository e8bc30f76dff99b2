package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/aep-hook/aep-hook/harness/pins"
	"github.com/aep-hook/aep-hook/harness/realagents"
	"github.com/aep-hook/aep-hook/harness/secretcorpus"
	"github.com/aep-hook/aep-hook/mapping"
)

// The corpus tests put every case of the redaction corpus where each
// surface carries text (a permission card's command, a prompt, a tool's
// input and output, a form's answer, an OTLP record's body), using the
// vendors' own payloads as templates: the Annex A pins and the recorded
// real-agent sessions. Then no case's secret may appear anywhere the
// built binary writes, at the default setting and at redacted.

// contentKeys are the payload members whose strings are text a person or
// a tool wrote: the corpus goes there.
const contentKeys = " prompt command cmd content text message title description output stdout stderr result " +
	"query pattern body answer value thought summary detail display action new_string old_string file_text " +
	"reason error delta reasoning instructions label question header arguments input data stringValue code msg "

// structuralKeys are members whose strings steer a table (types, names,
// ids, modes): they keep the template's values.
const structuralKeys = " type event hook_event_name hookEventName hookName method jsonrpc kind role status state name " +
	"tool_name toolName model version mode cwd transcript_path timestamp time source agent permission_mode " +
	"event.name service.name decision behavior tool permission "

// substitute returns the template with text in every content string, and
// how many it replaced. A nonzero nth makes the moment's own ids (a
// permission's, a tool call's; never a session's) unique to the case, so
// that a table's dedupe of a repeated card or call does not swallow every
// case after the first.
func substitute(tpl json.RawMessage, text string, nth int) (json.RawMessage, int) {
	dec := json.NewDecoder(bytes.NewReader(tpl))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return tpl, 0
	}
	n := 0
	var walk func(key string, v any) any
	walk = func(key string, v any) any {
		switch t := v.(type) {
		case map[string]any:
			for k, x := range t {
				t[k] = walk(k, x)
			}
		case []any:
			for i, x := range t {
				t[i] = walk(key, x)
			}
		case string:
			k := " " + key + " "
			idish := strings.HasSuffix(key, "id") || strings.HasSuffix(key, "Id") || strings.HasSuffix(key, "ID")
			if idish && nth > 0 && t != "" && !sessionKey(key) {
				return t + "-c" + strconv.Itoa(nth)
			}
			if strings.Contains(structuralKeys, k) || idish {
				return t
			}
			if key == "description" || key == "header" {
				return "Run the step" // a card appends it to the command, in parentheses
			}
			if strings.Contains(contentKeys, k) || strings.Contains(t, " ") && len(t) > 8 {
				n++
				return text
			}
		}
		return v
	}
	v = walk("", v)
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return tpl, 0
	}
	return bytes.TrimSpace(b.Bytes()), n
}

// sessionKey reports whether an id member names the session (or the
// conversation, thread or context a vendor keys its sessions by): those
// stay, so every case of one run lands in the session the template sets up.
func sessionKey(key string) bool {
	low := strings.ToLower(key)
	for _, w := range [...]string{"session", "conversation", "thread", "context"} {
		if strings.Contains(low, w) {
			return true
		}
	}
	return false
}

// template is one vendor moment the corpus is put into.
type template struct {
	hook    string // the moment name, for vendors that take it on the command line
	input   json.RawMessage
	prelude string // earlier lines the moment presumes
	attn    bool   // at the default setting it raises attention (a card with its prompt)
}

// line is the template as a map-verb input line.
func (tp template) line(v mapping.Vendor, input json.RawMessage) string {
	if v.HookFromArgv && tp.hook != "" {
		return tp.prelude + `{"hook":` + strconvQuote(tp.hook) + `,"input":` + string(input) + "}\n"
	}
	return tp.prelude + string(input) + "\n"
}

// maxTemplates bounds the moments per vendor the corpus is put into
// (those raising attention always count): enough to reach every kind of
// text member, few enough for a loaded machine.
const maxTemplates = 16

// templates gathers v's moments from the pins and the recorded sessions,
// each that carries text, marked by whether it raises attention (asked of
// the built binary for the moments that look like a permission or a
// question), up to maxTemplates evenly spread over the rest.
func templates(t *testing.T, v mapping.Vendor, pinDir, fixtures string) []template {
	templateCache.Lock()
	if templateCache.by == nil {
		templateCache.by = map[string]*vendorTemplates{}
	}
	vt := templateCache.by[v.Name]
	if vt == nil {
		vt = &vendorTemplates{}
		templateCache.by[v.Name] = vt
	}
	templateCache.Unlock()
	vt.once.Do(func() { vt.tps = gatherTemplates(t, v, pinDir, fixtures) })
	return vt.tps
}

// templateCache keeps each vendor's templates for the tests of one run:
// gathering them asks the built binary about each candidate.
var templateCache struct {
	sync.Mutex
	by map[string]*vendorTemplates
}

type vendorTemplates struct {
	once sync.Once
	tps  []template
}

// inParallel runs job(i) for i in [0, n) on a few goroutines: the jobs
// wait on processes of the built binary, and a loaded machine runs more of
// them at once than it has cores.
func inParallel(n int, job func(i int)) {
	next := make(chan int)
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				job(i)
			}
		}()
	}
	for i := range n {
		next <- i
	}
	close(next)
	wg.Wait()
}

func gatherTemplates(t *testing.T, v mapping.Vendor, pinDir, fixtures string) []template {
	var all []template
	add := func(tp template) {
		if _, n := substitute(tp.input, "x", 0); n > 0 {
			all = append(all, tp)
		}
	}
	if cases, _, err := pins.LoadPins(pinDir, v.Name); err == nil {
		for _, c := range cases {
			s := c.Steps[len(c.Steps)-1]
			prelude := ""
			if c.Seeded {
				prelude = streamPrelude(v, s.Input)
			}
			add(template{hook: s.Hook, input: s.Input, prelude: prelude})
		}
	}
	dirs, _ := filepath.Glob(filepath.Join(fixtures, v.Name, "recorded", "*", "firings.jsonl"))
	for _, f := range dirs {
		fx, err := realagents.LoadFixture(filepath.Dir(f))
		if err != nil {
			continue
		}
		for _, f := range fx.Firings {
			if len(f.Input) > 0 {
				add(template{hook: f.Hook(), input: f.Input})
			}
		}
	}
	var attn, rest []template
	for _, tp := range all {
		low := strings.ToLower(tp.hook + string(tp.input))
		if strings.Contains(low, "permission") || strings.Contains(low, "approv") || strings.Contains(low, "elicit") ||
			strings.Contains(low, "question") || strings.Contains(low, "confirm") {
			cmd := exec.Command(bin, "map", v.Name)
			cmd.Env, cmd.Stdin = hookEnv(t.TempDir(), t.TempDir()), strings.NewReader(tp.line(v, tp.input))
			if out, _ := cmd.Output(); strings.Contains(string(out), `"type":"attention.requested"`) {
				tp.attn = true
				attn = append(attn, tp)
				continue
			}
		}
		rest = append(rest, tp)
	}
	for i := 0; i < len(rest) && i < maxTemplates; i++ {
		attn = append(attn, rest[i*len(rest)/min(len(rest), maxTemplates)])
	}
	return attn
}

// loadCorpus reads the redaction corpus.
func loadCorpus(t *testing.T) []secretcorpus.Case {
	t.Helper()
	dir, ok := pins.Dir("AEP_SECRET_CORPUS", secretcorpus.Dir)
	if !ok {
		t.Fatal("corpus not found")
	}
	cases, err := secretcorpus.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	return cases
}

// secretCases are the cases with secrets.
func secretCases(cases []secretcorpus.Case) []secretcorpus.Case {
	var out []secretcorpus.Case
	for _, c := range cases {
		if !c.Clean {
			out = append(out, c)
		}
	}
	return out
}

// corpusSurfaces loads the corpus and the pins, or skips.
func corpusSurfaces(t *testing.T) (cases []secretcorpus.Case, pinDir, fixtures string) {
	t.Helper()
	cases = loadCorpus(t)
	pinDir, ok := pins.Dir("AEP_CONFORMANCE_DIR", "../shared/aep-spec/conformance/fixtures/mappings")
	if !ok {
		if os.Getenv("CI") == "true" {
			t.Fatal("conformance pins not found; mandatory under CI=true")
		}
		t.Skip("conformance pins not found: they are the payload templates")
	}
	fixtures, _ = pins.Dir("AEP_FIXTURES_DIR", "fixtures")
	return cases, pinDir, fixtures
}

// settings are the capture postures the corpus runs at: the default, and
// redacted everywhere.
var settings = []struct {
	name string
	args []string
	env  []string
}{
	{"default", nil, nil},
	{"redacted", []string{"--capture", "redacted"}, []string{"AEP_CAPTURE=redacted"}},
}

// leaks returns the cases some secret of which out holds.
func leaks(out string, cases []secretcorpus.Case) []string {
	var bad []string
	for _, c := range cases {
		for _, s := range c.Secrets {
			if strings.Contains(out, s) {
				bad = append(bad, fmt.Sprintf("%s:%s (%.40q)", c.File, c.Name, s))
				break
			}
		}
	}
	return bad
}

// TestNoSecretCorpusEveryTable runs every secret of the corpus through the
// built binary's map verb for every vendor table (hook vendors, the ACP and
// AG-UI tees, the A2A and stream bridges, the plugin forwarders, the OTLP
// sidecar tables): each case in one of the vendor's own moments, round
// robin, a card-raising one at the default setting. No secret may reach
// the output.
func TestNoSecretCorpusEveryTable(t *testing.T) {
	cases, pinDir, fixtures := corpusSurfaces(t)
	secret := secretCases(cases)
	var report []string
	var mu sync.Mutex
	// Every table at its default posture; a channel table (the tees, the
	// stream bridges, the sidecars, the forwarders) also as the primary
	// source, where it maps the content a companion leaves to the hooks.
	type job struct {
		v    mapping.Vendor
		mode string
	}
	var jobs []job
	for _, v := range mapping.Vendors() {
		jobs = append(jobs, job{v, ""})
		if v.Transport != mapping.TransportHook {
			jobs = append(jobs, job{v, "primary"})
		}
	}
	inParallel(len(jobs)*len(settings), func(n int) {
		v, mode, st := jobs[n/len(settings)].v, jobs[n/len(settings)].mode, settings[n%len(settings)]
		name := st.name
		args := append([]string{"map", v.Name}, st.args...)
		if mode != "" {
			name += "/" + mode
			args = append(args, "--mode", mode)
		}
		tps := templates(t, v, pinDir, fixtures)
		if len(tps) == 0 {
			return
		}
		var attn []template
		for _, tp := range tps {
			if tp.attn {
				attn = append(attn, tp)
			}
		}
		pool := tps
		if st.name == "default" && len(attn) > 0 {
			pool = attn
		}
		var in strings.Builder
		for i, c := range secret {
			tp := pool[i%len(pool)]
			sub, _ := substitute(tp.input, c.Text, i+1)
			in.WriteString(tp.line(v, sub))
		}
		cmd := exec.Command(bin, args...)
		cmd.Env = hookEnv(t.TempDir(), t.TempDir())
		cmd.Stdin = strings.NewReader(in.String())
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		cmd.Run() // a moment a table refuses is reported on stderr and skipped
		if d := os.Getenv("AEP_CORPUS_DUMP"); d != "" {
			// The inputs and outputs, to look a leak up by hand.
			file := v.Name + "-" + strings.ReplaceAll(name, "/", "-")
			os.WriteFile(filepath.Join(d, file+".in"), []byte(in.String()), 0o644)
			os.WriteFile(filepath.Join(d, file+".out"), out.Bytes(), 0o644)
		}
		for _, l := range leaks(out.String()+errb.String(), secret) {
			t.Errorf("%s at %s: %s leaks", v.Name, name, l)
		}
		mu.Lock()
		report = append(report, fmt.Sprintf("%s/%s: %d moments (%d templates, %d raising attention), %d events, %d of them attention.requested, %d redactions",
			v.Name, name, len(secret), len(tps), len(attn), strings.Count(out.String(), "\n"),
			strings.Count(out.String(), `"type":"attention.requested"`), strings.Count(out.String(), "[REDACTED:secret]")))
		mu.Unlock()
	})
	sort.Strings(report)
	t.Logf("%d secret cases through every table:\n%s", len(secret), strings.Join(report, "\n"))
}

// TestNoSecretCorpusHookProcesses runs the corpus through real hook
// processes, one per firing as an agent fires them: every third secret
// case, through one hook vendor (in turn), in one of that vendor's moments
// (in turn), at one of the settings (in turn; the map-verb test above runs
// every case at both). Then no file under AEP_HOME (logs, per-session
// state, the internal error log), no stdout and no stderr holds a secret.
func TestNoSecretCorpusHookProcesses(t *testing.T) {
	cases, pinDir, fixtures := corpusSurfaces(t)
	secret := secretCases(cases)
	type hookVendor struct {
		v   mapping.Vendor
		tps []template
	}
	var vendors []hookVendor
	for _, v := range mapping.Vendors() {
		if v.Transport != mapping.TransportHook {
			continue
		}
		if tps := templates(t, v, pinDir, fixtures); len(tps) > 0 {
			vendors = append(vendors, hookVendor{v, tps})
		}
	}
	type firing struct {
		args  []string
		stdin []byte
	}
	for si, st := range settings {
		home, tmp := t.TempDir(), t.TempDir()
		env := append(hookEnv(home, tmp), st.env...)
		var mu sync.Mutex
		var outs strings.Builder
		var firings []firing
		per := map[string]int{}
		for i, c := range secret {
			if i%(3*len(settings)) != si {
				continue // a third of the cases, each at one setting: the map test runs them all at both
			}
			hv := vendors[(i/len(settings)/3)%len(vendors)]
			tp := hv.tps[(i/len(settings)/3/len(vendors))%len(hv.tps)]
			sub, _ := substitute(tp.input, c.Text, i+1)
			args := []string{hv.v.Name}
			if hv.v.HookFromArgv && tp.hook != "" {
				args = append(args, tp.hook)
			}
			per[hv.v.Name]++
			firings = append(firings, firing{args, sub})
		}
		inParallel(len(firings), func(i int) {
			f := firings[i]
			cmd := exec.Command(bin, f.args...)
			cmd.Env, cmd.Stdin = env, bytes.NewReader(f.stdin)
			var o, e bytes.Buffer
			cmd.Stdout, cmd.Stderr = &o, &e
			err := cmd.Run()
			mu.Lock()
			defer mu.Unlock()
			outs.WriteString(o.String() + e.String())
			if err != nil {
				fmt.Fprintf(&outs, "\nexit: %v %v\n", f.args, err)
			}
		})
		all := outs.String()
		if strings.Contains(all, "\nexit: ") {
			t.Errorf("at %s a hook process failed:\n%s", st.name, all)
		}
		files := 0
		filepath.WalkDir(home, func(path string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				files++
				b, _ := os.ReadFile(path)
				for _, l := range leaks(string(b), secret) {
					t.Errorf("at %s: %s holds %s", st.name, strings.TrimPrefix(path, home), l)
				}
			}
			return nil
		})
		for _, l := range leaks(all, secret) {
			t.Errorf("at %s: stdout or stderr holds %s", st.name, l)
		}
		t.Logf("at %s: %d hook processes over %d vendors %v, %d files under AEP_HOME", st.name, len(firings), len(vendors), per, files)
	}
}

// TestNoSecretCorpusRedactVerbs runs every case through the built
// binary's `aep-hook redact --json` (each text a string of one list, which
// the pipeline redacts one by one as the text verb redacts its input; and
// each text as a form's answers, under names that do and do not say
// secret) and every tenth through `aep-hook redact` itself: no secret
// survives, and every benign string comes out as it went in.
func TestNoSecretCorpusRedactVerbs(t *testing.T) {
	cases := loadCorpus(t)
	verb := func(stdin []byte, args ...string) []byte {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"redact", "--keep-pii", "--home", "/nonexistent-home"}, args...)...)
		cmd.Env, cmd.Stdin = hookEnv(t.TempDir(), t.TempDir()), bytes.NewReader(stdin)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("redact %v: %v", args, err)
		}
		return out
	}
	texts := make([]string, len(cases))
	var forms []any
	for i, c := range cases {
		texts[i] = c.Text
		if !c.Clean {
			forms = append(forms, map[string]any{"answers": map[string]any{"value": c.Text, "passphrase": c.Text,
				"What should I use?": c.Text}, "fields": []any{map[string]any{"field": "note", "value": c.Text}}})
		}
	}
	doc, _ := json.Marshal(texts)
	var got []string
	if err := json.Unmarshal(verb(doc, "--json"), &got); err != nil || len(got) != len(cases) {
		t.Fatalf("redact --json: %v, %d strings", err, len(got))
	}
	fp, benign := 0, 0
	for i, c := range cases {
		if c.Clean {
			benign++
			if got[i] != c.Text {
				fp++
				t.Errorf("redact: %s:%s changed:\n in %q\nout %q", c.File, c.Name, c.Text, got[i])
			}
			continue
		}
		for _, l := range leaks(got[i], []secretcorpus.Case{c}) {
			t.Errorf("redact: %s leaks", l)
		}
		if i%10 == 0 {
			if out := verb([]byte(c.Text)); string(out) != got[i] {
				t.Errorf("redact and redact --json differ on %s:%s:\n%q\n%q", c.File, c.Name, out, got[i])
			}
		}
	}
	doc, _ = json.Marshal(forms)
	for _, l := range leaks(string(verb(doc, "--json")), secretCases(cases)) {
		t.Errorf("redact --json, as form answers: %s leaks", l)
	}
	t.Logf("redact verbs: %d cases, %d benign, %d false positives", len(cases), benign, fp)
}

// TestNoSecretInIdentifiers: a token inside a tool name and an MCP server
// name holding a URL with a password, through real Claude Code hook
// processes (tool calls, a permission card, an elicitation and its answer)
// at every setting below full: the log keeps each name's structure with
// the token replaced, and neither the log nor the per-session state file
// holds the token.
func TestNoSecretInIdentifiers(t *testing.T) {
	const (
		token  = "ghp_Id3ntT0k3nXw8Lq2Zr5Tn9Vb1Mc4Kd7Hf0Js"
		tool   = "mcp__gh_" + token + "_create_issue"
		pw     = "Srv!Pw0rd-8812"
		server = "https://svc:" + pw + "@mcp.internal.example:8443/sse"
	)
	for _, st := range []struct{ name, env string }{{"default", ""}, {"metadata", "AEP_CAPTURE=metadata"}, {"redacted", "AEP_CAPTURE=redacted"}} {
		t.Run(st.name, func(t *testing.T) {
			home := t.TempDir()
			env := hookEnv(home, t.TempDir())
			if st.env != "" {
				env = append(env, st.env)
			}
			fire := func(p map[string]any) {
				t.Helper()
				p["session_id"], p["cwd"] = "ids", "/srv/app"
				b, _ := json.Marshal(p)
				if r := runHook(t, env, b, "claude-code"); r.code != 0 || strings.Contains(r.stdout+r.stderr, token) || strings.Contains(r.stdout+r.stderr, pw) {
					t.Fatalf("hook exit %d, output %q", r.code, r.stdout+r.stderr)
				}
			}
			input := map[string]any{"title": "flaky test", "body": "see CI"}
			fire(map[string]any{"hook_event_name": "UserPromptSubmit", "prompt": "file the issue"})
			fire(map[string]any{"hook_event_name": "PreToolUse", "tool_name": tool, "tool_use_id": "toolu_01IdA", "tool_input": input})
			fire(map[string]any{"hook_event_name": "PermissionRequest", "tool_name": tool, "tool_input": input})
			fire(map[string]any{"hook_event_name": "PostToolUse", "tool_name": tool, "tool_use_id": "toolu_01IdA", "tool_input": input, "tool_response": "created #12"})
			fire(map[string]any{"hook_event_name": "Elicitation", "mcp_server_name": server, "elicitation_id": "e1", "message": "Pick a repo",
				"requested_schema": map[string]any{"type": "object", "properties": map[string]any{"repo": map[string]any{"type": "string"}}}})
			fire(map[string]any{"hook_event_name": "ElicitationResult", "mcp_server_name": server, "elicitation_id": "e1", "action": "accept",
				"content": map[string]any{"repo": "acme/app"}})
			var files, named int
			filepath.WalkDir(home, func(path string, d fs.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				b, _ := os.ReadFile(path)
				files++
				if strings.Contains(string(b), token) || strings.Contains(string(b), pw) {
					t.Errorf("%s holds the token or the password:\n%s", strings.TrimPrefix(path, home), b)
				}
				if strings.Contains(string(b), "mcp__gh_[REDACTED:secret]_create_issue") {
					named++
				}
				return nil
			})
			log := readLog(t, filepath.Join(home, "logs", "claude-code", "ids.jsonl"))
			var subjects []string
			for _, e := range log {
				if s, ok := e["subject"].(string); ok {
					subjects = append(subjects, s)
				}
			}
			joined := strings.Join(subjects, " ")
			if !strings.Contains(joined, "mcp__gh_[REDACTED:secret]_create_issue") || !strings.Contains(joined, "https://svc:[REDACTED:secret]@mcp.internal.example:8443/sse") {
				t.Errorf("subjects lost the names' structure: %q", subjects)
			}
			if _, err := os.Stat(filepath.Join(home, "state")); err != nil || named == 0 {
				t.Errorf("no state written or no name kept (%d files): %v", files, err)
			}
		})
	}
}
