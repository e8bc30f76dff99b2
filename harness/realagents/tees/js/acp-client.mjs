// acp-client.mjs: the official ACP SDK client (@agentclientprotocol/sdk 2.x:
// client().onRequest().onNotification().connectWith(ndJsonStream(...)))
// driving an agent command (the aep-hook tee in front of a real agent)
// through one scripted scenario, recording every byte it sends and
// receives, in order, as JSON lines.
//
//   node acp-client.mjs SCENARIO TRANSCRIPT -- TEE ARGS... -- AGENT ARGS...
//
// The command after the first "--" is run (the tee, whose own arguments end
// with the agent's command line after the second "--"); the agent's command
// alone is run, without the tee, for what a scenario prepares before the
// recorded connection (load: the session it loads).
//
// ACP_SDK names the SDK's stable entry (dist/v1/stable/acp.js).
// Scenarios (each prompt carries "SCENARIO:<name>" for the fake model):
//   tool            one turn whose tool needs no permission
//   allow, reject   the first permission request is answered with the first
//                   allow_* / reject_* option (later ones: allow)
//   cancel          session/cancel once the turn is under way; pending
//                   permission requests answered cancelled
//   cancel-perm     session/cancel while the agent waits for a permission
//                   answer, which is then answered cancelled
//   two-prompts     two turns, one after the other, in one session
//   load            a session prepared on a connection of its own (no tee)
//                   is loaded (session/load: the agent replays its history),
//                   then one turn in it
//   two-sessions    two sessions on one connection, a turn in each, at once
//   crash           the agent process dies (SIGKILL) mid-turn
//   stop            the editor stops its agent command mid-turn (SIGTERM to
//                   the tee, which forwards it), as an editor does on quit
//   orphan          stop, for an agent whose launcher leaves a worker
//   refusal         the model refuses to answer
import { spawn, execFileSync } from "node:child_process";
import fs from "node:fs";

const acp = await import(process.env.ACP_SDK);
const argv = process.argv.slice(2);
const [scenario, transcript] = argv;
const cmd = argv.slice(argv.indexOf("--") + 1);
const agentCmd = cmd.slice(cmd.indexOf("--") + 1);
const cwd = process.env.ACP_CWD || process.cwd();
const t0 = Date.now();
const out = fs.openSync(transcript, "w");
const rec = (o) => fs.writeSync(out, JSON.stringify({ ms: Date.now() - t0, ...o }) + "\n");
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const prompt = (tag, text) => [{ type: "text", text: `SCENARIO:${tag} ${text}` }];
const initParams = () => ({
  protocolVersion: acp.PROTOCOL_VERSION,
  clientCapabilities: { fs: { readTextFile: false, writeTextFile: false }, terminal: false },
  clientInfo: { name: "aep-hook-harness", version: "1.0.0" },
});

// connect spawns a command and wraps its stdio as the SDK's stream; with
// capture it records every line it sends and receives.
function connect(command, capture) {
  const child = spawn(command[0], command.slice(1), { stdio: ["pipe", "pipe", "inherit"], cwd });
  const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal, at: Date.now() })));
  const pending = { c2a: Buffer.alloc(0), a2c: Buffer.alloc(0) };
  const take = (dir, chunk) => {
    if (!capture) return;
    let b = Buffer.concat([pending[dir], Buffer.from(chunk)]);
    for (let i = b.indexOf(10); i >= 0; i = b.indexOf(10)) {
      rec({ dir, line: b.subarray(0, i).toString("utf8") });
      b = b.subarray(i + 1);
    }
    pending[dir] = b;
  };
  const flush = (dir) => {
    if (capture && pending[dir].length > 0) rec({ dir, line: pending[dir].toString("utf8"), partial: true });
    pending[dir] = Buffer.alloc(0);
  };
  let stdinOpen = true;
  const closeStdin = () => {
    if (!stdinOpen) return;
    stdinOpen = false;
    flush("c2a");
    if (capture) rec({ event: "stdin_closed" });
    child.stdin.end();
  };
  child.stdin.on("error", () => {}); // the agent may be gone
  const toAgent = new WritableStream({
    write(chunk) {
      take("c2a", chunk);
      return new Promise((resolve) => {
        if (!stdinOpen) return resolve();
        child.stdin.write(chunk, () => resolve());
      });
    },
    close() { closeStdin(); },
    abort() { closeStdin(); },
  });
  const fromAgent = new ReadableStream({
    start(ctrl) {
      child.stdout.on("data", (c) => { take("a2c", c); try { ctrl.enqueue(new Uint8Array(c)); } catch {} });
      child.stdout.on("end", () => { flush("a2c"); if (capture) rec({ event: "stdout_eof" }); try { ctrl.close(); } catch {} });
    },
  });
  return { child, exited, closeStdin, flush, stream: acp.ndJsonStream(toAgent, fromAgent) };
}

// The editor's side of the session: permission answers and updates.
let onUpdate = () => {};
let onPermission = async () => ({ outcome: { outcome: "cancelled" } });
const app = () => acp.client({ name: "aep-hook-harness" })
  .onRequest("session/request_permission", (ctx) => onPermission(ctx.params))
  .onRequest("fs/read_text_file", () => ({ content: "" }))
  .onRequest("fs/write_text_file", () => ({}))
  .onNotification("session/update", (ctx) => onUpdate(ctx.params));

