package bus

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/aep-hook/aep-hook/harness/realagents"
	"github.com/aep-hook/aep-hook/harness/truth"
)

// aepHook is the aep-hook binary the plugin replays run, built once.
var aepHook string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "aep-bus-replay-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	aepHook = filepath.Join(dir, "aep-hook")
	if out, err := exec.Command("go", "build", "-o", aepHook, "../../../cmd/aep-hook").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build aep-hook: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// TestReplayTapes replays every recorded OpenCode and Kilo Code session
// through the real bridge and holds the record to what really happened:
// one run per turn, every tool and ask closed once, no phantom runs after
// idle, nothing lost or doubled across a server restart.
func TestReplayTapes(t *testing.T) {
	realagents.Tapes[*Tape]{Agent: "bus", Load: LoadTapes, Replay: Replay,
		Name: func(tp *Tape) string { return tp.Agent + "/" + filepath.Base(tp.Dir()) }}.Test(t)
}

// TestReplayPlugins replays what aep-hook's forwarder plugin wrote inside
// each recorded server (plugin.jsonl beside the tape) through the real
// `aep-hook forward opencode|kilo`, one process per recorded forwarder as
// the plugin runs it, and holds the record to the scenario's facts as the
// plugin can see them (the tape's plugin facts; plugin_why says where
// they differ from the stream's).
func TestReplayPlugins(t *testing.T) {
	realagents.Tapes[*Tape]{Agent: "bus plugin", Load: LoadTapes,
		Replay: func(tp *Tape, tmp string, schemas *truth.Schemas) realagents.TapeReplayed {
			return ReplayPlugin(aepHook, tp, tmp, schemas)
		},
		Name: func(tp *Tape) string { return tp.Agent + "/" + filepath.Base(tp.Dir()) }}.Test(t)
}
