package tees

import (
	"context"
	"embed"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/aep-hook/aep-hook/harness/realagents"
	"github.com/aep-hook/aep-hook/harness/realagents/fakemodel"
	"github.com/aep-hook/aep-hook/harness/truth"
)

//go:embed js/*.mjs
var drivers embed.FS

// Harness records and replays the tees' real-peer scenarios.
type Harness struct {
	// Cache is the shared install cache (realagents.DefaultCache).
	Cache string
	// Fixtures is the repository's fixtures folder.
	Fixtures string
	// AEPHook is the aep-hook binary the tees run as.
	AEPHook string
	// Self starts this harness's scripted peers (replay): the command
	// line that, with the peer's arguments appended, runs RunPeer.
	Self []string
	// Log receives progress lines.
	Log io.Writer
}

// pkg is a set of pinned npm packages installed together into
// cache/<Dir>.
type pkg struct {
	Dir   string
	Names []string
}

// install makes sure the packages are in the cache, installing them with
// the ordinary npm client when they are not.
func (h *Harness) install(p pkg) error {
	dir := filepath.Join(h.Cache, p.Dir)
	missing := false
	for _, n := range p.Names {
		name := n[:strings.LastIndexByte(n, '@')]
		if _, err := os.Stat(filepath.Join(dir, "node_modules", name, "package.json")); err != nil {
			missing = true
		}
	}
	if !missing {
		return nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	fmt.Fprintf(h.Log, "installing %s into %s\n", strings.Join(p.Names, " "), dir)
	cmd := exec.Command("npm", append([]string{"install", "--no-audit", "--no-fund", "--prefix", dir}, p.Names...)...)
	cmd.Stdout, cmd.Stderr = h.Log, h.Log
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("npm install %s: %w", strings.Join(p.Names, " "), err)
	}
	return nil
}

// run is one scenario being recorded, in a sandbox of its own.
type run struct {
	realagents.Run // Dir, Home, Work, Env, Model; Setenv, WriteJSON
	h              *Harness
	cache          string
	rw             *realagents.Rewriter
}

func (h *Harness) newRun() (*run, error) {
	sb, err := realagents.NewSandbox("aep-real-tee-")
	if err != nil {
		return nil, err
	}
	r := &run{Run: realagents.Run{Dir: sb.Dir, Home: sb.Home, Work: sb.Work, Env: sb.Env}, h: h, cache: h.Cache, rw: sb.Rewriter()}
	ents, _ := drivers.ReadDir("js")
	for _, e := range ents {
		b, _ := drivers.ReadFile("js/" + e.Name())
		if err := r.WriteFile(filepath.Join(sb.Dir, "js", e.Name()), string(b)); err != nil {
			return nil, err
		}
	}
	return r, nil
}

func (r *run) close() {
	if r.Model != nil {
		r.Model.Close()
	}
	if os.Getenv("AEP_REAL_KEEP") == "" {
		os.RemoveAll(r.Dir)
	}
}

// node runs a driver script to its end, bounded by timeout.
func (r *run) node(timeout time.Duration, script string, args ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", append([]string{filepath.Join(r.Dir, "js", script)}, args...)...)
	cmd.Dir, cmd.Env = r.Work, r.Env
	cmd.Stdout, cmd.Stderr = r.h.Log, r.h.Log
	cmd.WaitDelay = 5 * time.Second
	err := cmd.Run()
	if ctx.Err() != nil {
		return fmt.Errorf("%s timed out after %s", script, timeout)
	}
	return err
}

// RecordAll records every scenario (or only the named peer/scenario),
// keeping a scenario's earlier recording when it fails to record.
func (h *Harness) RecordAll(peer, scenario string) error {
	var errs []string
	fail := func(err error) {
		fmt.Fprintf(h.Log, "  FAILED: %v\n", err)
		errs = append(errs, err.Error())
	}
	if err := h.install(acpSDK); err != nil {
		return err
	}
	for _, p := range acpPeers() {
		if !named(peer, p.Name) {
			continue
		}
		if err := h.installPeer(p); err != nil {
			fail(err)
			continue
		}
		for _, s := range p.Scenarios {
			if !named(scenario, s.Name) {
				continue
			}
			fmt.Fprintf(h.Log, "record acp %s/%s\n", p.Name, s.Name)
			rec, err := h.recordACP(p, s, h.Fixtures)
			if err != nil {
				fail(fmt.Errorf("acp %s/%s: %w", p.Name, s.Name, err))
				continue
			}
			if err := rec.Save(); err != nil {
				fail(err)
			}
		}
	}
	if peer == "" || peer == "agui" {
		if err := h.install(aguiPkg); err != nil {
			return err
		}
		for _, s := range aguiScenarios() {
			if !named(scenario, s.Name) {
				continue
			}
			fmt.Fprintf(h.Log, "record agui %s\n", s.Name)
			rec, err := h.recordAGUI(s)
			if err != nil {
				fail(fmt.Errorf("agui %s: %w", s.Name, err))
				continue
			}
			if err := rec.Save(); err != nil {
				fail(err)
			}
		}
	}
	if len(errs) > 0 {
		return fmt.Errorf("%d scenario(s) not recorded:\n  %s", len(errs), strings.Join(errs, "\n  "))
	}
	return nil
}

