package mapping

import (
	"encoding/json"
	"regexp"
	"testing"

	"github.com/tidwall/gjson"
)

// TestHermesClarifyResultAsEncodingJSON holds the hand-written reading of
// a clarify result to what encoding/json decoding it into the three
// members gives, on the shapes a result may take.
func TestHermesClarifyResultAsEncodingJSON(t *testing.T) {
	for _, body := range []string{
		`{"question":"Which?","choices_offered":["a","b "],"user_response":"b"}`,
		`{"choices_offered":["a"],"user_response":null}`,
		`{"user_response":"x","user_response":null}`,
		`{"user_response":null,"user_response":"late"}`,
		`{"User_Response":"folded","CHOICES_OFFERED":["folded"]}`,
		`{"user\u005fresponse":"escaped key"}`,
		`{"user_response":"x","error":null}`,
		`{"user_response":"x","error":"boom"}`,
		`{"user_response":3}`,
		`{"user_response":"x","choices_offered":"a"}`,
		`{"user_response":"x","choices_offered":null}`,
		`{"user_response":"x","choices_offered":[1,{"a":"b"},"x",null]}`,
		"{\"user_response\":\"bad \xff byte\",\"choices_offered\":[\"bad \xff byte\"]}",
		`{"user_response":"\ud800 lone"}`,
		`{}`, `null`, `[]`, `"s"`, `3`,
	} {
		if !gjson.Valid(body) {
			continue // the caller reads only valid results
		}
		var want struct {
			Error    json.RawMessage `json:"error"`
			Offered  []any           `json:"choices_offered"`
			Response *string         `json:"user_response"`
		}
		err := json.Unmarshal([]byte(body), &want)
		wantOK := err == nil && want.Error == nil
		got, ok := hermesClarifyResult(body)
		if ok != wantOK {
			t.Errorf("%s: ok %v, encoding/json %v (%v)", body, ok, wantOK, err)
			continue
		}
		if !ok {
			continue
		}
		if (got.response == nil) != (want.Response == nil) || got.response != nil && *got.response != *want.Response {
			t.Errorf("%s: response %v, encoding/json %v", body, got.response, want.Response)
		}
		if len(got.offered) != len(want.Offered) {
			t.Errorf("%s: %d choices, encoding/json %d", body, len(got.offered), len(want.Offered))
			continue
		}
		for i, c := range got.offered {
			if s, isStr := want.Offered[i].(string); isStr != (c.Type == gjson.String) || isStr && jsonText(c.Str) != s {
				t.Errorf("%s: choice %d %q, encoding/json %v", body, i, c.Raw, want.Offered[i])
			}
		}
	}
}

// TestHermesGatewayTimedOut holds the hand-written sentinel check to the
// pattern it replaces.
func TestHermesGatewayTimedOut(t *testing.T) {
	re := regexp.MustCompile(`^\[user did not respond within \d+m\]$`)
	for _, s := range []string{
		"[user did not respond within 5m]", "[user did not respond within 120m]", "[user did not respond within m]",
		"[user did not respond within 5m] ", "[user did not respond within 5s]", "[user did not respond within -5m]",
		"[user did not respond within 5 m]", "user did not respond within 5m]", "[user did not respond within ５m]", "",
	} {
		if got, want := hermesGatewayTimedOut(s), re.MatchString(s); got != want {
			t.Errorf("%q: %v, the pattern %v", s, got, want)
		}
	}
}