const pick = (p, want) => p.options.find((o) => o.kind === want + "once") || p.options.find((o) => o.kind.startsWith(want)) || p.options[0];
const allow = async (p) => ({ outcome: { outcome: "selected", optionId: pick(p, "allow_").optionId } });

// prepare runs the load scenario's first connection straight to the agent:
// one session, one turn with a tool call, then the agent is closed.
async function prepare() {
  const c = connect(agentCmd, false);
  onPermission = allow;
  let id = "";
  await app().connectWith(c.stream, async (ctx) => {
    await ctx.request("initialize", initParams());
    const s = await ctx.request("session/new", { cwd, mcpServers: [] });
    id = s.sessionId;
      const r = await ctx.request("session/prompt", { sessionId: id, prompt: prompt("load", "please run the check") });
    console.error(`prepared session ${id}: ${r.stopReason}`);
  });
  c.closeStdin();
  const t = setTimeout(() => c.child.kill("SIGKILL"), 15000);
  await c.exited;
  clearTimeout(t);
  if (process.env.ACP_LOAD_NEXT_MINUTE) {
    // Gemini CLI names a session's file by the minute it opens it, and a
    // load opens it afresh: loaded in the minute it was made, the session
    // is overwritten before it is read. An editor loads a session later.
    const m = new Date().getUTCMinutes();
    while (new Date().getUTCMinutes() === m) await sleep(250);
  }
  return id;
}

const loadID = scenario === "load" ? await prepare() : "";
const c = connect(cmd, true);

// kill signals the tee itself (target "tee": the editor stopping its
// agent command) or the tee's child (target "agent": the agent dying on
// its own).
let killedAt = 0;
function kill(target, signal) {
  if (killedAt) return;
  let pid = c.child.pid;
  if (target === "agent") pid = Number(execFileSync("pgrep", ["-P", String(c.child.pid)]).toString().trim().split(/\s+/)[0]);
  killedAt = Date.now();
  rec({ event: "kill", target, signal });
  process.kill(pid, signal);
}

// underWay plays the scenario's interruption once the turn is under way
// (its first update, or a few seconds in).
let ctxRef = null;
const sessions = [];
let interrupted = false;
let prompted = false; // the first prompt is sent: a turn is under way
function underWay() {
  if (interrupted || !prompted) return;
  interrupted = true;
  if (scenario === "cancel") ctxRef.notify("session/cancel", { sessionId: sessions[0] });
  if (scenario === "crash") kill("agent", "SIGKILL");
  if (scenario === "stop" || scenario === "orphan") kill("tee", "SIGTERM");
}

// The turn's own updates (not the commands or modes an agent announces
// whenever it likes) show it under way.
const turnUpdates = new Set(["agent_message_chunk", "agent_thought_chunk", "tool_call", "tool_call_update", "plan"]);
onUpdate = (p) => { if (turnUpdates.has(p.update.sessionUpdate)) underWay(); };
onPermission = async (p) => {
  switch (scenario) {
    case "allow": case "tool": case "two-prompts": case "two-sessions": case "load": case "refusal":
      return allow(p);
    case "reject":
      return { outcome: { outcome: "selected", optionId: pick(p, "reject_").optionId } };
    case "cancel-perm":
      // The editor cancels the turn while the agent waits for its answer;
      // the protocol has it answer the pending request cancelled.
      await ctxRef.notify("session/cancel", { sessionId: p.sessionId });
      return { outcome: { outcome: "cancelled" } };
  }
  underWay();
  return { outcome: { outcome: "cancelled" } };
};

const turn = async (ctx, sessionId, tag, text) => {
  if (!prompted) {
    // An agent waiting on its model sends nothing: the turn counts as
    // under way after a while too.
    setTimeout(underWay, 3000).unref();
  }
  prompted = true;
  const r = await ctx.request("session/prompt", { sessionId, prompt: prompt(tag, text) });
  rec({ event: "prompt_result", stopReason: r.stopReason });
  return r;
};

const work = app().connectWith(c.stream, async (ctx) => {
  ctxRef = ctx;
  await ctx.request("initialize", initParams());
  if (scenario === "load") {
    await ctx.request("session/load", { sessionId: loadID, cwd, mcpServers: [] });
    sessions.push(loadID);
    // Let a replay that follows the load result arrive before the turn.
    await sleep(1500);
    await turn(ctx, loadID, "load-after", "say what you did");
    return;
  }
  sessions.push((await ctx.request("session/new", { cwd, mcpServers: [] })).sessionId);
  if (scenario === "two-sessions") {
    sessions.push((await ctx.request("session/new", { cwd, mcpServers: [] })).sessionId);
    await Promise.all([turn(ctx, sessions[0], "two-sessions", "please run the check"),
      turn(ctx, sessions[1], "two-sessions-b", "please read the file")]);
    return;
  }
  await turn(ctx, sessions[0], scenario, "please run the check");
  if (scenario === "two-prompts") await turn(ctx, sessions[0], "two-prompts-2", "and now say you are done");
}).catch((e) => rec({ event: "client_error", message: String((e && e.message) || e) }));

const end = await Promise.race([work.then(() => "turn"), c.exited.then(() => "exit")]);
if (end === "turn") c.closeStdin(); // the editor is done with the agent
const st = await c.exited;
await sleep(100);
c.flush("a2c");
rec({ event: "exit", code: st.code, signal: st.signal, ms_after_kill: killedAt ? st.at - killedAt : undefined });
fs.closeSync(out);
process.exit(0);
