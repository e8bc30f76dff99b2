package bus

import (
	"encoding/json"
	"os"
	"path/filepath"
	"time"

	"github.com/aep-hook/aep-hook/harness/realagents"
	"github.com/aep-hook/aep-hook/harness/truth"
)

// TapeFile is a tape's file name inside its scenario folder.
const TapeFile = "tape.json"

// Tape is one recorded scenario of a bus server.
type Tape struct {
	// Agent is the fixtures folder (opencode, kilocode); Vendor the follow
	// verb's word (opencode, kilo); Version the server's npm version.
	Agent       string `json:"agent"`
	Vendor      string `json:"vendor"`
	Version     string `json:"version"`
	Scenario    string `json:"scenario"`
	Description string `json:"description"`
	// RecordedAt is when the session was recorded: the replay's clock, so
	// the ids' embedded times read as they did live.
	RecordedAt time.Time `json:"recorded_at"`
	// AllDirectories says the bridge followed /global/event.
	AllDirectories bool `json:"all_directories,omitempty"`
	// Facts are what really happened, for the truth checker.
	Facts truth.Facts `json:"facts"`
	// Plugin are the facts the plugin channel's record (plugin.jsonl) is
	// held to: Facts, unless the scenario says the plugin cannot see
	// them all, and PluginWhy why.
	Plugin    *truth.Facts `json:"plugin,omitempty"`
	PluginWhy string       `json:"plugin_why,omitempty"`
	// Exchanges are the bridge's requests and the server's answers, in
	// order.
	Exchanges []Exchange `json:"exchanges"`

	dir string
}

// Exchange is one request and its answer. A stream's body is in File
// (raw bytes), a REST answer's in Body.
type Exchange struct {
	Method string          `json:"method"`
	Path   string          `json:"path"`
	Status int             `json:"status"`
	Type   string          `json:"type,omitempty"`
	Body   json.RawMessage `json:"body,omitempty"`
	File   string          `json:"file,omitempty"`
}

// LoadTapes reads every tape under root/<agent>/recorded/*/, sorted.
func LoadTapes(root string) ([]*Tape, error) {
	return realagents.LoadTapes(root, "*", TapeFile, func(t *Tape, dir string) { t.dir = dir })
}

// LoadTape reads the tape in dir.
func LoadTape(dir string) (*Tape, error) {
	t, err := realagents.ReadTape[Tape](filepath.Join(dir, TapeFile))
	if err != nil {
		return nil, err
	}
	t.dir = dir
	return t, nil
}

// Dir is the tape's folder.
func (t *Tape) Dir() string { return t.dir }

// Stream returns the bytes of a stream exchange.
func (t *Tape) Stream(x Exchange) ([]byte, error) {
	return os.ReadFile(filepath.Join(t.dir, filepath.Base(x.File)))
}
