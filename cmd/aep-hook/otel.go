package main

// OtelCmd is a placeholder owned by the otel work.
type OtelCmd struct{}

// Run is not implemented yet.
func (c *OtelCmd) Run(s *Streams) error { return exitError{code: 2, msg: "not implemented yet"} }
