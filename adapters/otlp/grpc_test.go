//go:build grpc

package otlp

import (
	"context"
	"net"
	"reflect"
	"testing"
	"time"

	"go.opentelemetry.io/collector/pdata/plog/plogotlp"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/pdata/ptrace/ptraceotlp"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/encoding/gzip"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"

	"github.com/aep-hook/aep-hook/internal/guard"
	"github.com/aep-hook/aep-hook/mapping"
)

// serveGRPC runs e's receiver on an OTLP/gRPC listener on loopback until
// the test ends, and returns a client connection to it.
func serveGRPC(t *testing.T, e *testEnv) *grpc.ClientConn {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- e.r.Run(ctx, nil, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	conn, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// TestGRPC exports logs over OTLP/gRPC on loopback with a pdata-built
// request, plain and gzip-compressed, and checks the session log.
func TestGRPC(t *testing.T) {
	e := newEnv(t, Config{Mode: mapping.Primary, MaxRequestBytes: 64 << 10})
	conn := serveGRPC(t, e)
	cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer ccancel()
	logs := plogotlp.NewGRPCClient(conn)

	ld := logsOf(codexRes,
		codexRec("g1", "codex.conversation_starts", "model", "m"),
		codexRec("g1", "codex.tool_result", "tool_name", "shell", "success", "true", "duration_ms", "5"))
	resp, err := logs.Export(cctx, plogotlp.NewExportRequestFromLogs(ld), grpc.WaitForReady(true))
	if err != nil {
		t.Fatal(err)
	}
	if resp.PartialSuccess().RejectedLogRecords() != 0 {
		t.Errorf("partial success %v", resp.PartialSuccess())
	}
	// A gzip-compressed retry of the same batch adds nothing.
	if _, err := logs.Export(cctx, plogotlp.NewExportRequestFromLogs(ld), grpc.UseCompressor(gzip.Name)); err != nil {
		t.Fatal(err)
	}
	if got, want := types(e.events(t, "codex", "g1")), []string{"session.started", "x.codex.otel.conversation_starts", "tool.completed"}; !reflect.DeepEqual(got, want) {
		t.Errorf("types %v, want %v", got, want)
	}
	// Above the size bound: ResourceExhausted, and the server carries on.
	big := logsOf(codexRes, codexRec("g2", "codex.user_prompt", "prompt", string(make([]byte, 128<<10))))
	if _, err := logs.Export(cctx, plogotlp.NewExportRequestFromLogs(big)); status.Code(err) != codes.ResourceExhausted {
		t.Errorf("oversized export: %v", err)
	}
	// Traces are accepted and ignored.
	td := ptrace.NewTraces()
	td.ResourceSpans().AppendEmpty().ScopeSpans().AppendEmpty().Spans().AppendEmpty().SetName("s")
	if _, err := ptraceotlp.NewGRPCClient(conn).Export(cctx, ptraceotlp.NewExportRequestFromTraces(td)); err != nil {
		t.Fatal(err)
	}
	if st := e.r.Stats(); st.IgnoredTraces != 1 || st.Records != 2 || st.Duplicates != 2 {
		t.Errorf("stats %+v", st)
	}
	// Busy: the concurrency bound answers Unavailable (retryable).
	for i := 0; i < cap(e.r.sem); i++ {
		e.r.sem <- struct{}{}
	}
	_, err = logs.Export(cctx, plogotlp.NewExportRequestFromLogs(ld))
	for i := 0; i < cap(e.r.sem); i++ {
		<-e.r.sem
	}
	if status.Code(err) != codes.Unavailable {
		t.Errorf("busy export: %v", err)
	}
}

// TestGRPCToken: with a guard that requires a token, an OTLP/gRPC export
// without the "authorization" metadata, or with another token, is refused
// (Unauthenticated) and records nothing; with it, it is recorded.
func TestGRPCToken(t *testing.T) {
	e := newEnv(t, Config{Mode: mapping.Primary, Guard: &guard.Guard{Auth: guard.Bearer("s3cret")}})
	conn := serveGRPC(t, e)
	logs := plogotlp.NewGRPCClient(conn)
	ld := logsOf(codexRes, codexRec("g9", "codex.conversation_starts", "model", "m"))
	for _, tok := range []string{"", "Bearer guess"} {
		cctx, ccancel := context.WithTimeout(context.Background(), 10*time.Second)
		if tok != "" {
			cctx = metadata.AppendToOutgoingContext(cctx, "authorization", tok)
		}
		_, err := logs.Export(cctx, plogotlp.NewExportRequestFromLogs(ld), grpc.WaitForReady(true))
		ccancel()
		if status.Code(err) != codes.Unauthenticated {
			t.Errorf("token %q: %v, want Unauthenticated", tok, err)
		}
	}
	if st := e.r.Stats(); st.Records != 0 {
		t.Fatalf("a refused export was recorded: %+v", st)
	}
	cctx, ccancel := context.WithTimeout(metadata.AppendToOutgoingContext(context.Background(), "authorization", "Bearer s3cret"), 10*time.Second)
	defer ccancel()
	if _, err := logs.Export(cctx, plogotlp.NewExportRequestFromLogs(ld)); err != nil {
		t.Fatal(err)
	}
	if st := e.r.Stats(); st.Records != 1 {
		t.Errorf("stats %+v", st)
	}
}
