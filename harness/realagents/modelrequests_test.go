package realagents

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestSameModelRequests: where a recorded scenario was also driven without
// aep-hook registered, the agent sent its model exactly the same requests
// (digests of the bodies, session-minted ids and timings replaced): no hook
// reply reached the model.
func TestSameModelRequests(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(fixturesDir, "*", "recorded", "*", modelRequestsFile))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatalf("no %s under %s", modelRequestsFile, fixturesDir)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var mr ModelRequests
		if err := json.Unmarshal(b, &mr); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if len(mr.WithHooks) == 0 || !slices.Equal(mr.WithHooks, mr.WithoutHooks) {
			t.Errorf("%s: model requests with hooks %v, without %v", f, mr.WithHooks, mr.WithoutHooks)
		}
	}
}
