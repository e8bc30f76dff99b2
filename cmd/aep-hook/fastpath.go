package main

import "github.com/aep-hook/aep-hook/cmd/aep-hook/internal/hookmode"

// Hook mode is the hot path: every hook firing of every agent starts this
// binary, and building kong's model of the whole command tree costs more
// than the rest of the hook together. parseHookArgs reads the few hook-mode
// flags by hand (hookmode.ParseArgs, the same code the hook-only build
// runs), with kong's semantics. Anything it does not recognise (--help, an
// unknown flag) returns ok=false and kong takes over.
func parseHookArgs(args []string, getenv func(string) string) (c HookCmd, ok bool) {
	f, ok := hookmode.ParseArgs(args, getenv)
	c.CaptureFlags = CaptureFlags{Capture: f.Capture.Capture, CaptureOverride: f.CaptureOverride, SecretEnv: f.SecretEnv, KeepPII: f.KeepPII}
	c.OutFlags = OutFlags{Out: f.Out, Token: f.Token, Insecure: f.Insecure, OtlpMaxCapture: f.OtlpMaxCapture}
	c.Hook = f.Hook
	return c, ok
}

// cleanList is a list flag as the settings read it (hookmode.CleanList).
func cleanList(xs []string) []string { return hookmode.CleanList(xs) }
