package mapping

import "github.com/tidwall/gjson"

// permissionMenu is a permission card's options and the option an
// out-of-band settlement records when the call then ran (toolRan).
//
// Options are the vendor's own where its payload or its dialog names them
// (ids and labels as the dialog has them), else the adapter's, labelled so:
// a card never claims the agent offered a choice it did not.
type permissionMenu struct {
	options []any
	// ran is the one option that lets the call run, "" when the menu has
	// several (the record cannot tell which the human chose).
	ran string
}

func opt(id, label string) map[string]any { return map[string]any{"id": id, "label": label} }

// claudeMenu is Claude Code's permission dialog (2.1.x): Yes, the "don't
// ask again" choice when the payload carries permission_suggestions (the
// dialog builds its label from them; this one says what it applies), and
// No, whose custom text tells Claude what to do differently. The ids are the
// dialog's own values.
func claudeMenu(raw []byte) permissionMenu {
	suggested := len(gjson.GetBytes(raw, "permission_suggestions").Array()) > 0
	opts := []any{opt("yes", "Yes")}
	ran := "yes"
	if suggested {
		opts = append(opts, opt("yes-apply-suggestions", "Yes, and don't ask again (Claude Code's suggested rules)"))
		ran = ""
	}
	opts = append(opts, opt("no", "No, and tell Claude what to do differently"))
	return permissionMenu{options: opts, ran: ran}
}

// codexMenu is the adapter's own allow/deny, labelled as aep-hook's: Codex's
// PermissionRequest payload names no choices, and which of its dialog's
// ("just this once", "don't ask again for commands that start with ...",
// "for these files", Esc) a request would show depends on what the payload
// does not say.
func codexMenu([]byte) permissionMenu {
	return permissionMenu{options: adapterOptions(), ran: permissiveOption}
}

// adapterOptions are the adapter's own allow/deny, labelled as aep-hook's,
// for a card whose agent names no choices where the hooks see them.
func adapterOptions() []any {
	return []any{
		opt(permissiveOption, "Allow (aep-hook's option)"),
		opt("deny", "Deny (aep-hook's option)"),
	}
}

// qwenEditTool reports whether tool is a Qwen Code tool whose confirmation
// is its edit dialog; every other tool's (a shell command, a fetch, an MCP tool) offers
// the project and user scopes.
func qwenEditTool(tool string) bool {
	return tool == "edit" || tool == "write_file" || tool == "replace"
}

// qwenMenu is Qwen Code's confirmation dialog (0.24): allow once, the
// "always" choices of the tool's kind (in a trusted folder), and No, whose
// text suggests changes. The ids are Qwen's own ToolConfirmationOutcome
// values; with more than one allowing choice the call's running cannot tell
// which was taken.
func qwenMenu(raw []byte) permissionMenu {
	opts := []any{opt("proceed_once", "Yes, allow once")}
	if qwenEditTool(Str(raw, "tool_name")) {
		opts = append(opts, opt("proceed_always", "Yes, allow always"))
	} else {
		opts = append(opts, opt("proceed_always_project", "Always allow in this project"),
			opt("proceed_always_user", "Always allow for this user"))
	}
	opts = append(opts, opt("cancel", "No, suggest changes"))
	return permissionMenu{options: opts}
}
