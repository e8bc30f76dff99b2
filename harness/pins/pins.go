// Package pins loads the AEP-0002 Annex A mapping pins and the project's own
// scenario fixtures and runs them through the same emitter the binary uses.
// The pins stay where the specification keeps them; they are read at test
// time, never copied.
package pins

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/tidwall/gjson"

	"github.com/aep-hook/aep-hook/adapters"
	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/redact"
	"github.com/aep-hook/aep-hook/shim"
)

// Expect is the part of an event a pin states: type, data, subject, step.
type Expect struct {
	Type    string         `json:"type"`
	Data    map[string]any `json:"data"`
	Subject *string        `json:"subject"`
	Step    *string        `json:"step"`
	// Cause, when stated (project fixtures only), is compared too. In
	// fixtures, a subject or cause "@N.M" names the id of event M of step N
	// (both 1-based), so lifecycle links can be asserted.
	Cause *string `json:"cause"`
	// DataOnly compares type and data only (claude-code.json's form pins
	// state no envelope facts).
	DataOnly bool `json:"-"`
}

// Step is one moment and the events it must produce.
type Step struct {
	Hook     string
	Input    json.RawMessage
	Join     json.RawMessage
	Expected []Expect
	// Prime says the step only establishes state (a transition pin's
	// "prev"): its events are not compared.
	Prime bool
	// Skip lists type prefixes of events the step's pin does not state
	// (a status transition pin states the run and attention moments, not
	// its carrier's own state.* event): they are left out of the comparison.
	Skip []string
}

// Kept is the events of lines the step's pin states: every line whose type
// no Skip prefix names.
func (s Step) Kept(lines [][]byte) [][]byte {
	if len(s.Skip) == 0 {
		return lines
	}
	var out [][]byte
	for _, l := range lines {
		typ := gjson.GetBytes(l, "type").String()
		skip := false
		for _, p := range s.Skip {
			skip = skip || strings.HasPrefix(typ, p)
		}
		if !skip {
			out = append(out, l)
		}
	}
	return out
}

// Case is one independent check: steps run in order against one fresh
// session state.
type Case struct {
	Vendor string
	Name   string
	Policy redact.Policy
	Mode   mapping.Mode
	Deltas bool
	Steps  []Step
	// Seeded says every step presumes the runtime state a vendor's Seed
	// prepares (the upstream pins: "runtime state, pinned by the reference
	// smoke"), join or not. Project fixtures start from nothing instead.
	Seeded bool
	// Control runs the moments with the control loop live
	// (mapping.Moment.Control). The upstream pins describe the reference
	// stack, whose hook adapters hold every permission and question moment
	// over a relay connection: their cases run live. Project fixtures say
	// so with "control": true; they run observe-only by default, as
	// aep-hook's hooks do.
	Control bool
}

// Dir finds a folder: the environment variable env when set, else rel
// resolved against the module root above the working directory.
func Dir(env, rel string) (string, bool) {
	if d := os.Getenv(env); d != "" {
		_, err := os.Stat(d)
		return d, err == nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", false
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			p := filepath.Join(d, rel)
			_, err := os.Stat(p)
			return p, err == nil
		}
		if filepath.Dir(d) == d {
			return "", false
		}
	}
}

// entrySections hold one case per entry; singleSections are one case each.
var (
	entrySections  = []string{"hooks", "moments", "events", "records"}
	singleSections = []string{"fallback", "unknown"}
)

// streamSuffix names a stream channel table whose pins are its vendor's
// sse_modes block (opencode-sse: opencode.json's sse_modes).
const streamSuffix = "-sse"

// channelPins names the channel tables whose pins are a block of another
// vendor's pin file with inputs of their own: the Kimi web channel's are
// kimi-code.json's ws_modes.
var channelPins = map[string]struct{ file, block string }{
	"kimi-web": {"kimi-code", "ws_modes"},
}

// PinFile is the pin file (in the pin folder) a table's cases come from: its
// own, or for a channel table its vendor's.
func PinFile(table string) string {
	if c, ok := channelPins[table]; ok {
		return c.file + ".json"
	}
	return strings.TrimSuffix(table, streamSuffix) + ".json"
}

