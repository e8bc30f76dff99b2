package main

// RedactCmd is `aep-hook redact`. Owned by the redact work; placeholder.
type RedactCmd struct{}

// Run redacts stdin to stdout.
func (c *RedactCmd) Run(s *Streams) error { return nil }

// DownlevelCmd is `aep-hook downlevel`. Owned by the redact work; placeholder.
type DownlevelCmd struct{}

// Run down-levels events from stdin to stdout.
func (c *DownlevelCmd) Run(s *Streams) error { return nil }
