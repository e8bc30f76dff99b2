package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/aep-hook/aep-hook/adapters/opencode"
	"github.com/aep-hook/aep-hook/adapters/pi"
)

// PluginCmd is `aep-hook plugin opencode|kilo|pi`: print the forwarder
// plugin shipped in the binary, for the agent's plugin folder.
type PluginCmd struct {
	Vendor string `arg:"" enum:"opencode,kilo,pi" help:"The agent: opencode, kilo or pi."`
	Binary string `help:"The aep-hook binary the plugin starts (default: this one, by absolute path); --bin is the old, deprecated name." aliases:"bin" placeholder:"PATH"`
}

// Run prints the plugin source.
func (c *PluginCmd) Run(s *Streams) error {
	bin := c.Binary
	if bin == "" {
		bin = s.Self
	}
	if bin == "" {
		bin = selfPath()
	}
	if c.Vendor == "pi" {
		s.Out.Write(pi.Extension(bin))
		return nil
	}
	src, err := opencode.PluginSource(c.Vendor, bin)
	if err != nil {
		return exitError{code: 2, msg: err.Error()}
	}
	fmt.Fprint(s.Out, src)
	return nil
}

// selfPath is this binary's absolute path, links resolved; "aep-hook"
// (found on PATH) when it cannot be known.
func selfPath() string {
	p, err := os.Executable()
	if err != nil {
		return "aep-hook"
	}
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	return p
}
