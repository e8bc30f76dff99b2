package deliver

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/aep-hook/aep-hook/shim"
)

// AEPClient is the emitter side of the AEP HTTP binding (AEP-0003 §3.2):
// POST {base}/events with AEP-Version 0.1, one event as application/json,
// a batch as application/x-ndjson in order.
type AEPClient struct {
	Endpoint string // {base}/events
	Token    string // bearer token; "" sends none
	Client   *http.Client
}

// Send implements Sender.
func (a *AEPClient) Send(ctx context.Context, lines [][]byte) error {
	if len(lines) == 0 {
		return nil
	}
	hdr := map[string]string{"AEP-Version": shim.Version}
	var body []byte
	if len(lines) == 1 {
		hdr["Content-Type"] = "application/json"
		body = bytes.TrimRight(lines[0], "\r\n")
	} else {
		hdr["Content-Type"] = "application/x-ndjson"
		n := 0
		for _, l := range lines {
			n += len(l) + 1
		}
		body = make([]byte, 0, n)
		for _, l := range lines {
			body = append(body, bytes.TrimRight(l, "\r\n")...)
			body = append(body, '\n')
		}
	}
	return post(ctx, a.Client, a.Endpoint, a.Token, hdr, body, func(status int, rb []byte) *SendError {
		return a.classify(status, rb, len(lines))
	})
}

func (a *AEPClient) classify(status int, rb []byte, n int) *SendError {
	switch status {
	case http.StatusUpgradeRequired:
		var v struct {
			Versions []string `json:"versions"`
		}
		json.Unmarshal(rb, &v)
		offered := "none named"
		if len(v.Versions) > 0 {
			offered = strings.Join(v.Versions, ", ")
		}
		return &SendError{Class: Fatal, Err: fmt.Errorf("POST %s: 426: the collector does not speak AEP %s; it offers: %s", a.Endpoint, shim.Version, offered)}
	case http.StatusBadRequest:
		idx, detail := rejectInfo(rb)
		if idx >= n {
			idx = -1
		}
		return &SendError{Class: Reject, Index: idx, Detail: detail}
	}
	if se := commonClass(status, a.Endpoint); se != nil {
		return se
	}
	return &SendError{Class: Fatal, Err: fmt.Errorf("POST %s: unexpected status %d", a.Endpoint, status)}
}

// rejectInfo reads a 400 body: {"error": "invalid-event", "detail": ...}
// and, when the collector names it, the first failing line's index (as
// "index" or "line", top level or inside an object detail). The index is a
// hint: the shipper verifies it by resending.
func rejectInfo(rb []byte) (int, string) {
	var body map[string]any
	if json.Unmarshal(rb, &body) != nil {
		return -1, strings.TrimSpace(string(rb))
	}
	idx := indexIn(body)
	if d, ok := body["detail"].(map[string]any); ok && idx < 0 {
		idx = indexIn(d)
	}
	detail := ""
	switch d := body["detail"].(type) {
	case string:
		detail = d
	case nil:
		if e, ok := body["error"].(string); ok {
			detail = e
		}
	default:
		b, _ := json.Marshal(d)
		detail = string(b)
	}
	return idx, detail
}

func indexIn(m map[string]any) int {
	for _, k := range []string{"index", "line", "line_index"} {
		if f, ok := m[k].(float64); ok && f >= 0 && f == float64(int(f)) {
			return int(f)
		}
	}
	return -1
}
