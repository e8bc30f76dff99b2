package a2a

import (
	"testing"

	"github.com/aep-hook/aep-hook/mapping"
)

func TestDecode(t *testing.T) {
	tests := []struct {
		name, line string
		want       mapping.Facts
		err        bool
	}{
		{"request names its context and task",
			`{"jsonrpc":"2.0","id":4,"method":"SendMessage","params":{"message":{"contextId":"c","taskId":"t"}}}`,
			mapping.Facts{Kind: mapping.KindRequest, Method: "SendMessage", ID: "4", Session: "c", Run: "t"}, false},
		{"task method names the task",
			`{"jsonrpc":"2.0","id":"x","method":"tasks/cancel","params":{"id":"t"}}`,
			mapping.Facts{Kind: mapping.KindRequest, Method: "tasks/cancel", ID: "x", Run: "t"}, false},
		{"v1.0 stream result is an event",
			`{"jsonrpc":"2.0","id":1,"result":{"statusUpdate":{"taskId":"t","contextId":"c"}}}`,
			mapping.Facts{Kind: mapping.KindEvent, Name: CaseStatus, ID: "1", Session: "c", Run: "t"}, false},
		{"v0.3 artifact update is an event",
			`{"jsonrpc":"2.0","id":1,"result":{"kind":"artifact-update","taskId":"t","contextId":"c"}}`,
			mapping.Facts{Kind: mapping.KindEvent, Name: CaseArtifact, ID: "1", Session: "c", Run: "t"}, false},
		{"a bare task answers GetTask",
			`{"kind":"response","method":"GetTask","jsonrpc":"2.0","id":2,"result":{"id":"t","contextId":"c","status":{"state":"TASK_STATE_WORKING"}}}`,
			mapping.Facts{Kind: mapping.KindResponse, Name: CaseTask, Method: "GetTask", ID: "2", Session: "c", Run: "t"}, false},
		{"message answer",
			`{"jsonrpc":"2.0","id":2,"result":{"message":{"messageId":"m","contextId":"c","parts":[]}}}`,
			mapping.Facts{Kind: mapping.KindResponse, Name: CaseMessage, ID: "2", Session: "c"}, false},
		{"annotations win",
			`{"kind":"end","session":"c","run":"t","tee":"i","reason":"client_aborted","method":"SendStreamingMessage"}`,
			mapping.Facts{Kind: mapping.KindEnd, Method: "SendStreamingMessage", Session: "c", Run: "t", Instance: "i", Reason: "client_aborted"}, false},
		{"bad kind", `{"kind":"record"}`, mapping.Facts{}, true},
		{"not an object", `[1]`, mapping.Facts{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ms, err := Decode([]byte(tt.line))
			if (err != nil) != tt.err {
				t.Fatalf("err %v, want error %v", err, tt.err)
			}
			if tt.err {
				return
			}
			if len(ms) != 1 || ms[0].Facts != tt.want {
				t.Errorf("facts %+v, want %+v", ms[0].Facts, tt.want)
			}
		})
	}
}
