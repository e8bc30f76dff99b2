package main

// AcpCmd is a placeholder owned by the tee work.
type AcpCmd struct{}

// Run is not implemented yet.
func (c *AcpCmd) Run(s *Streams) error { return exitError{code: 2, msg: "not implemented yet"} }

// AguiCmd is a placeholder owned by the tee work.
type AguiCmd struct{}

// Run is not implemented yet.
func (c *AguiCmd) Run(s *Streams) error { return exitError{code: 2, msg: "not implemented yet"} }