// channelBlock reports whether section of vendor's pin file is a channel
// table's block (run by that table, not the vendor's).
func channelBlock(vendor, section string) bool {
	for _, c := range channelPins {
		if c.file == vendor && c.block == section {
			return true
		}
	}
	return false
}

// LoadPins reads the pin file of vendor from dir. Sections this harness
// does not run (identity, transitions, stream modes) are listed in skipped.
// A stream channel table (name-sse) gets its vendor file's sse_modes block,
// a channel table (channelPins) its block: each mode entry runs the pinned
// moment in both channel modes.
func LoadPins(dir, vendor string) (cases []Case, skipped []string, err error) {
	b, err := os.ReadFile(filepath.Join(dir, PinFile(vendor)))
	if err != nil {
		return nil, nil, fmt.Errorf("pins %s: %w", vendor, err)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, nil, fmt.Errorf("pins %s: %w", vendor, err)
	}
	def := redact.DefaultPolicy()
	if c, ok := channelPins[vendor]; ok {
		cs, err := channelCases(vendor, c.block, doc[c.block], def)
		return cs, nil, err
	}
	if strings.HasSuffix(vendor, streamSuffix) {
		cs, err := streamModeCases(vendor, doc, def)
		return cs, nil, err
	}
	for _, sec := range sortedKeys(doc) {
		raw := doc[sec]
		switch {
		case strings.HasPrefix(sec, "$"), sec == "identity":
		case sec == "sse_modes":
			// Run by the vendor's stream channel table (vendor-sse).
		case sec == "todos" && busVendor(vendor):
			c, err := todoCase(vendor, raw, def)
			if err != nil {
				return nil, nil, err
			}
			cases = append(cases, c)
		case channelBlock(vendor, sec):
			// Run by the channel table.
		case sec == "status_transitions":
			cs, err := transitionCases(vendor, raw, def)
			if err != nil {
				return nil, nil, err
			}
			cases = append(cases, cs...)
		case contains(entrySections, sec):
			var entries map[string]json.RawMessage
			if err := json.Unmarshal(raw, &entries); err != nil {
				return nil, nil, fmt.Errorf("pins %s %s: %w", vendor, sec, err)
			}
			for _, name := range sortedKeys(entries) {
				cs, err := entryCases(vendor, sec+"/"+name, entries[name], def)
				if err != nil {
					return nil, nil, err
				}
				cases = append(cases, cs...)
			}
		case contains(singleSections, sec):
			cs, err := entryCases(vendor, sec, raw, def)
			if err != nil {
				return nil, nil, err
			}
			cases = append(cases, cs...)
		case vendor == "claude-code":
			cs, err := formCases(vendor, sec, raw)
			if err != nil {
				return nil, nil, err
			}
			cases = append(cases, cs...)
		default:
			skipped = append(skipped, sec)
		}
	}
	if v, ok := mapping.Lookup(vendor); ok && v.Transport == mapping.TransportHook {
		for i := range cases {
			cases[i].Control = true
		}
	}
	return cases, skipped, nil
}

type entry struct {
	Hook      string          `json:"hook"`
	Input     json.RawMessage `json:"input"`
	Join      json.RawMessage `json:"join"`
	Expected  json.RawMessage `json:"expected"`
	Deltas    json.RawMessage `json:"deltas_expected"`
	Companion json.RawMessage `json:"companion"`
	Primary   json.RawMessage `json:"primary"`
}