// installPeer installs what the peer runs: its package, the example
// agent's SDK, Node 22.
func (h *Harness) installPeer(p *acpPeer) error {
	if p.Name == "acp-example-agent" {
		return h.install(acpExample)
	}
	if p.Node22 {
		if err := h.install(node22); err != nil {
			return err
		}
	}
	return h.install(p.pkg())
}

// named reports whether name is in the comma-separated list ("" names
// every one).
func named(list, name string) bool {
	if list == "" {
		return true
	}
	for _, n := range strings.Split(list, ",") {
		if n == name {
			return true
		}
	}
	return false
}

// recordACP drives one scenario with the SDK client through the tee; the
// recording's folder is under fixtures.
func (h *Harness) recordACP(p *acpPeer, s scenario, fixtures string) (Recording, error) {
	r, err := h.newRun()
	if err != nil {
		return Recording{}, err
	}
	defer r.close()
	if p.Node22 {
		r.Setenv("PATH", filepath.Join(h.Cache, node22.Dir, "node_modules", ".bin")+string(os.PathListSeparator)+os.Getenv("PATH"))
	}
	if p.Model != nil {
		logf, err := os.Create(filepath.Join(r.Dir, "model.log"))
		if err != nil {
			return Recording{}, err
		}
		defer logf.Close()
		if r.Model, err = fakemodel.Start(p.API, p.Model(r), logf); err != nil {
			return Recording{}, err
		}
	}
	if p.Setup != nil {
		if err := p.Setup(r); err != nil {
			return Recording{}, err
		}
	}
	r.Setenv("ACP_SDK", filepath.Join(h.Cache, acpSDK.Dir, "node_modules", "@agentclientprotocol", "sdk", "dist", "v1", "stable", "acp.js"))
	r.Setenv("ACP_CWD", r.Work)
	transcript := filepath.Join(r.Dir, "transcript.jsonl")
	args := append([]string{s.Name, transcript, "--", h.AEPHook, "acp", "--"}, p.Command(r)...)
	if err := r.node(3*time.Minute, "acp-client.mjs", args...); err != nil {
		return Recording{}, err
	}
	raw, err := os.ReadFile(transcript)
	if err != nil {
		return Recording{}, err
	}
	rec := Recording{
		Dir: filepath.Join(fixtures, ACP, "recorded", p.Name+"-"+s.Name),
		Meta: Meta{Protocol: ACP, Peer: p.Name, Package: p.Package, Version: p.Version, Client: acpSDK.Names[0],
			Scenario: s.Name, Description: s.Description, Facts: s.Facts, Denied: s.Denied, Orphan: s.Orphan},
	}
	if r.Model != nil {
		rec.Meta.Tools = offered(r.Model.Requests())
	}
	for _, l := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		var e Entry
		if err := json.Unmarshal([]byte(r.rw.String(l)), &e); err != nil {
			return rec, fmt.Errorf("transcript: %w", err)
		}
		if e.Event == "exit" {
			rec.Meta.ExitMS = e.MSAfterKill
		}
		rec.Entries = append(rec.Entries, e)
	}
	if n := len(rec.Entries); n == 0 || rec.Entries[n-1].Event != "exit" {
		return rec, fmt.Errorf("the transcript does not end with the tee's exit")
	}
	h.checkLive(r, rec)
	return rec, nil
}

// offered is the sorted set of tool names the model requests offered.
func offered(reqs []fakemodel.Request) []string {
	seen := map[string]bool{}
	out := []string{}
	for _, q := range reqs {
		for _, t := range q.Tools {
			if !seen[t] {
				seen[t] = true
				out = append(out, t)
			}
		}
	}
	sort.Strings(out)
	return out
}

// checkLive prints what the real tee recorded during the real run, held
// to the scenario's facts (replay is what asserts; this shows the real
// run agreed).
func (h *Harness) checkLive(r *run, rec Recording) {
	logs, err := realagents.ReadLogs(filepath.Join(r.Dir, "aep", "logs", rec.Meta.Protocol))
	if err != nil {
		fmt.Fprintf(h.Log, "  live record: %v\n", err)
		return
	}
	problems := append(truth.Check(logs, rec.Meta.Facts, nil), teeChecks(logs, rec)...)
	fmt.Fprintf(h.Log, "  live record: %s\n", truth.Summary(logs))
	for _, p := range problems {
		fmt.Fprintf(h.Log, "  live record problem: %s\n", p)
	}
	if b, err := os.ReadFile(filepath.Join(r.Dir, "aep", "internal", "errors.jsonl")); err == nil {
		fmt.Fprintf(h.Log, "  live internal failures: %s\n", strings.TrimSpace(string(b)))
	}
}
