// Package tees is the real-peer harness of the two tees: real ACP and
// AG-UI peers on both sides of the aep-hook binary, recorded, and the
// recordings replayed through the live tee with a scripted peer on each
// side.
//
// Recording (`make real`, network: the npm registry only) installs the
// pinned peers into the shared cache (realagents.DefaultCache): the ACP
// SDK's client (@agentclientprotocol/sdk 2.4.0, client().connectWith)
// driving `aep-hook acp -- AGENT` for the real agents (gemini --acp,
// opencode acp, claude-agent-acp on Node 22, kimi acp, qwen --acp, each
// against a fake model server on 127.0.0.1) and the SDK's example agent
// (1.9.0: 2.x publishes no examples); the @ag-ui/client HttpAgent driving
// `aep-hook agui` in front of an @ag-ui/encoder server (@ag-ui/core
// 1.0.0). The clients record every byte they send and receive; the AG-UI
// server records what it receives and sends, which proves transparency on
// the real run too. The transcripts land in
// fixtures/acp/recorded/<peer>-<scenario>/ and
// fixtures/agui/recorded/<scenario>/ (tee.json and transcript.jsonl).
// With -latest (`make real LATEST=1`) the ACP peers are recorded at their
// newest published versions instead, into a temporary folder, and what
// changed in their payloads is printed (Harness.Latest).
//
// Replay (`make test`, no network) plays both sides of each transcript
// around the real tee: the scripted editor or UI sends what the client
// sent and expects byte for byte what it received; the scripted agent or
// upstream expects byte for byte what the client sent and answers what
// the agent answered, ending as the agent ended (exit status, death by a
// signal, a worker left holding stdout, a dropped connection). The record
// is then held to the scenario's facts (package truth, every event valid
// against the schemas) at every capture ceiling.
package tees

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/aep-hook/aep-hook/harness/truth"
)

// Protocols of the tees.
const (
	ACP  = "acp"
	AGUI = "agui"
)

// Meta describes a recorded scenario (tee.json).
type Meta struct {
	Protocol string `json:"protocol"`
	// Peer is the real agent or server (and Package/Version its pin); the
	// client is the protocol's SDK client, pinned in Client.
	Peer        string `json:"peer"`
	Package     string `json:"package"`
	Version     string `json:"version"`
	Client      string `json:"client"`
	Scenario    string `json:"scenario"`
	Description string `json:"description"`
	// Facts are what really happened, for the truth checker; Denied is the
	// number of tool calls the human rejected (each must end in
	// tool.denied) and Orphan says the agent left a worker holding stdout.
	Facts  truth.Facts `json:"facts"`
	Denied int         `json:"denied,omitempty"`
	Orphan bool        `json:"orphan,omitempty"`
	// ExitMS is how long after the kill the tee exited in the recording.
	ExitMS int64 `json:"exit_ms,omitempty"`
	// Tools are the tool names the agent offered its model in the
	// session (the drift report compares them across versions).
	Tools []string `json:"tools,omitempty"`
}

// Entry is one step of an ACP transcript, in the order the client saw
// them: a line it sent (dir c2a) or received (a2c), or an event.
type Entry struct {
	MS      int64  `json:"ms"`
	Dir     string `json:"dir,omitempty"`
	Line    string `json:"line,omitempty"`
	Partial bool   `json:"partial,omitempty"` // the direction's last bytes, with no newline
	// Event is kill (the client signalled the tee or its agent),
	// stdin_closed, stdout_eof, prompt_result, client_error or exit.
	Event       string `json:"event,omitempty"`
	Target      string `json:"target,omitempty"` // kill: "tee" or "agent"
	Signal      string `json:"signal,omitempty"`
	Code        *int   `json:"code,omitempty"`
	StopReason  string `json:"stopReason,omitempty"`
	Message     string `json:"message,omitempty"`
	MSAfterKill int64  `json:"ms_after_kill,omitempty"`
}

// Request is an HTTP request as the UI sent it, and the status and headers
// of its response.
type Request struct {
	Method string            `json:"method"`
	Path   string            `json:"path"`
	Header map[string]string `json:"header"`
	Body   string            `json:"body"`
	Status int               `json:"status"`
	// RespHeader holds the response headers that matter (Content-Type).
	RespHeader map[string]string `json:"resp_header"`
}

// Exchange is one HTTP exchange of an AG-UI transcript: the request the
// UI sent, the bytes the upstream sent back, and the bytes the UI read.
type Exchange struct {
	Request
	// Sent is the response body as the upstream wrote it, chunk by chunk;
	// Dropped says it then cut the connection.
	Sent    []string `json:"sent"`
	Dropped bool     `json:"dropped,omitempty"`
	// Received is what the UI read; End is how its stream ended:
	// complete, dropped (the connection failed under it) or aborted (the
	// UI went away).
	Received string `json:"received"`
	End      string `json:"end"`
}

// Recording is one recorded scenario.
type Recording struct {
	Dir       string
	Meta      Meta
	Entries   []Entry    // ACP
	Exchanges []Exchange // AG-UI
}

// File names inside a recording's folder.
const (
	metaFile       = "tee.json"
	transcriptFile = "transcript.jsonl"
)

// LoadRecordings reads every recording under fixtures/{acp,agui}/recorded,
// in the order of their folders.
func LoadRecordings(fixtures string) ([]Recording, error) {
	var out []Recording
	for _, p := range []string{ACP, AGUI} {
		metas, err := filepath.Glob(filepath.Join(fixtures, p, "recorded", "*", metaFile))
		if err != nil {
			return nil, err
		}
		for _, m := range metas {
			r, err := LoadRecording(filepath.Dir(m))
			if err != nil {
				return nil, err
			}
			out = append(out, r)
		}
	}
	return out, nil
}

// LoadRecording reads one recording folder.
func LoadRecording(dir string) (Recording, error) {
	r := Recording{Dir: dir}
	b, err := os.ReadFile(filepath.Join(dir, metaFile))
	if err == nil {
		err = json.Unmarshal(b, &r.Meta)
	}
	if err != nil {
		return r, fmt.Errorf("recording %s: %w", dir, err)
	}
	transcript := filepath.Join(dir, transcriptFile)
	if r.Meta.Protocol == AGUI {
		return r, readJSONLines(transcript, &r.Exchanges)
	}
	return r, readJSONLines(transcript, &r.Entries)
}

// Save writes the recording into its folder.
func (r Recording) Save() error {
	if err := os.MkdirAll(r.Dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(r.Meta, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(r.Dir, metaFile), append(b, '\n'), 0o644); err != nil {
		return err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	var items []any
	for _, e := range r.Entries {
		items = append(items, e)
	}
	for _, x := range r.Exchanges {
		items = append(items, x)
	}
	for _, it := range items {
		if err := enc.Encode(it); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(r.Dir, transcriptFile), buf.Bytes(), 0o644)
}

// Name is the recording's name for messages: protocol/folder.
func (r Recording) Name() string {
	return r.Meta.Protocol + "/" + filepath.Base(r.Dir)
}
