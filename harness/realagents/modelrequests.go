package realagents

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/aep-hook/aep-hook/harness/realagents/fakemodel"
	"github.com/aep-hook/aep-hook/harness/truth"
)

// toolsScenario is the headless "tools" scenario of an agent whose hook
// registration config writes (or removes): one prompt running turn, driven
// by the agent's args, then driven again without the hooks; the model
// requests of both must be identical (sameModelRequests). how names the
// headless command and what the turn's calls, for the description.
func toolsScenario(how, what string, facts truth.Facts, turn []fakemodel.Reply, config func(r *Run, hooks bool) error, args ...string) Scenario {
	return Scenario{
		Name: "tools", Mode: "headless",
		Description: how + ": " + what + "; then the same prompt " +
			"without the hooks registered: the model requests must be identical (" + modelRequestsFile + ")",
		Facts: facts,
		Model: fakemodel.Turns(map[string][]fakemodel.Reply{"tools": turn}),
		Drive: func(r *Run) error {
			return sameModelRequests(r, config, func() error {
				_, err := r.Exec(2*time.Minute, "", args...)
				return err
			})
		},
	}
}

// modelRequestsFile holds, beside a recorded scenario, the digests of the
// model requests of the same session driven with and without aep-hook
// registered: TestSameModelRequests holds them equal.
const modelRequestsFile = "model-requests.json"

// ModelRequests is the content of model-requests.json.
type ModelRequests struct {
	// WithHooks and WithoutHooks are the digests of the normalized model
	// requests (ids the session mints replaced), in order.
	WithHooks    []string `json:"with_hooks"`
	WithoutHooks []string `json:"without_hooks"`
}

// sameModelRequests drives the session once with the hooks registered and
// once without (config rewrites the registration), compares the model
// requests of both, and writes their digests beside the scenario's fixture.
func sameModelRequests(r *Run, config func(r *Run, hooks bool) error, drive func() error) error {
	if err := drive(); err != nil {
		return err
	}
	with := len(r.Model.Requests())
	if err := config(r, false); err != nil {
		return err
	}
	err := drive()
	if cerr := config(r, true); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	reqs := r.Model.Requests()
	mr := ModelRequests{WithHooks: requestDigests(reqs[:with]), WithoutHooks: requestDigests(reqs[with:])}
	b, _ := json.MarshalIndent(mr, "", "  ")
	dir := filepath.Join(r.H.Fixtures, r.Agent.Name, "recorded", r.Scenario.Name)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, modelRequestsFile), append(b, '\n'), 0o644); err != nil {
		return err
	}
	if strings.Join(mr.WithHooks, " ") != strings.Join(mr.WithoutHooks, " ") {
		for i, q := range reqs {
			os.WriteFile(filepath.Join(r.Dir, fmt.Sprintf("request-%02d.json", i)), q.Body, 0o644)
		}
		return fmt.Errorf("the model requests differ with aep-hook registered (%d vs %d requests)", len(mr.WithHooks), len(mr.WithoutHooks))
	}
	r.Notes = append(r.Notes, fmt.Sprintf("model requests identical with and without hooks: %d", with))
	return nil
}

// sessionIDRE finds the ids a session mints that differ between two
// otherwise identical sessions: session, conversation and call ids (UUIDs
// in any form, the fake model's call ids, Gemini's clock-stamped call ids),
// Codex's output chunk ids, process ids, clock times and measured
// durations.
var sessionIDRE = regexp.MustCompile(`Wall time: [0-9.]+ seconds|Chunk ID: [0-9a-f]+|PGID: [0-9]+|_[0-9]{13}_[0-9]+|unix_ms[^0-9]{1,4}[0-9]{10,}|session_[0-9a-f-]{36}|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}|(call|toolu|fc)_[0-9]+|[0-9]{4}-[0-9]{2}-[0-9]{2}[T ][0-9:.]+Z?|[0-9]{1,2}:[0-9]{2}(:[0-9]{2})?`)

// requestDigests digests each request body with the session's minted ids
// replaced, a JSON body in one key order (Codex orders its client metadata
// differently from run to run).
func requestDigests(reqs []fakemodel.Request) []string {
	out := make([]string, len(reqs))
	for i, q := range reqs {
		body := []byte(sessionIDRE.ReplaceAllString(string(q.Body), "ID"))
		var v any
		if json.Unmarshal(body, &v) == nil {
			body, _ = json.Marshal(v)
		}
		sum := sha256.Sum256(body)
		out[i] = hex.EncodeToString(sum[:8])
	}
	return out
}
