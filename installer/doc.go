// Package installer registers aep-hook in each agent's own settings and
// takes exactly that registration out again: per agent (Agents), where
// its settings live for a scope (the user's or a project's), which of its
// hook events aep-hook registers for and with which command, how a change
// is planned (PlanInstall, PlanUninstall: a diff to show before writing),
// applied (Apply: merged into the vendor's file in its own format, a
// backup first) and inspected (Inspect: registered, missing events,
// trusted). The plugin forwarders (OpenCode, Kilo, pi) join as agents
// whose settings are the plugin file itself.
package installer
