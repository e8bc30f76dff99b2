package tees

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/aep-hook/aep-hook/harness/realagents/drift"
)

// newest asks the npm registry (its ordinary client) for the newest
// published version of pkg.
func (h *Harness) newest(pkg string) (string, error) {
	var out, errb bytes.Buffer
	cmd := exec.Command("npm", "view", pkg, "version")
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("npm view %s version: %w: %s", pkg, err, strings.TrimSpace(errb.String()))
	}
	return strings.TrimSpace(out.String()), nil
}

// Latest records every ACP agent peer (or only the named ones) at the
// newest version the registry publishes, into fixtures folders under dir
// (the pinned recordings stay as they are), and prints per peer what
// changed in its payloads against the pinned recordings (drift.Compare:
// the messages and updates it sends, the fields of each, the tools it
// offers its model), then replays the truth checks on the new recordings.
// A peer whose newest version is its pin is said so and not recorded
// again; one whose newest version does not install keeps its pin. It
// reports whether every new recording held.
func (h *Harness) Latest(peer, scenario, dir string) bool {
	if err := h.install(acpSDK); err != nil {
		fmt.Fprintln(h.Log, err)
		return false
	}
	pinned, err := LoadRecordings(h.Fixtures)
	if err != nil {
		fmt.Fprintln(h.Log, err)
		return false
	}
	ok := true
	var report []string
	for _, p := range acpPeers() {
		if !named(peer, p.Name) || p.Package == "" || p.Name == "acp-example-agent" || p.Name == "qwen-code-0.15.10" {
			continue
		}
		v, err := h.newest(p.Package)
		switch {
		case err != nil:
			report = append(report, fmt.Sprintf("%s: the newest version is unknown (%v); the pin %s stays", p.Name, err, p.Version))
			continue
		case v == p.Version:
			report = append(report, fmt.Sprintf("%s: %s@%s is the newest published; nothing to compare", p.Name, p.Package, v))
			continue
		}
		pin := p.Version
		p.Version = v
		if err := h.installPeer(p); err != nil {
			report = append(report, fmt.Sprintf("%s: %s@%s does not install (%v); the pin %s stays", p.Name, p.Package, v, err, pin))
			continue
		}
		fixtures := filepath.Join(dir, p.Name+"-"+v)
		var recs []Recording
		for _, s := range p.Scenarios {
			if !named(scenario, s.Name) {
				continue
			}
			fmt.Fprintf(h.Log, "record acp %s@%s/%s\n", p.Name, v, s.Name)
			rec, err := h.recordACP(p, s, fixtures)
			if err == nil {
				err = rec.Save()
			}
			if err != nil {
				ok = false
				fmt.Fprintf(h.Log, "  FAILED: %v\n", err)
				continue
			}
			recs = append(recs, rec)
		}
		var old []Recording
		for _, r := range pinned {
			if r.Meta.Peer == p.Name && named(scenario, r.Meta.Scenario) {
				old = append(old, r)
			}
		}
		var b strings.Builder
		fmt.Fprintf(&b, "%s: %s %s → %s (%d scenario(s) recorded at %s)\n", p.Name, p.Package, pin, v, len(recs), fixtures)
		drift.Compare(Surface(old), Surface(recs)).Write(&b, "  ")
		passed := 0
		for _, rec := range recs {
			if h.replayOne(rec) {
				passed++
			}
		}
		fmt.Fprintf(&b, "  truth checks on the new recordings: %d/%d scenarios passed", passed, len(recs))
		ok = ok && passed == len(recs)
		report = append(report, b.String())
	}
	fmt.Fprintln(h.Log, "drift: the ACP peers at their newest versions")
	for _, r := range report {
		fmt.Fprintln(h.Log, "  "+strings.ReplaceAll(r, "\n", "\n  "))
	}
	return ok
}

// replayOne replays one recording at every ceiling, printing its problems.
func (h *Harness) replayOne(rec Recording) bool {
	ok := true
	for _, c := range Ceilings {
		tmp, err := os.MkdirTemp("", "aep-tee-replay-")
		if err != nil {
			fmt.Fprintln(h.Log, err)
			return false
		}
		r := h.Replay(rec, c, tmp, nil)
		os.RemoveAll(tmp)
		for _, p := range r.Problems {
			fmt.Fprintf(h.Log, "  %s at %s: %s\n", rec.Name(), c, p)
		}
		ok = ok && r.OK()
	}
	return ok
}

// Surface is what ACP recordings show of their agent's payloads, for the
// drift report: every message of either direction as a moment named by
// its direction and method ("agent request session/request_permission",
// "agent response session/new", "agent update tool_call": a session/update
// by its kind), with the fields of its params (an update's own) or
// result, and the tools the agent offered its model.
func Surface(recs []Recording) *drift.Surface {
	s := drift.New()
	known := len(recs) > 0
	for _, rec := range recs {
		asked := map[string]string{} // "dir id" → method of the request
		for _, e := range rec.Entries {
			if e.Dir == "" || !gjson.Valid(e.Line) {
				continue
			}
			who := "agent"
			if e.Dir == "c2a" {
				who = "editor"
			}
			msg := gjson.Parse(e.Line)
			method, id := msg.Get("method").String(), msg.Get("id").Raw
			switch {
			case method == "session/update":
				u := msg.Get("params.update")
				s.Moment(who+" update "+u.Get("sessionUpdate").String(), []byte(u.Raw))
			case method != "" && id != "":
				asked[e.Dir+" "+id] = method
				s.Moment(who+" request "+method, []byte(msg.Get("params").Raw))
			case method != "":
				s.Moment(who+" notification "+method, []byte(msg.Get("params").Raw))
			default:
				other := "a2c"
				if e.Dir == "a2c" {
					other = "c2a"
				}
				m := asked[other+" "+id]
				if msg.Get("error").Exists() {
					s.Moment(who+" error "+m, []byte(msg.Get("error").Raw))
					continue
				}
				s.Moment(who+" response "+m, []byte(msg.Get("result").Raw))
			}
		}
		if rec.Meta.Tools == nil {
			known = false
		}
		s.Tool(rec.Meta.Tools...)
	}
	if !known {
		s.Tools = nil
	}
	return s
}
