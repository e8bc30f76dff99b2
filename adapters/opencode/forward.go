package opencode

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/aep-hook/aep-hook/mapping"
	"github.com/aep-hook/aep-hook/shim"
)

// MaxLine bounds one line from the plugin (a tool's output can be large).
const MaxLine = 16 << 20

// Forwarder is the receiving end of the forwarder plugin: the plugin
// starts `aep-hook forward <vendor>` once, when the agent loads it, and
// writes one JSON line per moment to its stdin (the Decode forms); the
// forwarder maps each to the plugin table, a batch at a time, until the
// agent closes the pipe.
type Forwarder struct {
	Handle shim.Handler
	Errors shim.Recorder
	Name   string // the table, for failures
	Mode   mapping.Mode
	Deltas bool
	Nonce  func() string
}

// Run reads r until it ends (or ctx does) and returns the number of lines
// read.
func (f *Forwarder) Run(ctx context.Context, r io.Reader) (int, error) {
	lines := make(chan []byte, 1024)
	readErr := make(chan error, 1)
	go func() {
		defer close(lines)
		br := bufio.NewReaderSize(r, 64<<10)
		for {
			line, err := readLine(br, MaxLine)
			if len(bytes.TrimSpace(line)) > 0 {
				lines <- line
			} else if errors.Is(err, errTooLong) {
				lines <- nil // reported by the handling goroutine
			}
			if err != nil && !errors.Is(err, errTooLong) {
				if !errors.Is(err, io.EOF) {
					readErr <- err
				}
				return
			}
		}
	}()
	n := 0
	for {
		var batch [][]byte
		select {
		case <-ctx.Done():
			return n, nil
		case l, ok := <-lines:
			if !ok {
				select {
				case err := <-readErr:
					return n, err
				default:
					return n, nil
				}
			}
			batch = append(batch, l)
		}
	more:
		for len(batch) < 256 {
			select {
			case l, ok := <-lines:
				if !ok {
					break more
				}
				batch = append(batch, l)
			default:
				break more
			}
		}
		n += len(batch)
		f.handle(batch)
	}
}

func (f *Forwarder) handle(batch [][]byte) {
	var ms []mapping.Moment
	for _, l := range batch {
		if l == nil {
			f.fail("read", "line over the limit skipped", 0)
			continue
		}
		got, err := Decode(l)
		if err != nil {
			f.fail("parse", err.Error(), len(l))
			continue
		}
		for _, m := range got {
			m.Mode, m.Deltas = f.Mode, f.Deltas
			if f.Nonce != nil {
				m.Nonce = f.Nonce()
			}
			ms = append(ms, m)
		}
	}
	if len(ms) == 0 {
		return
	}
	res, err := f.Handle(ms)
	for _, x := range res {
		if x.Err != nil && !errors.Is(x.Err, err) {
			f.fail("map", x.Err.Error(), 0)
		}
	}
	if err != nil {
		f.fail("emit", err.Error(), 0)
	}
}

func (f *Forwarder) fail(stage, msg string, n int) {
	if f.Errors != nil {
		f.Errors.Record(shim.Failure{Adapter: f.Name, Stage: stage, Error: msg, Bytes: n})
	}
}

var errTooLong = fmt.Errorf("line over the limit")

// readLine reads one LF-terminated line of at most max bytes; a longer
// line is consumed and reported as errTooLong (with no content).
func readLine(br *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	over := false
	for {
		chunk, err := br.ReadSlice('\n')
		if !over {
			if len(line)+len(chunk) > max {
				over, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if over {
			if err == nil {
				err = errTooLong
			}
			return nil, err
		}
		return line, err
	}
}
