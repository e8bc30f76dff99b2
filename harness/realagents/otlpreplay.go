package realagents

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/aep-hook/aep-hook/harness/truth"
	"github.com/aep-hook/aep-hook/mapping"
)

// replayOTel replays a recorded OTLP channel through the real sidecar in
// each of the scenario's configurations (OTelChannel.Replays), each into a
// fresh AEP home under tmp and held to its own facts.
func replayOTel(bin string, fx Fixture, tmp string, schemas *truth.Schemas) Replayed {
	res := Replayed{Fixture: fx}
	ch := fx.Scenario.OTel
	if len(fx.Exports) == 0 {
		res.Problems = append(res.Problems, "an OTLP channel scenario with no recorded export")
	}
	for i, rc := range ch.Replays {
		logs, problems := replayOTelOnce(bin, fx, rc, filepath.Join(tmp, fmt.Sprintf("replay-%d", i)), schemas)
		for _, p := range problems {
			res.Problems = append(res.Problems, rc.Name+": "+p)
		}
		if res.Logs == nil || len(problems) > 0 {
			res.Logs = logs
		}
	}
	return res
}

// replayOTelOnce is one configuration of replayOTel: the sidecar started
// with the configuration's mode (and ceiling), the exports posted in
// recorded order, the hook firings (when the configuration has them) run
// between them as they came, then the sidecar stopped and the record read.
func replayOTelOnce(bin string, fx Fixture, rc OTelReplay, dir string, schemas *truth.Schemas) ([]truth.Log, []string) {
	var bad []string
	badf := func(format string, a ...any) { bad = append(bad, fmt.Sprintf(format, a...)) }
	channel, ok := mapping.Lookup(fx.Scenario.Agent)
	if !ok {
		return nil, []string{fmt.Sprintf("agent %q has no table", fx.Scenario.Agent)}
	}
	// The hook channel is the table named by the channel's agent (codex
	// for codex-otel).
	hooks, ok := mapping.Lookup(channel.AgentName())
	if !ok {
		return nil, []string{fmt.Sprintf("agent %q has no hook table", channel.AgentName())}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, []string{err.Error()}
	}
	home := filepath.Join(dir, "aep")
	env := replayEnv(home, dir)
	if rc.Capture != "" {
		env = append(env, "AEP_CAPTURE="+rc.Capture)
	}
	sc, err := startSidecar(bin, env, "--mode", rc.Mode)
	if err != nil {
		return nil, []string{err.Error()}
	}
	post := func(e Export) {
		body, err := e.Body()
		if err != nil {
			badf("export %d: %v", e.N, err)
			return
		}
		req, _ := http.NewRequest(http.MethodPost, sc.URL+e.Path, bytes.NewReader(body))
		req.Header.Set("Content-Type", e.ContentType)
		// As the agent sends it, configured by install --otel.
		req.Header.Set("Authorization", "Bearer "+sc.Token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			badf("export %d: %v", e.N, err)
			return
		}
		rb, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			badf("export %d: the sidecar answered %d: %s", e.N, resp.StatusCode, rb)
		}
		if strings.Contains(resp.Header.Get("Content-Type"), "json") && bytes.Contains(rb, []byte("rejected")) {
			badf("export %d: the sidecar refused records: %s", e.N, rb)
		}
	}
	next := 0
	if rc.Hooks {
		for i, f := range fx.Firings {
			for ; next < len(fx.Exports) && fx.Exports[next].AfterFiring <= i; next++ {
				post(fx.Exports[next])
			}
			bad = append(bad, replayFiring(bin, hooks, env, f)...)
		}
	}
	for ; next < len(fx.Exports); next++ {
		post(fx.Exports[next])
	}
	stderr, err := sc.stop()
	if err != nil {
		badf("aep-hook otel: %v", err)
	}
	for _, l := range strings.Split(strings.TrimSpace(stderr), "\n") {
		if l != "" && !strings.HasPrefix(l, "aep-hook otel: ") {
			badf("aep-hook otel said: %s", l)
		}
	}
	if b, err := os.ReadFile(filepath.Join(home, "internal", "errors.jsonl")); err == nil {
		badf("internal failures recorded: %s", strings.TrimSpace(string(b)))
	}
	logs, err := ReadLogs(filepath.Join(home, "logs", channel.AgentName()))
	if err != nil {
		badf("%v", err)
	}
	bad = append(bad, conversationStarts(logs)...)
	bad = append(bad, counted(logs, rc.Count)...)
	bad = append(bad, carried(logs, rc.Carry)...)
	for _, lg := range logs {
		for i, e := range lg.Events {
			b, _ := json.Marshal(e)
			for _, s := range rc.Absent {
				if bytes.Contains(b, []byte(s)) {
					badf("%s event %d (%v): holds %q, which capture %s holds back", lg.Name, i+1, e["type"], s, firstNonEmpty(rc.Capture, "metadata"))
				}
			}
		}
	}
	bad = append(bad, truth.Check(logs, rc.Facts, schemas)...)
	return logs, bad
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

