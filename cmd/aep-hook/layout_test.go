package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestBinaryLinksNoHarness keeps the test harness (real-agent recorders,
// truth checker, bench, demo, stubs) out of the binary users install: the
// harness imports everything, the binary nothing of it.
func TestBinaryLinksNoHarness(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "github.com/aep-hook/aep-hook/harness/") {
			t.Errorf("the binary links %s", pkg)
		}
	}
}
