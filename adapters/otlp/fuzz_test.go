package otlp

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"testing"

	"go.opentelemetry.io/collector/pdata/plog"
)

// FuzzLogsHandler posts arbitrary bodies to /v1/logs as protobuf or JSON,
// plain or gzip: the handler never panics and answers only with an OTLP
// status.
func FuzzLogsHandler(f *testing.F) {
	ld := logsOf(codexRes,
		codexRec("c", "codex.tool_result", "tool_name", "shell", "success", "false"),
		rec{"event.name": "copilot_chat.tool.call", "duration_ms": int64(3), "nested": map[string]any{"a": []any{1.5, "x"}}})
	pb, _ := (&plog.ProtoMarshaler{}).MarshalLogs(ld)
	js, _ := (&plog.JSONMarshaler{}).MarshalLogs(ld)
	f.Add(pb, false, false)
	f.Add(js, true, false)
	f.Add(gzipped(pb), false, true)
	f.Add(pb[:len(pb)/2], false, false)
	f.Add([]byte(`{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"attributes":[{"key":"event.name","value":{"intValue":"1"}}]}]}]}]}`), true, false)
	f.Add([]byte{0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f}, false, false)
	f.Add(gzipped(make([]byte, 1<<16)), false, true)
	r, err := New(Config{MaxRequestBytes: 32 << 10}, memEmitter(&flakySink{}), nil)
	if err != nil {
		f.Fatal(err)
	}
	h := r.Handler()
	f.Fuzz(func(t *testing.T, body []byte, asJSON, gz bool) {
		req := httptest.NewRequest(http.MethodPost, PathLogs, bytes.NewReader(body))
		req.Header.Set("Content-Type", typeProto)
		if asJSON {
			req.Header.Set("Content-Type", typeJSON)
		}
		if gz {
			req.Header.Set("Content-Encoding", "gzip")
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		switch w.Code {
		case http.StatusOK, http.StatusBadRequest, http.StatusRequestEntityTooLarge:
		default:
			t.Fatalf("status %d: %s", w.Code, w.Body.Bytes())
		}
	})
}