// conversationStarts returns a violation for every AEP session holding a
// second conversation start of the channel (x.<vendor>.otel.conversation_starts
// of a user's conversation): each start of a conversation, a resume
// included, begins an AEP session of its own, so a second one means a
// resumed conversation was written into the session it continues. Unlike
// session.started this holds in companion mode too, where the hook channel
// starts the sessions and the two channels' clocks differ on replay.
func conversationStarts(logs []truth.Log) []string {
	var bad []string
	for _, lg := range logs {
		n := 0
		for i, e := range lg.Events {
			typ, _ := e["type"].(string)
			d, _ := e["data"].(map[string]any)
			if !strings.HasSuffix(typ, ".otel.conversation_starts") || d["thread_kind"] != nil {
				continue
			}
			if n++; n > 1 {
				bad = append(bad, fmt.Sprintf("%s event %d (%s): a second conversation start in one AEP session: a resume written into the session it continues", lg.Name, i+1, typ))
			}
		}
	}
	return bad
}

// member is the value at a dotted path of an event's data, and whether it
// is there. A data member may itself be dotted (event.kind, gen_ai.*).
func member(e truth.Event, path string) (any, bool) { return lookup(e["data"], path) }

func lookup(v any, path string) (any, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return nil, false
	}
	if x, ok := m[path]; ok {
		return x, true
	}
	for i := 0; i < len(path); i++ {
		if path[i] != '.' {
			continue
		}
		if x, ok := m[path[:i]]; ok {
			if r, ok := lookup(x, path[i+1:]); ok {
				return r, true
			}
		}
	}
	return nil, false
}

// counted checks OTelReplay.Count.
func counted(logs []truth.Log, want map[string]int) []string {
	var bad []string
	keys := make([]string, 0, len(want))
	for k := range want {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		typ, filter, _ := strings.Cut(k, "?")
		path, value, _ := strings.Cut(filter, "=")
		n := 0
		for _, lg := range logs {
			for _, e := range lg.Events {
				if e["type"] != typ {
					continue
				}
				if path != "" {
					if v, ok := member(e, path); !ok || fmt.Sprint(v) != value {
						continue
					}
				}
				n++
			}
		}
		if n != want[k] {
			bad = append(bad, fmt.Sprintf("%s: the record holds %d, really %d", k, n, want[k]))
		}
	}
	return bad
}

// carried checks OTelReplay.Carry.
func carried(logs []truth.Log, want map[string][]string) []string {
	var bad []string
	for _, lg := range logs {
		for i, e := range lg.Events {
			typ, _ := e["type"].(string)
			for _, path := range want[typ] {
				if _, ok := member(e, path); !ok {
					bad = append(bad, fmt.Sprintf("%s event %d (%s): no %s", lg.Name, i+1, typ, path))
				}
			}
		}
	}
	return bad
}
