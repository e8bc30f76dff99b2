package tees

import (
	"fmt"
	"strings"

	"github.com/aep-hook/aep-hook/harness/truth"
)

// teeChecks are the record's truths the tees add to package truth's: a
// rejected call ends in tool.denied (and only the rejected ones do), and
// every permission answer states whether it allows or rejects.
func teeChecks(logs []truth.Log, m Meta) []string {
	var bad []string
	denied := 0
	for _, lg := range logs {
		for i, e := range lg.Events {
			at := fmt.Sprintf("%s event %d (%v)", lg.Name, i+1, e["type"])
			d, _ := e["data"].(map[string]any)
			switch e["type"] {
			case "tool.denied":
				denied++
			case "attention.answered":
				if m.Protocol != ACP {
					break
				}
				ans, _ := d["answer"].(map[string]any)
				kind, _ := ans["kind"].(string)
				if !strings.HasPrefix(kind, "allow") && !strings.HasPrefix(kind, "reject") {
					bad = append(bad, fmt.Sprintf("%s: the answer does not state allow or reject: %v", at, d))
				}
			}
		}
	}
	if denied != m.Denied {
		bad = append(bad, fmt.Sprintf("tool.denied: record says %d, really %d rejected call(s)", denied, m.Denied))
	}
	return bad
}
