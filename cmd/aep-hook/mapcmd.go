package main

import (
	"bufio"
	"fmt"
	"os"
	"strings"

	"github.com/tidwall/gjson"

	"github.com/aep-hook/aep-hook/adapters"
	"github.com/aep-hook/aep-hook/cmd/aep-hook/internal/hookmode"
	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/shim"
)

// MapCmd is `aep-hook map <adapter>`: the dry run users try a mapping with
// before they register a hook.
type MapCmd struct {
	CaptureFlags
	Adapter string `arg:"" help:"The adapter (vendor table) to map with."`
	Hook    string `help:"The moment name, for vendors that pass it on the command line (Antigravity); without it each line may be {\"hook\": NAME, \"input\": PAYLOAD}." placeholder:"NAME"`
	Mode    string `help:"Channel posture for sidecar tables: companion or primary." enum:",companion,primary" default:""`
	Deltas  bool   `help:"Keep token-delta moments (stream tables)."`
	Control bool   `help:"Map as if the control loop held each permission or question moment live (respond_via control), as with AEP_CONTROL=1 and a relay listening."`
	Session string `help:"Session id to assume when a moment names none." hidden:""`
	Host    string `help:"The host in each event's source URI (default: this machine's host name, as the hooks write it)." env:"AEP_HOST" placeholder:"HOST"`
}

// maxLine bounds one input line of the map verb.
const maxLine = 32 << 20

// Run reads moments line by line, keeping session state in memory, and
// prints every event as one JSON line.
func (c *MapCmd) Run(s *Streams) error {
	v, ok := mapping.Lookup(c.Adapter)
	if !ok {
		return exitError{code: 2, msg: fmt.Sprintf("unknown adapter %q; known adapters: %s", c.Adapter, strings.Join(mapping.Names(), ", "))}
	}
	cfg := c.config(func(string) string { return "" })
	p, err := cfg.Policy()
	if err != nil {
		return exitError{code: 2, msg: err.Error()}
	}
	cfg.Host = c.Host // the hooks' host, so a dry run shows the source they write
	em := &shim.Emitter{
		Host:     cfg.HostName(),
		Policy:   p,
		Pipeline: cfg.Pipeline(),
		Store:    shim.NewMemStore(),
		Sink:     &shim.WriterSink{W: s.Out},
		IDs:      shim.NewIDs(),
	}
	sc := bufio.NewScanner(s.In)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	bad := 0
	for n := 1; sc.Scan(); n++ {
		line := sc.Bytes()
		if len(strings.TrimSpace(string(line))) == 0 {
			continue
		}
		if !gjson.ValidBytes(line) {
			fmt.Fprintf(s.Err, "aep-hook map: line %d: not valid JSON; skipped\n", n)
			bad++
			continue
		}
		line = append([]byte(nil), line...)
		hook := c.Hook
		if v.HookFromArgv && hook == "" {
			// The vendor names moments on its command line: a line may
			// carry the name beside the payload, {"hook": NAME, "input": {...}},
			// so a whole session can be replayed (the demo format).
			if h, in := gjson.GetBytes(line, "hook"), gjson.GetBytes(line, "input"); h.Type == gjson.String && in.IsObject() {
				hook, line = h.Str, []byte(in.Raw)
			}
		}
		ms, err := adapters.Decode(v.Transport, line)
		gate := mapping.Gate{Tools: hookmode.SplitList(os.Getenv("AEP_CONTROL_TOOLS"))}
		if err != nil {
			fmt.Fprintf(s.Err, "aep-hook map: line %d: %v\n", n, err)
			bad++
		}
		for i, m := range ms {
			m.Hook, m.Nonce = hook, fmt.Sprintf("n%06d.%d", n, i)
			m.Mode, m.Deltas, m.Control = mapping.Mode(c.Mode), c.Deltas, c.Control
			if m.Control && v.Hold != nil && v.Hold(m, gate) == nil {
				// A hook holds live only what its table holds: an opt-in
				// gate only the tools AEP_CONTROL_TOOLS lists.
				m.Control = false
			}
			if _, err := em.Handle(v, m); err != nil {
				fmt.Fprintf(s.Err, "aep-hook map: line %d: %v\n", n, err)
				bad++
			}
		}
	}
	if err := sc.Err(); err != nil {
		return exitError{code: 1, msg: fmt.Sprintf("read stdin: %v", err)}
	}
	if bad > 0 {
		return exitError{code: 1}
	}
	return nil
}
