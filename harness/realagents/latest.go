package realagents

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/aep-hook/aep-hook/harness/realagents/drift"
)

// Newest asks the npm registry, with its ordinary client, for the newest
// published version of pkg.
func Newest(pkg string) (string, error) {
	var out, errb bytes.Buffer
	cmd := exec.Command("npm", "view", pkg, "version")
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		return "", fmt.Errorf("npm view %s version: %v: %s", pkg, err, strings.TrimSpace(errb.String()))
	}
	v := strings.TrimSpace(out.String())
	if v == "" {
		return "", fmt.Errorf("npm view %s version: no version", pkg)
	}
	return v, nil
}

// Drift is one agent's drift check: the pin, the newest published
// version, and what happened when the harness tried it.
type Drift struct {
	Agent, Package, Pin, Newest string
	// Skipped says why nothing was recorded (the pin is the newest, the
	// newest does not install, the registry did not answer).
	Skipped string
	// Failed lists the scenarios that did not record.
	Failed []string
	// Passed and Total count the new recordings' truth checks.
	Passed, Total int
}

// RecordLatest is `make real LATEST=1` for the hook agents: every agent
// (or the named one) is installed at the newest published version and its
// scenarios recorded into a folder of their own (the committed fixtures
// and the pins stay as they are); the payload surface of the new
// recordings is compared with the pinned ones' (drift.Diff: hook names,
// fields per moment, tools offered) and the truth checks replayed on them.
// It prints the report to h.Log and returns each agent's outcome; a newest
// version that cannot be installed is reported and the pin stays.
func (h *Harness) RecordLatest(agent, scenario string) []Drift {
	var report []Drift
	root, err := os.MkdirTemp("", "aep-latest-")
	if err != nil {
		fmt.Fprintln(h.Log, err)
		return nil
	}
	defer os.RemoveAll(root)
	for _, pinned := range Agents() {
		if agent != "" && pinned.Name != agent {
			continue
		}
		d := Drift{Agent: pinned.Name, Package: pinned.Package, Pin: pinned.Version}
		report = append(report, h.latestOne(pinned, scenario, root, &d))
	}
	WriteDrift(h.Log, report)
	return report
}

// latestOne records one agent at its newest version into root and fills d.
func (h *Harness) latestOne(pinned *Agent, scenario, root string, d *Drift) Drift {
	newest, err := Newest(pinned.Package)
	if err != nil {
		d.Skipped = err.Error()
		return *d
	}
	d.Newest = newest
	if newest == pinned.Version {
		d.Skipped = "the pin is the newest published version"
		return *d
	}
	a := *pinned
	a.Version, a.Cache = newest, ""
	if pinned.Cache != "" {
		// An agent run from another's install (Kimi web) installs its own.
		a.Cache = pinned.Name + "-" + newest
	}
	if err := h.Install(&a); err != nil {
		d.Skipped = fmt.Sprintf("%s@%s cannot be installed (%v): the pin stays", a.Package, newest, err)
		return *d
	}
	nh := *h
	nh.Fixtures = filepath.Join(root, "fixtures")
	for i := range a.Scenarios {
		s := &a.Scenarios[i]
		if scenario != "" && s.Name != scenario {
			continue
		}
		fmt.Fprintf(h.Log, "record %s@%s/%s (%s)\n", a.Name, newest, s.Name, s.Mode)
		fx, err := nh.Record(&a, s)
		if err == nil {
			err = fx.Save()
		}
		if err != nil {
			fmt.Fprintf(h.Log, "  FAILED to record: %v\n", err)
			d.Failed = append(d.Failed, s.Name)
		}
	}
	old, _ := LoadFixtures(h.Fixtures)
	cur, _ := LoadFixtures(nh.Fixtures)
	fmt.Fprintf(h.Log, "drift %s %s → %s:\n", a.Name, pinned.Version, newest)
	drift.Compare(Surface(ofAgent(old, a.Name)), Surface(ofAgent(cur, a.Name))).Write(h.Log, "  ")
	var log bytes.Buffer
	nh.Log = &log
	nh.ReplayAll(a.Name, scenario)
	io.Copy(h.Log, &log)
	for _, fx := range ofAgent(cur, a.Name) {
		if fx.Scenario.Pending == "" {
			d.Total++
		}
	}
	fails := 0
	for _, l := range strings.Split(log.String(), "\n") {
		if strings.HasPrefix(l, "FAIL ") {
			fails++
		}
	}
	d.Passed = d.Total - fails
	return *d
}

// WriteDrift prints the per-agent summary of a drift check.
func WriteDrift(w io.Writer, ds []Drift) {
	fmt.Fprintln(w, "drift summary (pinned → newest published):")
	for _, d := range ds {
		switch {
		case d.Skipped != "":
			fmt.Fprintf(w, "  %s %s → %s: %s\n", d.Agent, d.Pin, firstOr(d.Newest, "?"), d.Skipped)
		default:
			line := fmt.Sprintf("  %s %s → %s: truth %d/%d on the new recordings", d.Agent, d.Pin, d.Newest, d.Passed, d.Total)
			if len(d.Failed) > 0 {
				line += "; not recorded: " + strings.Join(d.Failed, ", ")
			}
			fmt.Fprintln(w, line)
		}
	}
}

// ofAgent is the fixtures of agent.
func ofAgent(fxs []Fixture, agent string) []Fixture {
	var out []Fixture
	for _, fx := range fxs {
		if fx.Scenario.Agent == agent {
			out = append(out, fx)
		}
	}
	return out
}

func firstOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
