package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/aep-hook/aep-hook/redact"
)

// RedactCmd is `aep-hook redact`: the AEP-0003 §9.4 pipeline as a filter.
type RedactCmd struct {
	Home      string   `name:"home" help:"Home directory replaced by ~ (default: the current user's)."`
	SecretEnv []string `name:"secret-env" env:"AEP_SECRET_ENV" sep:"," help:"Environment variable whose value is a secret (repeatable)."`
	KeepPII   bool     `name:"keep-pii" aliases:"no-pii" help:"Keep e-mail addresses and phone numbers: do not redact them (--no-pii is the old, deprecated name)."`
	JSON      bool     `name:"json" help:"Read one JSON value and redact its strings (credential-named keys replaced whole)."`
}

// Run redacts stdin to stdout.
func (c *RedactCmd) Run(s *Streams) error {
	home := c.Home
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	p := redact.NewPipeline(redact.Options{Home: home, SecretEnv: c.SecretEnv, Getenv: os.Getenv, NoPII: c.KeepPII})
	if !c.JSON {
		in, err := io.ReadAll(s.In)
		if err != nil {
			return fmt.Errorf("redact: read stdin: %w", err)
		}
		_, err = io.WriteString(s.Out, p.Text(string(in)))
		return err
	}
	dec := json.NewDecoder(s.In)
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return errors.New("redact: stdin is not a JSON value")
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return errors.New("redact: stdin holds more than one JSON value")
	}
	b, err := encodeJSON(p.Value(v))
	if err != nil {
		return fmt.Errorf("redact: encode: %w", err)
	}
	_, err = s.Out.Write(append(b, '\n'))
	return err
}

// DownlevelCmd is `aep-hook downlevel`: AEP events (JSON lines) down-leveled
// to a capture ceiling as a mechanical hop (AEP-0001 §8.2).
type DownlevelCmd struct {
	Ceiling string `name:"ceiling" required:"" help:"Capture ceiling: none, metadata, redacted or full."`
}

// Run down-levels events from stdin to stdout. A line that is not a valid
// event is reported on stderr by its number and skipped; the exit status is
// then 1.
func (c *DownlevelCmd) Run(s *Streams) error {
	ceiling, err := redact.ParseLevel(c.Ceiling)
	if err != nil {
		return fmt.Errorf("downlevel: %w", err)
	}
	r := bufio.NewReader(s.In)
	w := bufio.NewWriter(s.Out)
	skipped := 0
	for n := 1; ; n++ {
		line, rerr := r.ReadBytes('\n')
		if rerr != nil && !errors.Is(rerr, io.EOF) {
			return fmt.Errorf("downlevel: read stdin: %w", rerr)
		}
		if len(bytes.TrimSpace(line)) > 0 {
			out, err := downlevelLine(line, ceiling)
			if err != nil {
				fmt.Fprintf(s.Err, "downlevel: line %d skipped: %v\n", n, err)
				skipped++
			} else {
				w.Write(out)
				w.WriteByte('\n')
			}
		}
		if rerr != nil {
			break
		}
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("downlevel: write: %w", err)
	}
	if skipped > 0 {
		return exitError{code: 1, msg: fmt.Sprintf("downlevel: %d line(s) skipped", skipped)}
	}
	return nil
}

func downlevelLine(line []byte, ceiling redact.Level) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.UseNumber()
	var ev map[string]any
	if err := dec.Decode(&ev); err != nil || ev == nil {
		return nil, errors.New("not a JSON object")
	}
	if dec.More() {
		return nil, errors.New("trailing data after the event")
	}
	out, err := redact.Downlevel(ev, ceiling)
	if err != nil {
		return nil, err
	}
	return encodeEvent(out)
}

// envelopeOrder is the AEP-0001 §5.1 attribute order.
var envelopeOrder = [...]string{"aep", "id", "type", "subject", "time", "source", "agent", "session",
	"run", "step", "seq", "epoch", "cause", "traceparent", "severity", "capture"}

// encodeEvent writes an event with its attributes in spec order, extension
// attributes sorted after them, and data last; no HTML escaping.
func encodeEvent(ev map[string]any) ([]byte, error) {
	keys := make([]string, 0, len(ev))
	for _, k := range envelopeOrder {
		if _, ok := ev[k]; ok {
			keys = append(keys, k)
		}
	}
	var ext []string
	for k := range ev {
		if !slices.Contains(envelopeOrder[:], k) && k != "data" {
			ext = append(ext, k)
		}
	}
	slices.Sort(ext)
	keys = append(keys, ext...)
	if _, ok := ev["data"]; ok {
		keys = append(keys, "data")
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := encodeJSON(k)
		b.Write(kb)
		b.WriteByte(':')
		vb, err := encodeJSON(ev[k])
		if err != nil {
			return nil, fmt.Errorf("attribute %s: %w", k, err)
		}
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// encodeJSON is compact JSON without HTML escaping.
func encodeJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte{'\n'}), nil
}
