package shim

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/aep-hook/aep-hook/redact"
)

// Failure is one internal failure, as recorded in the error log. It never
// carries payload content: only what failed, where, and sizes.
type Failure struct {
	Time    string `json:"time"`
	Adapter string `json:"adapter,omitempty"`
	Hook    string `json:"hook,omitempty"`
	Stage   string `json:"stage"`           // read, parse, config, map, write, panic, deadline
	Error   string `json:"error"`           // the project's own message
	Bytes   int    `json:"bytes,omitempty"` // payload size, where it matters
	Lost    int    `json:"lost,omitempty"`  // events that could not be written
	// Home is the AEP home the failure belongs to, set on failures kept
	// in the shared per-user fallback so doctor shows each home only its
	// own.
	Home string `json:"home,omitempty"`
}

// ErrorLog appends failures as JSON lines to Path, or to Fallback when Path
// cannot be written (an unwritable home), so `aep-hook doctor` can always
// show them.
type ErrorLog struct {
	Path     string
	Fallback string
	Home     string // stamped on failures that land in Fallback
}

// NewErrorLog returns the error log under home, with a per-user fallback in
// the temporary directory.
func NewErrorLog(home string) *ErrorLog {
	return &ErrorLog{
		Path:     filepath.Join(home, "internal", "errors.jsonl"),
		Fallback: FallbackErrorPath(),
		Home:     home,
	}
}

// FallbackErrorPath is where failures go when the home cannot be written:
// errors.jsonl in this user's FallbackDir.
func FallbackErrorPath() string {
	return filepath.Join(os.TempDir(), "aep-hook-"+strconv.Itoa(os.Getuid()), "errors.jsonl")
}

// appendFallback appends b to the fallback error log, whose folder sits in
// the shared temporary directory: the folder must pass FallbackDir's checks
// (made by this user, private, not a link), or nothing is written.
func appendFallback(path string, b []byte) error {
	if filepath.Dir(path) == filepath.Dir(FallbackErrorPath()) {
		if _, err := FallbackDir(); err != nil {
			return err
		}
	}
	return AppendFile(path, b)
}

// Record appends f, stamping its time. It reports whether any copy was kept.
// The message passes redact.Diagnostic first, so a setting it quotes (an
// AEP_OUT URL with a token in its query) never reaches the log.
func (l *ErrorLog) Record(f Failure) bool {
	f.Error, f.Hook = redact.Diagnostic(f.Error), redact.Diagnostic(f.Hook)
	if f.Time == "" {
		f.Time = time.Now().UTC().Format(time.RFC3339Nano)
	}
	for _, p := range []string{l.Path, l.Fallback} {
		if p == "" {
			continue
		}
		if p == l.Fallback {
			f.Home = l.Home
		}
		b, err := json.Marshal(f)
		if err != nil {
			return false
		}
		add := AppendFile
		if p == l.Fallback {
			add = appendFallback
		}
		if add(p, append(b, '\n')) == nil {
			return true
		}
	}
	return false
}

// AppendFile appends b to path in one write, creating the file (0600) and
// its folders (0700) as needed: the error log's and the delivery
// rejects' way to keep a record line. A link at path is refused.
func AppendFile(path string, b []byte) error {
	f, err := openDirFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND)
	if err != nil {
		return err
	}
	_, werr := f.Write(b)
	if cerr := f.Close(); werr == nil {
		werr = cerr
	}
	return werr
}

// ReadFailures returns the failures recorded at path, newest last; lines
// that do not parse are skipped.
func ReadFailures(path string) ([]Failure, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read error log: %w", err)
	}
	var out []Failure
	for _, line := range splitLines(b) {
		var f Failure
		if json.Unmarshal(line, &f) == nil {
			out = append(out, f)
		}
	}
	return out, nil
}

func splitLines(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		i := 0
		for i < len(b) && b[i] != '\n' {
			i++
		}
		if i > 0 {
			out = append(out, b[:i])
		}
		if i == len(b) {
			break
		}
		b = b[i+1:]
	}
	return out
}
