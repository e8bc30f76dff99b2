package realagents

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/aep-hook/aep-hook/adapters/opencode"
	"github.com/aep-hook/aep-hook/harness/truth"
	"github.com/aep-hook/aep-hook/mapping"
)

// StreamLine is one recorded message of a stream-transport session: a line
// a plugin forwarder (the pi extension) wrote to `aep-hook forward`, or a
// frame or REST exchange of a WebSocket bridge's connection to its server.
// A scenario's stream.jsonl holds them in the order they happened.
type StreamLine struct {
	// Conn numbers the pipe (one forwarder process) or connection, from 1.
	Conn int `json:"conn"`
	// Dir is "in" for what reached aep-hook (a forwarded line, a frame the
	// server sent) and "out" for what aep-hook sent (a bridge's frame).
	Dir string `json:"dir,omitempty"`
	// Data is the line or frame (JSON, rewritten).
	Data json.RawMessage `json:"data,omitempty"`
	// HTTP is a REST request the bridge made and its answer.
	HTTP *HTTPExchange `json:"http,omitempty"`
	// End says the connection closed here: Dir "in" when the server's
	// side ended it (it went away, or the network dropped it), "out" when
	// the bridge did.
	End bool `json:"end,omitempty"`
}

// HTTPExchange is one recorded REST request of a bridge.
type HTTPExchange struct {
	Method string          `json:"method"`
	Path   string          `json:"path"`
	Status int             `json:"status"`
	Body   json.RawMessage `json:"body,omitempty"`
}

// streamFile is the stream fixture inside fixtures/<agent>/recorded/<scenario>/.
const streamFile = "stream.jsonl"

// ReadStreamLines reads StreamLines from path; a missing file holds none.
func ReadStreamLines(path string) ([]StreamLine, error) {
	f, err := os.Open(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []StreamLine
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for n := 1; sc.Scan(); n++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var l StreamLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			return nil, fmt.Errorf("%s line %d: %w", path, n, err)
		}
		out = append(out, l)
	}
	return out, sc.Err()
}

