package wss_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aep-hook/aep-hook/shim/control"
	"github.com/aep-hook/aep-hook/shim/control/wss"
)

// TestClientVerifies: the full binary's client refuses a relay whose
// certificate the system does not trust.
func TestClientVerifies(t *testing.T) {
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	url := "wss" + strings.TrimPrefix(srv.URL, "https") + "/socket"
	_, err := control.Dial(context.Background(), url, "tok", control.Identity{Agent: "claude-code"}, control.Offer{}, 5*time.Second, wss.Client)
	if err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("an untrusted certificate: %v, want a certificate error", err)
	}
}
