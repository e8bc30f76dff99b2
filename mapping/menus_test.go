package mapping

import (
	"reflect"
	"testing"
)

// TestRespondVia holds every held-capable card to AEP-0008's declaration:
// control only when the loop holds the moment live, else oob.
func TestRespondVia(t *testing.T) {
	perm := `"hook_event_name":"PermissionRequest","session_id":"s","tool_name":"Bash","tool_input":{"command":"ls"}`
	cases := []struct {
		vendor, payload string
	}{
		{"claude-code", `{` + perm + `}`},
		{"codex", `{` + perm + `,"turn_id":"t"}`},
		{"qwen-code", `{` + perm + `}`},
		{"claude-code", `{"hook_event_name":"PermissionRequest","session_id":"s","tool_name":"AskUserQuestion","tool_input":{"questions":[{"question":"Q?","options":[{"label":"a"}]}]}}`},
		{"claude-code", `{"hook_event_name":"Elicitation","session_id":"s","mcp_server_name":"m","message":"?","requested_schema":{"type":"object","properties":{"x":{"type":"string"}}}}`},
	}
	for _, c := range cases {
		v, _ := Lookup(c.vendor)
		for _, live := range []bool{false, true} {
			ds, err := v.Map(Moment{Raw: []byte(c.payload), Nonce: "n", Control: live}, &State{})
			if err != nil {
				t.Fatal(err)
			}
			want := []any{"oob"}
			if live {
				want = []any{"control"}
			}
			found := false
			for _, d := range ds {
				if d.Type == "attention.requested" {
					found = true
					if got := d.Data["respond_via"]; !reflect.DeepEqual(got, want) {
						t.Errorf("%s %s live=%v: respond_via %v, want %v", c.vendor, c.payload, live, got, want)
					}
				}
			}
			if !found {
				t.Errorf("%s %s: no attention.requested", c.vendor, c.payload)
			}
		}
	}
}

// TestMenus holds the cards' options to the vendors' own dialogs.
func TestMenus(t *testing.T) {
	ids := func(m permissionMenu) []string {
		var out []string
		for _, o := range m.options {
			out = append(out, o.(map[string]any)["id"].(string))
		}
		return out
	}
	cases := []struct {
		name string
		m    permissionMenu
		ids  []string
		ran  string
	}{
		{"claude plain", claudeMenu([]byte(`{}`)), []string{"yes", "no"}, "yes"},
		{"claude suggestions", claudeMenu([]byte(`{"permission_suggestions":[{"type":"addRules"}]}`)), []string{"yes", "yes-apply-suggestions", "no"}, ""},
		{"codex", codexMenu(nil), []string{"allow", "deny"}, "allow"},
		{"qwen shell", qwenMenu([]byte(`{"tool_name":"run_shell_command"}`)), []string{"proceed_once", "proceed_always_project", "proceed_always_user", "cancel"}, ""},
		{"qwen edit", qwenMenu([]byte(`{"tool_name":"write_file"}`)), []string{"proceed_once", "proceed_always", "cancel"}, ""},
	}
	for _, c := range cases {
		if got := ids(c.m); !reflect.DeepEqual(got, c.ids) || c.m.ran != c.ran {
			t.Errorf("%s: ids %v ran %q, want %v %q", c.name, got, c.m.ran, c.ids, c.ran)
		}
	}
}