// WriteStreamLines writes lines to path, one JSON object a line.
func WriteStreamLines(path string, lines []StreamLine) error {
	var buf bytes.Buffer
	for _, l := range lines {
		b, err := json.Marshal(l)
		if err != nil {
			return err
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

// RecordForward is the recorder registered in place of `aep-hook forward`
// (`realagents forward AGENT [ARGS...]`): it saves each line the plugin
// writes, as it comes, then passes it to `aep-hook forward AGENT
// [ARGS...]`, until the plugin closes the pipe.
func RecordForward(args []string, stdin io.Reader, stderr io.Writer) int {
	bin := os.Getenv(EnvAEPHook)
	if bin == "" || len(args) == 0 {
		fmt.Fprintln(stderr, "realagents forward: AEP_REAL_BIN and an agent name are required")
		return 0
	}
	var rec *os.File
	if dir := os.Getenv(EnvRecordDir); dir != "" {
		p := filepath.Join(dir, "stream", fmt.Sprintf("%020d-%d.jsonl", time.Now().UnixNano(), os.Getpid()))
		os.MkdirAll(filepath.Dir(p), 0o755)
		rec, _ = os.Create(p)
	}
	cmd := exec.Command(bin, append([]string{"forward"}, args...)...)
	cmd.Stderr = stderr
	w, err := cmd.StdinPipe()
	if err != nil || cmd.Start() != nil {
		fmt.Fprintf(stderr, "realagents forward: cannot start %s\n", bin)
		return 0
	}
	br := bufio.NewReaderSize(stdin, 1<<20)
	for {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			if rec != nil {
				rec.Write(line)
				rec.Sync()
			}
			w.Write(line)
		}
		if err != nil {
			break
		}
	}
	w.Close()
	cmd.Wait()
	if rec != nil {
		rec.Close()
		// The harness waits for this mark before it reads the file
		// (the agent may have exited with lines still in the pipe).
		os.WriteFile(rec.Name()+DoneSuffix, nil, 0o644)
	}
	return 0
}

// DoneSuffix marks a forwarded stream file whose recorder has read its
// pipe to the end: <file>.done.
const DoneSuffix = ".done"

// collectStream reads what the run's recorders saved: the forwarded lines
// (dir/stream/*.jsonl, one pipe each, in start order) and the bridge
// connections a recording proxy saved (dir/ws.jsonl, StreamLines), with
// machine strings rewritten.
func collectStream(dir string, rw *Rewriter) ([]StreamLine, error) {
	paths, err := filepath.Glob(filepath.Join(dir, "stream", "*.jsonl"))
	if err != nil {
		return nil, err
	}
	sort.Strings(paths)
	var out []StreamLine
	for i, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		for _, l := range bytes.Split(b, []byte("\n")) {
			if len(bytes.TrimSpace(l)) == 0 {
				continue
			}
			sl := StreamLine{Conn: i + 1, Dir: "in", Data: rw.JSON(l)}
			if sl.Data == nil {
				return nil, fmt.Errorf("%s: a forwarded line is not JSON: %.80q", p, l)
			}
			out = append(out, sl)
		}
	}
	ws, err := ReadStreamLines(filepath.Join(dir, "ws.jsonl"))
	if err != nil {
		return nil, err
	}
	for _, l := range ws {
		if l.Data != nil {
			l.Data = rw.JSON(l.Data)
		}
		if l.HTTP != nil {
			l.HTTP.Path = rw.String(l.HTTP.Path)
			if l.HTTP.Body != nil {
				l.HTTP.Body = rw.JSON(l.HTTP.Body)
			}
		}
		out = append(out, l)
	}
	return out, nil
}

// replayStream replays a stream fixture through the aep-hook binary bin
// with its home under tmp, by the vendor's transport: each recorded pipe
// into one `aep-hook forward` process, each recorded WebSocket connection
// served to one `aep-hook follow` bridge; then checks the record.
func replayStream(bin string, fx Fixture, tmp string, schemas *truth.Schemas) Replayed {
	res := Replayed{Fixture: fx}
	bad := func(format string, a ...any) { res.Problems = append(res.Problems, fmt.Sprintf(format, a...)) }
	vendor, ok := mapping.Lookup(fx.Scenario.Agent)
	if !ok {
		bad("agent %q has no table", fx.Scenario.Agent)
		return res
	}
	home := filepath.Join(tmp, "aep")
	env := []string{"AEP_HOME=" + home, "AEP_HOST=replay-host", "TMPDIR=" + tmp, "PATH=" + os.Getenv("PATH")}
	switch vendor.Transport {
	case mapping.TransportPi:
		var ps []string
		if fx.Scenario.Control != nil {
			ps = replayPiControl(bin, vendor, fx, env, home, tmp) // its held tool_calls between the lines
		} else {
			ps = replayPipes(bin, vendor.Name, env, fx.Stream)
		}
		for _, p := range ps {
			bad("%s", p)
		}
	case mapping.TransportOpenCode:
		// The OpenCode / Kilo plugin: the forward verb's word is the
		// server's (kilo), the table the plugin's (kilocode).
		word := ""
		for _, p := range opencode.Profiles {
			if p.Plugin == vendor.Name {
				word = p.Name
			}
		}
		for _, p := range replayPipes(bin, word, env, fx.Stream) {
			bad("%s", p)
		}
	case mapping.TransportKimiWeb:
		for _, p := range replayKimiWeb(bin, env, fx) {
			bad("%s", p)
		}
	default:
		bad("no stream replay for transport %s", vendor.Transport)
		return res
	}
	if b, err := os.ReadFile(filepath.Join(home, "internal", "errors.jsonl")); err == nil {
		bad("internal failures recorded: %s", strings.TrimSpace(string(b)))
	}
	logs, err := ReadLogs(filepath.Join(home, "logs", vendor.AgentName()))
	if err != nil {
		bad("%v", err)
	}
	res.Logs = logs
	res.Problems = append(res.Problems, truth.Check(logs, fx.Scenario.Facts, schemas)...)
	return res
}

// replayPipes feeds each recorded pipe to its own `aep-hook forward
// vendor` process, in order, and returns the process failures.
func replayPipes(bin, vendor string, env []string, lines []StreamLine) []string {
	var bad []string
	var conns []int
	byConn := map[int]*bytes.Buffer{}
	for _, l := range lines {
		b := byConn[l.Conn]
		if b == nil {
			b = &bytes.Buffer{}
			byConn[l.Conn] = b
			conns = append(conns, l.Conn)
		}
		b.Write(l.Data)
		b.WriteByte('\n')
	}
	for _, c := range conns {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cmd := exec.CommandContext(ctx, bin, "forward", vendor)
		cmd.Env, cmd.Stdin = env, byConn[c]
		var out bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &out
		err := cmd.Run()
		cancel()
		if err != nil || out.Len() > 0 {
			bad = append(bad, fmt.Sprintf("pipe %d: aep-hook forward %s: %v %q", c, vendor, err, out.String()))
		}
	}
	return bad
}
