package kimiweb

import "testing"

func TestAccepted(t *testing.T) {
	for _, tc := range []struct {
		status int
		body   string
		ok     bool
	}{
		{200, `{"code":0,"msg":"success","data":{}}`, true},
		{200, `{"code":40401,"msg":"approval not found"}`, false},
		{200, `true`, false},
		{404, `{"code":0}`, false},
		{200, ``, false},
	} {
		if _, ok := Accepted(tc.status, []byte(tc.body)); ok != tc.ok {
			t.Errorf("%d %s: %v", tc.status, tc.body, ok)
		}
	}
}

// FuzzAccepted: any answer of the server's is read without a panic, and
// only a 2xx can be taken.
func FuzzAccepted(f *testing.F) {
	f.Add(200, `{"code":0}`)
	f.Add(500, `{"code":1}`)
	f.Fuzz(func(t *testing.T, status int, body string) {
		if _, ok := Accepted(status, []byte(body)); ok && status/100 != 2 {
			t.Fatalf("HTTP %d taken", status)
		}
	})
}
