package main

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/aep-hook/aep-hook/adapters/otlp"
	"github.com/aep-hook/aep-hook/installer"
	"github.com/aep-hook/aep-hook/internal/guard"
	"github.com/aep-hook/aep-hook/shim"
)

// installOTel points the OTel log export of the named agents that have one
// (Codex, the VS Code agent) at the local sidecar, with the per-user token
// the sidecar requires (created when missing). The token is never printed:
// a dry run's diff shows <token> in its place.
func installOTel(s *Streams, names []string, all, dry bool) error {
	var agents []string
	for _, n := range installer.OTelVendors {
		if all || slices.Contains(names, n) {
			agents = append(agents, n)
		}
	}
	if len(agents) == 0 {
		fmt.Fprintf(s.Out, "--otel: none of these agents exports OTel logs (%s do)\n", strings.Join(installer.OTelVendors, ", "))
		return nil
	}
	e, err := installEnv("")
	if err != nil {
		return exitError{code: 1, msg: err.Error()}
	}
	home := shim.Config{Home: os.Getenv("AEP_HOME")}.HomeDir()
	token, err := guard.UserToken(home)
	if err != nil {
		return exitError{code: 1, msg: "--otel: the sidecar's token: " + err.Error()}
	}
	base := "http://" + otlp.DefaultListen
	failed := false
	for _, a := range agents {
		c, err := installer.PlanOTel(a, e, base, token, home)
		if err != nil {
			failed = true
			fmt.Fprintf(s.Out, "%-12s --otel: %v\n", a, err)
			continue
		}
		switch {
		case !c.Changed():
			fmt.Fprintf(s.Out, "%-12s OTel export to the sidecar already set in %s\n", a, c.Path)
		case dry:
			printDiff(s.Out, strings.ReplaceAll(installer.Diff(c.Path, c.Old, c.New), token, "<token>"))
		default:
			backup, err := installer.Apply(c, e.Now())
			if err != nil {
				failed = true
				fmt.Fprintf(s.Out, "%-12s --otel: %v\n", a, err)
				continue
			}
			if backup != "" {
				fmt.Fprintf(s.Out, "%-12s backup %s\n", a, backup)
			}
			fmt.Fprintf(s.Out, "%-12s OTel export to %s with the sidecar's token (%s) in %s\n", a, base, home+"/"+guard.TokenFile, c.Path)
		}
		for _, n := range c.Notes {
			fmt.Fprintf(s.Out, "%-12s note: %s\n", "", n)
		}
	}
	if failed {
		return exitError{code: 1}
	}
	return nil
}
