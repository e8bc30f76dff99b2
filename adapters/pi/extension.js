// aep-hook: pi extension (written by `aep-hook plugin pi`; `aep-hook install pi` places it).
// Forwards pi's bus events to aep-hook, which records them as AEP events.
// Observe-only: it subscribes to notification events only, returns nothing
// from them, never touches the UI, and never waits on aep-hook.
import { spawn } from "node:child_process";

// The aep-hook binary; AEP_HOOK_BIN overrides the path written at install.
const BIN = process.env.AEP_HOOK_BIN || "__AEP_HOOK_BIN__";
// Extra arguments before "forward pi" (a recorder wrapping aep-hook).
const PRE = JSON.parse(process.env.AEP_HOOK_BIN_ARGS || "[]");
// Token and tool-output stream updates are forwarded only on request:
// AEP_DELTAS=1, as for the OpenCode and Kilo plugins (AEP_PI_DELTAS is its
// old, deprecated name).
const DELTAS = /^(1|true|yes|on)$/i.test(process.env.AEP_DELTAS || process.env.AEP_PI_DELTAS || "");
// Bytes left unread by a stuck aep-hook before events are dropped (and counted).
const MAX_BUFFERED = 8 << 20;
// How many times a forwarder that exited is started again.
const MAX_STARTS = 3;

const EVENTS = [
  "session_start", "session_info_changed", "session_compact", "session_compact_failed",
  "session_tree", "session_shutdown", "agent_start", "agent_end", "agent_settled",
  "turn_start", "turn_end", "message_start", "message_end", "tool_execution_start",
  "tool_execution_end", "model_select", "thinking_level_select", "ui_prompt_start", "ui_prompt_end",
];
const DELTA_EVENTS = ["message_update", "tool_execution_update"];

// slim keeps what the mapping reads: a long session must not resend its
// history with every turn.
function slim(ev) {
  switch (ev.type) {
    case "agent_end": {
      const msgs = Array.isArray(ev.messages) ? ev.messages : [];
      let last;
      for (let i = msgs.length - 1; i >= 0; i--) {
        if (msgs[i] && msgs[i].role === "assistant") { last = msgs[i]; break; }
      }
      return { type: ev.type, messages: last ? [{ role: "assistant", stopReason: last.stopReason, errorMessage: last.errorMessage, usage: last.usage }] : [] };
    }
    case "turn_end":
      return { type: ev.type, turnIndex: ev.turnIndex, timestamp: ev.timestamp };
    case "session_compact":
      return { type: ev.type, reason: ev.reason, willRetry: ev.willRetry, fromExtension: ev.fromExtension };
    case "model_select":
      return { type: ev.type, source: ev.source, model: { id: ev.model && ev.model.id, provider: ev.model && ev.model.provider } };
    case "session_tree":
      return { type: ev.type };
    case "message_start":
    case "message_end": {
      // The user's prompt and the assistant's reply are read; the system
      // prompt, empty starts and tool results (the tool trio has them) are not.
      const m = ev.message || {};
      if (m.role === "user" && ev.type === "message_start") return ev;
      if (m.role === "assistant" && ev.type === "message_end") {
        return { type: ev.type, message: { role: m.role, content: m.content, stopReason: m.stopReason, errorMessage: m.errorMessage, usage: m.usage } };
      }
      return { type: ev.type, message: { role: m.role } };
    }
    case "message_update":
      return { type: ev.type, message: { role: ev.message && ev.message.role }, assistantMessageEvent: ev.assistantMessageEvent };
  }
  return ev;
}

export default function aepHook(pi) {
  let child = null;
  let starts = 0;
  let lost = 0;

  function forwarder() {
    if (child || starts >= MAX_STARTS) return child;
    starts++;
    try {
      const args = [...PRE, "forward", "pi"].concat(DELTAS ? ["--deltas"] : []);
      const c = spawn(BIN, args, { stdio: ["pipe", "ignore", "ignore"], detached: true, windowsHide: true });
      c.on("error", () => { if (child === c) child = null; starts = MAX_STARTS; });
      c.on("exit", () => { if (child === c) child = null; });
      c.stdin.on("error", () => {});
      c.unref();
      if (c.stdin.unref) c.stdin.unref();
      child = c;
    } catch {
      starts = MAX_STARTS;
    }
    return child;
  }

  function forward(event, ctx) {
    try {
      const sm = ctx && ctx.sessionManager;
      const session = { id: sm && sm.getSessionId ? sm.getSessionId() : "" };
      const c = forwarder();
      if (!c || !c.stdin.writable || c.stdin.writableLength > MAX_BUFFERED) {
        lost++;
        return;
      }
      if (lost > 0) {
        c.stdin.write(JSON.stringify({ aep_lost: lost, session }) + "\n");
        lost = 0;
      }
      c.stdin.write(JSON.stringify({ session, event: slim(event) }) + "\n");
    } catch {
      lost++;
    }
  }

  for (const name of DELTAS ? EVENTS.concat(DELTA_EVENTS) : EVENTS) {
    pi.on(name, (event, ctx) => { forward(event, ctx); });
  }
}
