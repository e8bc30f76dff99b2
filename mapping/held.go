package mapping

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/tidwall/gjson"
)

// The held moments of the Claude-Code-shaped hook tables: a
// PermissionRequest (Claude Code, Codex, Qwen Code) and Claude Code's
// AskUserQuestion and MCP Elicitation. Each vendor's reply to an answer is
// its own hook output, from its hook documentation and source: Claude Code
// 2.1.332's PermissionRequest decision (behavior allow with updatedInput or
// updatedPermissions, or deny with a message) and Elicitation action
// (accept with content, decline, cancel); Codex 0.171.0's
// permission-request.command.output schema (allow, or deny with a message:
// updatedInput, updatedPermissions and interrupt fail closed); Qwen Code
// 0.24.4's PermissionRequestHookOutput (allow, or deny with a message; an
// allow runs the call once).

// deniedMessage is a refusal's message to the model when the answer gave
// no reason.
const deniedMessage = "Denied over the control loop (aep-hook): do not run this call."

// permissionReply is the PermissionRequest hook output carrying decision.
func permissionReply(decision map[string]any) ([]byte, error) {
	return json.Marshal(map[string]any{"hookSpecificOutput": map[string]any{
		"hookEventName": "PermissionRequest", "decision": decision,
	}})
}

// deny is a refusing decision with the answer's text as the model's
// message.
func deny(a Answer) map[string]any {
	msg := strings.TrimSpace(a.Text)
	if msg == "" {
		msg = deniedMessage
	}
	return map[string]any{"behavior": "deny", "message": msg}
}

// permissionHoldOf is the Hold of a Claude-Code-shaped PermissionRequest:
// the card's menu and key as permissionRequest raises them; decide maps an
// applied option to the vendor's decision (an error: the hook cannot apply
// that choice).
func permissionHoldOf(m Moment, menu func([]byte) permissionMenu, allow, refuse string,
	decide func(option string, a Answer) (map[string]any, error)) *Hold {
	raw := m.Raw
	mn := menu(raw)
	return &Hold{
		Key: heldToolKey(raw), Kind: "permission", Options: optionsOf(mn.options),
		Allow: allow, Refuse: refuse,
		Reply: func(a Answer) ([]byte, error) {
			d, err := decide(a.Option, a)
			if err != nil {
				return nil, err
			}
			return permissionReply(d)
		},
	}
}

// heldToolKey is the reference key permissionRequest marks the card with.
func heldToolKey(raw []byte) string {
	if call := Str(raw, "tool_use_id"); call != "" {
		return callAttentionKey(call)
	}
	return toolAttentionKey(Str(raw, "tool_name"), Raw(raw, "tool_input"))
}

// claudeHold holds Claude Code's PermissionRequest (the AskUserQuestion
// form included) and its Elicitation form.
func claudeHold(m Moment, _ Gate) *Hold {
	switch HookField(m, "hook_event_name") {
	case "PermissionRequest":
		if Str(m.Raw, "tool_name") == "AskUserQuestion" {
			return askHold(m)
		}
		return permissionHoldOf(m, claudeMenu, "yes", "no", func(option string, a Answer) (map[string]any, error) {
			switch option {
			case "yes":
				return map[string]any{"behavior": "allow"}, nil
			case "yes-apply-suggestions":
				// The dialog's "don't ask again": the payload's own
				// suggested permission updates, applied as given.
				return map[string]any{"behavior": "allow",
					"updatedPermissions": json.RawMessage(Raw(m.Raw, "permission_suggestions"))}, nil
			}
			return deny(a), nil
		})
	case "Elicitation":
		return elicitationHold(m)
	}
	return nil
}

