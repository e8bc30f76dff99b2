// aep-hook: pi extension (written by `aep-hook plugin pi`; `aep-hook install pi` places it).
// Forwards pi's bus events to aep-hook, which records them as AEP events.
// Observe-only unless the user opts in: it subscribes to notification events,
// returns nothing from them, never touches the UI, and never waits on
// aep-hook. With AEP_CONTROL=1 and a tool named in AEP_CONTROL_TOOLS, that
// tool's tool_call waits for a one-shot `aep-hook forward pi --hold`, which
// asks over the control loop and may block the call; any failure of it lets
// the call proceed.
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

// The control posture `aep-hook install pi --control` wrote (AEP_CONTROL,
// AEP_RELAY, AEP_CONTROL_BUDGET, AEP_CONTROL_TOOLS); pi's own environment
// overrides each. The held run gets it in its environment.
const POSTURE = {};
const setting = (k) => (process.env[k] !== undefined ? process.env[k] : POSTURE[k] || "");
// The opt-in tool_call gate, read as aep-hook reads the same variables:
// AEP_CONTROL a Go boolean, AEP_CONTROL_TOOLS a comma list ("*" is every
// tool, names match case-insensitively).
const CONTROL = /^(1|t|true)$/i.test(setting("AEP_CONTROL").trim());
const GATED = setting("AEP_CONTROL_TOOLS").split(",").map((t) => t.trim().toLowerCase()).filter((t) => t);
// How long a held call may wait before it proceeds without an answer: the
// binary's own budget (AEP_CONTROL_BUDGET, else 55 s, at most 10 min) and
// room for its connection and reply. The binary replies within it; this
// bound only guards against one that hangs.
const HOLD_MS = goDuration(setting("AEP_CONTROL_BUDGET"), 55000) + 5000;
// The most of a held run's reply that is read.
const MAX_REPLY = 64 << 10;

// goDuration reads a Go duration ("20s", "1m30s", "500ms") in milliseconds,
// capped at 10 minutes; def when s is unset or not one.
function goDuration(s, def) {
  s = (s || "").trim();
  if (!/^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/.test(s)) return def;
  const unit = { ns: 1e-6, us: 1e-3, "µs": 1e-3, ms: 1, s: 1000, m: 60000, h: 3600000 };
  let ms = 0;
  for (const [, n, , u] of s.matchAll(/(\d+(\.\d+)?)(ns|us|µs|ms|s|m|h)/g)) ms += Number(n) * unit[u];
  return ms > 0 ? Math.min(ms, 600000) : def;
}

function gates(tool) {
  return CONTROL && typeof tool === "string" && (GATED.includes("*") || GATED.includes(tool.toLowerCase()));
}

// blockOf is the handler's result for a held run's reply: pi's
// {block, reason} when aep-hook refused the call, else nothing (it runs).
function blockOf(out) {
  try {
    const r = JSON.parse(out);
    if (r && r.block === true) {
      return { block: true, reason: typeof r.reason === "string" && r.reason ? r.reason : "Denied over the control loop (aep-hook)." };
    }
  } catch {}
  return undefined;
}

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

  // hold runs one `aep-hook forward pi --hold` for a gated call and settles
  // with the handler's result: always, and never by throwing (pi blocks a
  // call whose handler throws), by the reply, or with nothing when aep-hook
  // fails, exits without a refusal, outlives HOLD_MS or the user aborts.
  function hold(event, ctx) {
    return new Promise((resolve) => {
      let settled = false, out = "", c = null, timer = null;
      const signal = ctx && ctx.signal;
      const finish = (v) => {
        if (settled) return;
        settled = true;
        if (timer) clearTimeout(timer);
        if (signal) signal.removeEventListener("abort", abort);
        resolve(v);
      };
      const stop = () => {
        try { if (c) c.kill("SIGTERM"); } catch {}
        finish(undefined);
      };
      // The user's abort ends the wait: the forwarder hears why (before pi
      // ends the call unrun), so the record dismisses the request.
      const abort = () => {
        if (!settled) forward({ type: "aep_gate", toolCallId: event.toolCallId, released: "aborted" }, ctx);
        stop();
      };
      try {
        const sm = ctx && ctx.sessionManager;
        const session = { id: sm && sm.getSessionId ? sm.getSessionId() : "" };
        const ev = { type: "tool_call", toolCallId: event.toolCallId, toolName: event.toolName, input: event.input };
        if (event.parentToolCallId) ev.parentToolCallId = event.parentToolCallId;
        const env = { ...POSTURE, ...process.env };
        c = spawn(BIN, [...PRE, "forward", "pi", "--hold"], { env, stdio: ["pipe", "pipe", "ignore"], windowsHide: true });
        c.on("error", () => finish(undefined));
        c.on("close", () => finish(blockOf(out)));
        c.stdout.setEncoding("utf8");
        c.stdout.on("data", (d) => { if (out.length < MAX_REPLY) out += d; });
        c.stdin.on("error", () => {});
        c.stdin.end(JSON.stringify({ session, event: ev }) + "\n");
        timer = setTimeout(stop, HOLD_MS);
        if (signal) {
          if (signal.aborted) abort();
          else signal.addEventListener("abort", abort, { once: true });
        }
      } catch {
        stop();
      }
    });
  }

  for (const name of DELTAS ? EVENTS.concat(DELTA_EVENTS) : EVENTS) {
    pi.on(name, (event, ctx) => { forward(event, ctx); });
  }
  // Registered only when opted in: pi asks no handler otherwise.
  if (CONTROL && GATED.length > 0) {
    pi.on("tool_call", async (event, ctx) => {
      try {
        if (event && gates(event.toolName)) return await hold(event, ctx);
      } catch {}
      return undefined;
    });
  }
}