func entryCases(vendor, name string, raw json.RawMessage, p redact.Policy) ([]Case, error) {
	var e entry
	if err := json.Unmarshal(raw, &e); err != nil {
		return nil, fmt.Errorf("pins %s %s: %w", vendor, name, err)
	}
	mk := func(suffix string, exp json.RawMessage, mode mapping.Mode, deltas bool) (Case, error) {
		ex, err := ParseExpected(exp)
		if err != nil {
			return Case{}, fmt.Errorf("pins %s %s: %w", vendor, name, err)
		}
		return Case{Vendor: vendor, Name: name + suffix, Policy: p, Mode: mode, Deltas: deltas, Seeded: true,
			Steps: []Step{{Hook: e.Hook, Input: e.Input, Join: e.Join, Expected: ex}}}, nil
	}
	var out []Case
	add := func(suffix string, exp json.RawMessage, mode mapping.Mode, deltas bool) error {
		c, err := mk(suffix, exp, mode, deltas)
		out = append(out, c)
		return err
	}
	if e.Companion != nil || e.Primary != nil {
		if err := add("@companion", e.Companion, mapping.Companion, false); err != nil {
			return nil, err
		}
		if err := add("@primary", e.Primary, mapping.Primary, false); err != nil {
			return nil, err
		}
		return out, nil
	}
	if err := add("", e.Expected, "", false); err != nil {
		return nil, err
	}
	if e.Deltas != nil {
		if err := add("@deltas", e.Deltas, "", true); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// channelCases are a channel table's cases: every entry of block ({modes:
// {name: {input, companion, primary}}}), run in both modes.
func channelCases(table, block string, raw json.RawMessage, p redact.Policy) ([]Case, error) {
	var b struct {
		Modes map[string]json.RawMessage `json:"modes"`
	}
	if err := json.Unmarshal(raw, &b); err != nil {
		return nil, fmt.Errorf("pins %s %s: %w", table, block, err)
	}
	var out []Case
	for _, name := range sortedKeys(b.Modes) {
		cs, err := entryCases(table, block+"/"+name, b.Modes[name], p)
		if err != nil {
			return nil, err
		}
		out = append(out, cs...)
	}
	return out, nil
}

// streamModeCases are a stream channel table's cases: every entry of the
// vendor file's sse_modes block, its input taken from the moments block.
func streamModeCases(table string, doc map[string]json.RawMessage, p redact.Policy) ([]Case, error) {
	var modes struct {
		Modes map[string]json.RawMessage `json:"modes"`
	}
	if err := json.Unmarshal(doc["sse_modes"], &modes); err != nil {
		return nil, fmt.Errorf("pins %s sse_modes: %w", table, err)
	}
	var moments map[string]struct {
		Input json.RawMessage `json:"input"`
	}
	if err := json.Unmarshal(doc["moments"], &moments); err != nil {
		return nil, fmt.Errorf("pins %s moments: %w", table, err)
	}
	var out []Case
	for _, name := range sortedKeys(modes.Modes) {
		in, ok := moments[name]
		if !ok {
			return nil, fmt.Errorf("pins %s sse_modes: %s has no pinned moment", table, name)
		}
		var e entry
		if err := json.Unmarshal(modes.Modes[name], &e); err != nil {
			return nil, fmt.Errorf("pins %s sse_modes %s: %w", table, name, err)
		}
		e.Input = in.Input
		b, _ := json.Marshal(e)
		cs, err := entryCases(table, "sse_modes/"+name, b, p)
		if err != nil {
			return nil, err
		}
		out = append(out, cs...)
	}
	return out, nil
}

// busVendor says the vendor's moments are OpenCode-bus shaped (OpenCode and
// its fork Kilo Code), whose todos block diffs two todo.updated snapshots.
func busVendor(vendor string) bool { return vendor == "opencode" || vendor == "kilocode" }

// todoCase runs a todos block ({input: {prev, next}, expected}): the prev
// snapshot as a priming todo.updated, then next, whose transitions are
// compared. The snapshots ride the bus moment form of the pins' inputs.
func todoCase(vendor string, raw json.RawMessage, p redact.Policy) (Case, error) {
	var e struct {
		Input struct {
			Prev json.RawMessage `json:"prev"`
			Next json.RawMessage `json:"next"`
		} `json:"input"`
		Expected json.RawMessage `json:"expected"`
	}
	if err := json.Unmarshal(raw, &e); err != nil {
		return Case{}, fmt.Errorf("pins %s todos: %w", vendor, err)
	}
	ex, err := ParseExpected(e.Expected)
	if err != nil {
		return Case{}, fmt.Errorf("pins %s todos: %w", vendor, err)
	}
	moment := func(todos json.RawMessage) json.RawMessage {
		return json.RawMessage(fmt.Sprintf(`{"kind":"bus","event":{"type":"todo.updated","properties":{"sessionID":"s_fix_1","todos":%s}}}`, todos))
	}
	return Case{Vendor: vendor, Name: "todos", Policy: p, Steps: []Step{
		{Input: moment(e.Input.Prev), Prime: true},
		{Input: moment(e.Input.Next), Expected: ex},
	}}, nil
}

// stateCarrier is the vendor event that carries a status transition: for
// OpenHands, an execution_status state update. Transition pins state the
// moments of the transition alone, so the carrier's own event and the
// conversation's first-sight announcement are not compared.
var stateCarrier = map[string]struct {
	event func(status string) json.RawMessage
	skip  []string
}{
	"openhands": {
		event: func(status string) json.RawMessage {
			q, _ := json.Marshal(status)
			return json.RawMessage(fmt.Sprintf(`{"kind":"ConversationStateUpdateEvent","id":"ev_status_%s","timestamp":"2026-07-12T10:15:00.000000","source":"environment","key":"execution_status","value":%s}`, status, q))
		},
		skip: []string{"state.", "session.started"},
	},
}

// transitionCases runs a status_transitions block ({name: {prev, next,
// expected}}): prev (when not null) as a priming state update, then next,
// whose transition moments are compared.
func transitionCases(vendor string, raw json.RawMessage, p redact.Policy) ([]Case, error) {
	carrier, ok := stateCarrier[vendor]
	if !ok {
		return nil, fmt.Errorf("pins %s status_transitions: no state carrier for this vendor", vendor)
	}
	var entries map[string]struct {
		Prev     *string         `json:"prev"`
		Next     string          `json:"next"`
		Expected json.RawMessage `json:"expected"`
	}
	if err := json.Unmarshal(raw, &entries); err != nil {
		return nil, fmt.Errorf("pins %s status_transitions: %w", vendor, err)
	}
	var out []Case
	for _, name := range sortedKeys(entries) {
		e := entries[name]
		ex, err := ParseExpected(e.Expected)
		if err != nil {
			return nil, fmt.Errorf("pins %s status_transitions/%s: %w", vendor, name, err)
		}
		for i := range ex {
			// The pure transition table states type and data; the
			// subject linking a resolution to its request is runtime
			// wiring the table adds.
			ex[i].DataOnly = true
		}
		c := Case{Vendor: vendor, Name: "status_transitions/" + name, Policy: p}
		if e.Prev != nil {
			c.Steps = append(c.Steps, Step{Input: carrier.event(*e.Prev), Prime: true})
		}
		c.Steps = append(c.Steps, Step{Input: carrier.event(e.Next), Expected: ex, Skip: carrier.skip})
		out = append(out, c)
	}
	return out, nil
}

// formCases runs claude-code.json's AEP-0006 form pins: the pinned input is
// the tool's or the MCP server's request, wrapped here in the hook payload
// that carries it, and checked at the redacted ceiling (expected_data) and at
// metadata (expected_data_metadata).
func formCases(vendor, sec string, raw json.RawMessage) ([]Case, error) {
	var e struct {
		Input    json.RawMessage `json:"input"`
		Data     json.RawMessage `json:"expected_data"`
		Metadata json.RawMessage `json:"expected_data_metadata"`
	}
	if err := json.Unmarshal(raw, &e); err != nil {
		return nil, fmt.Errorf("pins %s %s: %w", vendor, sec, err)
	}
	// The pinned input is spliced in raw: a schema's property order is
	// part of what the mapping preserves.
	var in []byte
	switch sec {
	case "ask_user_question":
		in = fmt.Appendf(nil, `{"hook_event_name":"PermissionRequest","session_id":"s_pin","tool_name":"AskUserQuestion","tool_use_id":"toolu_pin","tool_input":%s}`, e.Input)
	case "elicitation":
		in = fmt.Appendf(nil, `{"hook_event_name":"Elicitation","session_id":"s_pin","mcp_server_name":"pin-server","message":%s,"requested_schema":%s}`,
			gjson.GetBytes(e.Input, "message").Raw, gjson.GetBytes(e.Input, "requestedSchema").Raw)
	default:
		return nil, nil
	}
	var out []Case
	for _, lv := range []struct {
		suffix string
		data   json.RawMessage
		level  redact.Level
	}{{"@redacted", e.Data, redact.Redacted}, {"@metadata", e.Metadata, redact.Metadata}} {
		var d map[string]any
		if err := json.Unmarshal(lv.data, &d); err != nil {
			return nil, fmt.Errorf("pins %s %s: %w", vendor, sec, err)
		}
		p := redact.Policy{Default: redact.Metadata, Overrides: []redact.Override{{Pattern: "attention.*", Level: lv.level}}}
		out = append(out, Case{Vendor: vendor, Name: sec + lv.suffix, Policy: p, Steps: []Step{{
			Input: in, Expected: []Expect{{Type: "attention.requested", Data: d, DataOnly: true}},
		}}})
	}
	return out, nil
}

// ParseExpected reads an expected value: an object, an array of them, or
// null (nothing is emitted).
func ParseExpected(raw json.RawMessage) ([]Expect, error) {
	s := strings.TrimSpace(string(raw))
	if s == "" || s == "null" {
		return nil, nil
	}
	if strings.HasPrefix(s, "[") {
		var out []Expect
		err := json.Unmarshal(raw, &out)
		return out, err
	}
	var one Expect
	if err := json.Unmarshal(raw, &one); err != nil {
		return nil, err
	}
	return []Expect{one}, nil
}

// Fixture is the project's own scenario file format (fixtures/<vendor>/*.json).
type Fixture struct {
	Vendor    string   `json:"vendor"`
	Comment   string   `json:"$comment"`
	Capture   string   `json:"capture"`
	Overrides []string `json:"overrides"`
	Mode      string   `json:"mode"`
	Deltas    bool     `json:"deltas"`
	Control   bool     `json:"control"`
	Steps     []struct {
		Hook     string          `json:"hook"`
		Input    json.RawMessage `json:"input"`
		Join     json.RawMessage `json:"join"`
		Expected json.RawMessage `json:"expected"`
	} `json:"steps"`
}

// LoadFixture reads one scenario file as a Case.
func LoadFixture(path string) (Case, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return Case{}, err
	}
	var f Fixture
	if err := json.Unmarshal(b, &f); err != nil {
		return Case{}, fmt.Errorf("fixture %s: %w", path, err)
	}
	p, err := redact.ParsePolicy(f.Capture, f.Overrides)
	if err != nil {
		return Case{}, fmt.Errorf("fixture %s: %w", path, err)
	}
	c := Case{Vendor: f.Vendor, Name: filepath.Base(path), Policy: p, Mode: mapping.Mode(f.Mode), Deltas: f.Deltas, Control: f.Control}
	for i, s := range f.Steps {
		ex, err := ParseExpected(s.Expected)
		if err != nil {
			return Case{}, fmt.Errorf("fixture %s step %d: %w", path, i+1, err)
		}
		if s.Expected == nil {
			return Case{}, fmt.Errorf("fixture %s step %d: no expected (use [] for nothing)", path, i+1)
		}
		c.Steps = append(c.Steps, Step{Hook: s.Hook, Input: s.Input, Join: s.Join, Expected: ex})
	}
	return c, nil
}

// capture is a sink that keeps what it is given.
type capture struct{ lines [][]byte }

func (c *capture) Write(_, _ string, lines [][]byte) error {
	c.lines = append(c.lines, lines...)
	return nil
}

// Run executes c through a fresh in-memory emitter and returns a
// description of every difference (none means it passed).
func Run(c Case) []string {
	var diffs []string
	play(c, func(i int, s Step, lines [][]byte, ids [][]string) {
		if !s.Prime {
			diffs = append(diffs, compare(i+1, s.Expected, s.Kept(lines), ids)...)
		}
	}, func(d string) { diffs = append(diffs, d) })
	return diffs
}

// Emitted executes c as Run does and returns every event its steps
// emitted (primes included), in order, with any failure to run a step.
func Emitted(c Case) (lines [][]byte, problems []string) {
	play(c, func(_ int, _ Step, ls [][]byte, _ [][]string) {
		lines = append(lines, ls...)
	}, func(d string) { problems = append(problems, d) })
	return lines, problems
}

// play executes c's steps through a fresh in-memory emitter, handing each
// step's encoded events (and the ids emitted so far, per step, for "@N.M"
// references) to step, and anything that kept a step from running to bad.
func play(c Case, step func(i int, s Step, lines [][]byte, ids [][]string), bad func(string)) {
	v, ok := mapping.Lookup(c.Vendor)
	if !ok {
		bad(fmt.Sprintf("no table for vendor %q", c.Vendor))
		return
	}
	clock := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	store := shim.NewMemStore()
	em := &shim.Emitter{
		Host: "pin-host", Policy: c.Policy, Pipeline: redact.NewPipeline(redact.Options{}),
		Store: store, IDs: shim.NewIDs(),
		Now: func() time.Time { clock = clock.Add(time.Millisecond); return clock },
	}
	var ids [][]string // emitted ids per step
	for i, s := range c.Steps {
		sink := &capture{}
		em.Sink = sink
		ms, err := adapters.Decode(v.Transport, s.Input)
		if err != nil || len(ms) != 1 {
			bad(fmt.Sprintf("step %d: the input decodes to %d moments: %v", i+1, len(ms), err))
			continue
		}
		m := ms[0]
		m.Hook, m.Nonce, m.Mode, m.Deltas, m.Control = s.Hook, fmt.Sprintf("nonce-%d", i+1), c.Mode, c.Deltas, c.Control
		if m.Control && v.Hold != nil && v.Hold(m, mapping.Gate{}) == nil {
			// The hook holds live only what its table holds: an opt-in
			// gate with no tool list (the default) holds nothing.
			m.Control = false
		}
		hasJoin := len(s.Join) > 0 && string(s.Join) != "null"
		if v.Seed != nil && (hasJoin || c.Seeded) {
			_, session := v.Identify(m)
			if session == "" {
				session = mapping.UnknownSession
			}
			store.Locked(v.AgentName(), session, func(tx *shim.Tx) error {
				v.Seed(s.Join, m, &tx.State.Table)
				return nil
			})
		}
		res, err := em.Handle(v, m)
		if err != nil {
			bad(fmt.Sprintf("step %d: %v", i+1, err))
			continue
		}
		var stepIDs []string
		for _, ev := range res.Events {
			stepIDs = append(stepIDs, ev.ID)
		}
		ids = append(ids, stepIDs)
		step(i, s, sink.lines, ids)
	}
}

// Feed maps input lines (the vendor transport's JSON moment form, as
// `aep-hook map` reads them) through a fresh in-memory emitter at the
// default posture and returns the encoded events, in order. Lines that do
// not decode are skipped. Tests and fuzz targets of stream tables use it.
func Feed(vendor string, lines [][]byte, mode mapping.Mode, deltas bool) ([][]byte, error) {
	v, ok := mapping.Lookup(vendor)
	if !ok {
		return nil, fmt.Errorf("no table for vendor %q", vendor)
	}
	sink := &capture{}
	em := &shim.Emitter{
		Host: "pin-host", Policy: redact.DefaultPolicy(), Pipeline: redact.NewPipeline(redact.Options{}),
		Store: shim.NewMemStore(), Sink: sink, IDs: shim.NewIDs(),
	}
	for i, l := range lines {
		ms, _ := adapters.Decode(v.Transport, l)
		for j, m := range ms {
			m.Nonce, m.Mode, m.Deltas = fmt.Sprintf("n%06d.%d", i, j), mode, deltas
			if _, err := em.Handle(v, m); err != nil {
				return sink.lines, err
			}
		}
	}
	return sink.lines, nil
}

type got struct {
	Type    string         `json:"type"`
	Data    map[string]any `json:"data"`
	Subject *string        `json:"subject"`
	Step    *string        `json:"step"`
	Cause   *string        `json:"cause"`
}

var ref = regexp.MustCompile(`^@(\d+)\.(\d+)$`)

// resolve turns an "@N.M" reference into the id it names.
func resolve(s string, ids [][]string) string {
	m := ref.FindStringSubmatch(s)
	if m == nil {
		return s
	}
	n, _ := strconv.Atoi(m[1])
	e, _ := strconv.Atoi(m[2])
	if n < 1 || n > len(ids) || e < 1 || e > len(ids[n-1]) {
		return s + " (no such event)"
	}
	return ids[n-1][e-1]
}

// Compare checks the encoded events of one step against want: type and data
// always, subject and step unless want is DataOnly, cause where stated.
// ids are the emitted ids per step so far, for "@N.M" references.
func Compare(step int, want []Expect, lines [][]byte, ids [][]string) []string {
	return compare(step, want, lines, ids)
}

func compare(step int, want []Expect, lines [][]byte, ids [][]string) []string {
	var diffs []string
	gs := make([]got, len(lines))
	for i, l := range lines {
		if err := json.Unmarshal(l, &gs[i]); err != nil {
			diffs = append(diffs, fmt.Sprintf("step %d: emitted line %d is not JSON: %v", step, i+1, err))
		}
	}
	if len(gs) != len(want) {
		diffs = append(diffs, fmt.Sprintf("step %d: want %d events %v, got %d %v", step, len(want), types(want), len(gs), gotTypes(gs)))
		return diffs
	}
	for i := range want {
		w, g := want[i], gs[i]
		if w.Type != g.Type {
			diffs = append(diffs, fmt.Sprintf("step %d event %d: type want %s got %s", step, i+1, w.Type, g.Type))
			continue
		}
		wd, gd := norm(w.Data), norm(g.Data)
		if !reflect.DeepEqual(wd, gd) {
			diffs = append(diffs, fmt.Sprintf("step %d event %d (%s): data\n  want %s\n  got  %s", step, i+1, w.Type, js(wd), js(gd)))
		}
		if w.DataOnly {
			continue
		}
		if ws := resolve(str(w.Subject), ids); ws != str(g.Subject) {
			diffs = append(diffs, fmt.Sprintf("step %d event %d (%s): subject want %q got %q", step, i+1, w.Type, ws, str(g.Subject)))
		}
		if w.Cause != nil {
			if wc := resolve(*w.Cause, ids); wc != str(g.Cause) {
				diffs = append(diffs, fmt.Sprintf("step %d event %d (%s): cause want %q got %q", step, i+1, w.Type, wc, str(g.Cause)))
			}
		}
		if str(w.Step) != str(g.Step) {
			diffs = append(diffs, fmt.Sprintf("step %d event %d (%s): step want %q got %q", step, i+1, w.Type, str(w.Step), str(g.Step)))
		}
	}
	return diffs
}

// norm round-trips a payload through JSON so numbers compare alike; a nil
// payload equals an empty one.
func norm(m map[string]any) any {
	if m == nil {
		m = map[string]any{}
	}
	b, _ := json.Marshal(m)
	var v any
	json.Unmarshal(b, &v)
	if mm, ok := v.(map[string]any); ok {
		delete(mm, "$comment")
	}
	return v
}

func js(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func types(es []Expect) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Type)
	}
	return out
}

func gotTypes(gs []got) []string {
	var out []string
	for _, g := range gs {
		out = append(out, g.Type)
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// ErrNoDir reports a missing pin folder.
var ErrNoDir = errors.New("conformance folder not found")

// DemoMoment is one line of a demo session file (fixtures/demo/*.jsonl): a
// raw vendor payload, or {"hook": NAME, "input": PAYLOAD} for a vendor that
// names the moment on its command line.
type DemoMoment struct {
	Hook  string
	Input []byte
}

// LoadDemo reads a demo session file, one moment per non-empty line. A line
// that is not JSON is an error naming its line number.
func LoadDemo(path string) ([]DemoMoment, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []DemoMoment
	for n, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if !json.Valid([]byte(line)) {
			return nil, fmt.Errorf("%s:%d: not JSON", path, n+1)
		}
		var w struct {
			Hook  string          `json:"hook"`
			Input json.RawMessage `json:"input"`
		}
		if json.Unmarshal([]byte(line), &w) == nil && w.Hook != "" && len(w.Input) > 0 {
			out = append(out, DemoMoment{Hook: w.Hook, Input: w.Input})
			continue
		}
		out = append(out, DemoMoment{Input: []byte(line)})
	}
	return out, nil
}