// askHold holds an AskUserQuestion: the form's values become the tool's
// answers (question text → the chosen labels, joined with ", " for a
// multi-select, or the free text), returned through updatedInput so Claude
// Code's own dialog is not shown.
func askHold(m Moment) *Hold {
	input := Raw(m.Raw, "tool_input")
	data, _ := askUserQuestionForm(claudeCodeAgent, input)
	fields, _ := data["fields"].([]any)
	qs := gjson.GetBytes(input, "questions").Array()
	return &Hold{
		Key: heldToolKey(m.Raw), Kind: "form", Fields: fieldsOf(fields, nil),
		Reply: func(a Answer) ([]byte, error) {
			answers := map[string]string{}
			for i, q := range qs {
				v, ok := a.Values[fmt.Sprint(i+1)]
				if !ok {
					continue
				}
				answers[q.Get("question").String()] = answerLabels(q, v)
			}
			updated := map[string]any{"questions": json.RawMessage(Raw(input, "questions")), "answers": answers}
			return permissionReply(map[string]any{"behavior": "allow", "updatedInput": updated})
		},
	}
}

// answerLabels is an AskUserQuestion answer as Claude Code writes it: the
// chosen options' labels (1-based choice ids), joined for several; free
// text as it is.
func answerLabels(q gjson.Result, v any) string {
	opts := q.Get("options").Array()
	label := func(x any) string {
		s, _ := x.(string)
		var n int
		if _, err := fmt.Sscanf(s, "%d", &n); err == nil && fmt.Sprint(n) == s && n >= 1 && n <= len(opts) {
			return opts[n-1].Get("label").String()
		}
		return s
	}
	if arr, ok := v.([]any); ok {
		parts := make([]string, 0, len(arr))
		for _, x := range arr {
			parts = append(parts, label(x))
		}
		return strings.Join(parts, ", ")
	}
	return label(v)
}

// elicitationHold holds an MCP elicitation form: values accept it (the
// content is the values, keyed by the schema's property names), the
// options decline and cancel answer with MCP's other two actions. A
// URL-mode elicitation is completed in a browser and is not held.
func elicitationHold(m Moment) *Hold {
	if Str(m.Raw, "mode") == "url" {
		return nil
	}
	data, _, spec := elicitationForm(claudeCodeAgent, m.Raw)
	secret := map[string]bool{}
	for _, f := range spec {
		secret[f.ID] = f.Secret
	}
	fields, _ := data["fields"].([]any)
	return &Hold{
		Key: elicitationKey(m.Raw), Kind: "form", Fields: fieldsOf(fields, secret),
		Actions: []string{"decline", "cancel"},
		Reply: func(a Answer) ([]byte, error) {
			out := map[string]any{"hookEventName": "Elicitation", "action": "accept"}
			if a.Values == nil {
				out["action"] = a.Option
			} else {
				out["content"] = a.Values
			}
			return json.Marshal(map[string]any{"hookSpecificOutput": out})
		},
	}
}

// codexHold holds Codex's PermissionRequest: its hook allows or denies.
func codexHold(m Moment, _ Gate) *Hold {
	if HookField(m, "hook_event_name") != "PermissionRequest" {
		return nil
	}
	return permissionHoldOf(m, codexMenu, "allow", "deny", func(option string, a Answer) (map[string]any, error) {
		if option == "allow" {
			return map[string]any{"behavior": "allow"}, nil
		}
		return deny(a), nil
	})
}

// qwenHold holds Qwen Code's PermissionRequest. Its hook can allow the
// call once or refuse it: the dialog's "always" choices are refused over
// control (answer them in Qwen's own dialog).
func qwenHold(m Moment, _ Gate) *Hold {
	if HookField(m, "hook_event_name") != "PermissionRequest" {
		return nil
	}
	return permissionHoldOf(m, qwenMenu, "proceed_once", "cancel", func(option string, a Answer) (map[string]any, error) {
		switch option {
		case "proceed_once":
			return map[string]any{"behavior": "allow"}, nil
		case "cancel":
			return deny(a), nil
		}
		return nil, fmt.Errorf("Qwen Code's hook can allow a call once or refuse it; %s is answered in its own dialog", option)
	})
}
