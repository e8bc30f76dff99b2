package deliver

import (
	"errors"
	"net/http"
	"testing"
)

func TestSameOrigin(t *testing.T) {
	for _, c := range []struct {
		from, to string
		ok       bool
	}{
		{"https://c.example/events", "https://c.example/v2/events", true},
		{"https://c.example/events", "https://C.example:443/events", true},
		{"http://c.example:80/events", "http://c.example/x", true},
		{"https://c.example/events", "http://c.example/events", false},
		{"https://c.example/events", "https://c.example:8443/events", false},
		{"https://c.example/events", "https://other.example/events", false},
		{"https://c.example/events", "https://sub.c.example/events", false},
	} {
		first, _ := http.NewRequest("POST", c.from, nil)
		next, _ := http.NewRequest("POST", c.to, nil)
		err := sameOrigin(next, []*http.Request{first})
		if (err == nil) != c.ok || (err != nil && !errors.Is(err, ErrRedirect)) {
			t.Errorf("%s -> %s: %v, want ok=%v", c.from, c.to, err, c.ok)
		}
	}
}
