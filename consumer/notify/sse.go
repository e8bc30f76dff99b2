package notify

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
)

// MaxEvent bounds one event read from the stream; a longer one is
// skipped whole (attention requests at the ceilings a notifier reads are
// far smaller).
const MaxEvent = 4 << 20

// errTooLong reports a message past MaxEvent (skipped; the stream goes
// on).
var errTooLong = errors.New("an event longer than the limit was skipped")

// readSSE reads a text/event-stream and calls fn with each message's data
// (its data lines joined by newlines). Comments, event names and ids are
// read past: an AEP event names its own type and position. fn owns the
// slice it is given. A message
// longer than max is skipped, and skipped reports it; fn's error ends the
// read.
func readSSE(r io.Reader, max int, fn func(data []byte) error, skipped func()) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var data []byte
	has, over := false, false
	for {
		line, long, err := readLine(br, max)
		if err != nil {
			if errors.Is(err, io.EOF) {
				return io.EOF
			}
			return err
		}
		if long {
			over = true
			continue
		}
		if len(line) == 0 {
			switch {
			case over:
				if skipped != nil {
					skipped()
				}
			case has:
				if err := fn(data); err != nil {
					return err
				}
			}
			data, has, over = nil, false, false
			continue
		}
		if line[0] == ':' || over {
			continue
		}
		name, value, _ := bytes.Cut(line, []byte{':'})
		value = bytes.TrimPrefix(value, []byte{' '})
		if string(name) != "data" {
			continue
		}
		if has {
			data = append(data, '\n')
		}
		if len(data)+len(value) > max {
			over = true
			continue
		}
		data = append(data, value...)
		has = true
	}
}

// readLine reads one line without its ending (LF or CRLF). A line longer
// than max is read past and reported long.
func readLine(br *bufio.Reader, max int) (line []byte, long bool, err error) {
	var buf []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(buf)+len(chunk) > max+2 {
			long = true
			buf = buf[:0]
		} else if !long {
			buf = append(buf, chunk...)
		}
		switch {
		case err == nil:
			if long {
				return nil, true, nil
			}
			buf = bytes.TrimSuffix(buf[:len(buf)-1], []byte{'\r'})
			return buf, false, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		default:
			return nil, false, err
		}
	}
}

// streamURL is the relay's GET /stream asking for the attention lifecycle
// under filter, at capture, live or (snapshot) everything the buffers hold
// and no more.
func (s *Settings) streamURL(capture string, snapshot bool) (string, error) {
	f := map[string]json.RawMessage{}
	for k, v := range s.Filter {
		f[k] = v
	}
	f["type"] = json.RawMessage(`["attention.requested","attention.answered","attention.resolved","attention.timeout"]`)
	fb, err := json.Marshal(f)
	if err != nil {
		return "", err
	}
	q := url.Values{"filter": {string(fb)}, "capture": {capture}}
	if snapshot {
		q.Set("from", "all")
		q.Set("live", "0")
	}
	u := *s.Relay
	u.Path = strings.TrimSuffix(u.Path, "/") + "/stream"
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// openStream GETs a stream and checks that the relay took the
// subscription (a 200 answer: the relay registers it before it answers).
func openStream(ctx context.Context, c *http.Client, u, token string) (io.ReadCloser, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, errors.New(netProblem(err))
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		var e struct {
			Error  string `json:"error"`
			Detail string `json:"detail"`
		}
		json.NewDecoder(io.LimitReader(resp.Body, 64<<10)).Decode(&e)
		msg := fmt.Sprintf("the relay answered %d %s", resp.StatusCode, http.StatusText(resp.StatusCode))
		if e.Error != "" {
			msg += ": " + clipText(oneLine(e.Error+" "+e.Detail), 300)
		}
		return nil, errors.New(msg)
	}
	return resp.Body, nil
}
