package main

// ShipCmd is a placeholder owned by the ship work.
type ShipCmd struct{}

// Run is not implemented yet.
func (c *ShipCmd) Run(s *Streams) error { return exitError{code: 2, msg: "not implemented yet"} }
