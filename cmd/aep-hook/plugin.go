package main

import (
	"fmt"

	"github.com/aep-hook/aep-hook/adapters/opencode"
)

// PluginCmd is `aep-hook plugin opencode|kilo`: print the forwarder plugin
// shipped in the binary, for the agent's plugin folder.
type PluginCmd struct {
	Vendor string `arg:"" enum:"opencode,kilo" help:"The agent: opencode or kilo."`
}

// Run prints the plugin source.
func (c *PluginCmd) Run(s *Streams) error {
	src, err := opencode.PluginSource(c.Vendor)
	if err != nil {
		return exitError{code: 2, msg: err.Error()}
	}
	fmt.Fprint(s.Out, src)
	return nil
}
