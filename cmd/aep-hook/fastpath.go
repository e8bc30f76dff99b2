package main

import (
	"strconv"
	"strings"
)

// Hook mode is the hot path: every hook firing of every agent starts this
// binary, and building kong's model of the whole command tree costs more
// than the rest of the hook together. parseHookArgs reads the few hook-mode
// flags by hand, with kong's semantics (flags over environment twins,
// repeatable lists also split on commas). Anything it does not recognise
// (--help, an unknown flag) returns ok=false and kong takes over.
func parseHookArgs(args []string, getenv func(string) string) (c HookCmd, ok bool) {
	list := func(env string) []string {
		if v := getenv(env); v != "" {
			return splitList(v)
		}
		return nil
	}
	c.Capture = getenv("AEP_CAPTURE")
	c.CaptureOverride = list("AEP_CAPTURE_OVERRIDES")
	c.SecretEnv = list("AEP_SECRET_ENV")
	c.Out = list("AEP_OUT")
	c.Token = getenv("AEP_TOKEN")
	c.OtlpMaxCapture = getenv("AEP_OTLP_MAX_CAPTURE")
	if v := getenv("AEP_INSECURE"); v != "" {
		b, err := strconv.ParseBool(v)
		if err != nil {
			return c, false
		}
		c.Insecure = b
	}
	// Lists given as flags replace their environment twin, as with kong.
	flagged := map[string]bool{}
	setList := func(name string, dst *[]string, v string) {
		if !flagged[name] {
			// Non-nil: an empty override list given on purpose means no
			// overrides (redact.ParsePolicy), not the default.
			*dst, flagged[name] = []string{}, true
		}
		*dst = append(*dst, splitList(v)...)
	}
	positional := 0
	for i := 0; i < len(args); i++ {
		a := args[i]
		if !strings.HasPrefix(a, "-") || a == "-" {
			if positional++; positional > 1 {
				return c, false
			}
			c.Hook = a
			continue
		}
		name, val, hasVal := strings.Cut(strings.TrimLeft(a, "-"), "=")
		if !strings.HasPrefix(a, "--") {
			return c, false
		}
		switch name {
		case "keep-pii", "no-pii", "insecure":
			b := true
			if hasVal {
				var err error
				if b, err = strconv.ParseBool(val); err != nil {
					return c, false
				}
			}
			if name != "insecure" {
				c.KeepPII = b
			} else {
				c.Insecure = b
			}
			continue
		case "capture", "capture-override", "secret-env", "out", "token", "otlp-max-capture":
		default:
			return c, false
		}
		if !hasVal {
			if i+1 >= len(args) {
				return c, false
			}
			i++
			val = args[i]
		}
		switch name {
		case "capture":
			c.Capture = val
		case "capture-override":
			setList(name, &c.CaptureOverride, val)
		case "secret-env":
			setList(name, &c.SecretEnv, val)
		case "out":
			setList(name, &c.Out, val)
		case "token":
			c.Token = val
		case "otlp-max-capture":
			c.OtlpMaxCapture = val
		}
	}
	return c, true
}

// cleanList is a list flag as the settings read it, however it was
// parsed: items trimmed, empty ones dropped (kong keeps both). It keeps a
// nil list nil: nil means "the default" where an empty list does not.
func cleanList(xs []string) []string {
	if xs == nil {
		return nil
	}
	out := []string{}
	for _, x := range xs {
		out = append(out, splitList(x)...)
	}
	return out
}

// splitList splits a comma list, trimming items and dropping empty ones.
func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
