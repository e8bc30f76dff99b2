package httptee

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

func TestJSONBody(t *testing.T) {
	tests := []struct {
		name, method, ctype, body string
		limit                     int64
		ok                        bool
	}{
		{"within the bound", http.MethodPost, "application/json; charset=utf-8", `{"a":1}`, 64, true},
		{"over the bound", http.MethodPost, "application/json", `{"a":"0123456789"}`, 4, false},
		{"not JSON", http.MethodPost, "text/plain", `hello`, 64, false},
		{"not a POST", http.MethodPut, "application/json", `{}`, 64, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, _ := http.NewRequest(tt.method, "http://x/", strings.NewReader(tt.body))
			r.Header.Set("Content-Type", tt.ctype)
			got, ok := JSONBody(r, tt.limit)
			if ok != tt.ok {
				t.Fatalf("ok %v, want %v", ok, tt.ok)
			}
			if ok && string(got) != tt.body {
				t.Errorf("body %q", got)
			}
			// Whatever was read, the whole body is still forwarded.
			fwd, _ := io.ReadAll(r.Body)
			if string(fwd) != tt.body {
				t.Errorf("forwarded %q, want %q", fwd, tt.body)
			}
		})
	}
}
