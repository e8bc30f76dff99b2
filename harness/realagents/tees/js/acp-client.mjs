// acp-client.mjs: the official ACP SDK client (ClientSideConnection of
// @agentclientprotocol/sdk) driving an agent command (the aep-hook tee in
// front of a real agent) through one scripted scenario, recording every
// byte it sends and receives, in order, as JSON lines.
//
//   node acp-client.mjs SCENARIO TRANSCRIPT -- CMD ARGS...
//
// ACP_SDK names the SDK's dist/acp.js. Scenarios: allow, reject (answer the
// first permission request with the first allow_* / reject_* option),
// cancel (session/cancel once the turn is under way; pending permission
// requests answered cancelled), crash (SIGKILL to the tee's child, the
// agent, once the turn is under way), orphan (SIGTERM to the tee, as an
// editor stops its agent command: the tee forwards it to an agent whose
// launcher leaves a worker behind).
import { spawn, execFileSync } from "node:child_process";
import fs from "node:fs";

const acp = await import(process.env.ACP_SDK);
const argv = process.argv.slice(2);
const [scenario, transcript] = argv;
const cmd = argv.slice(argv.indexOf("--") + 1);
const t0 = Date.now();
const out = fs.openSync(transcript, "w");
const rec = (o) => fs.writeSync(out, JSON.stringify({ ms: Date.now() - t0, ...o }) + "\n");

const child = spawn(cmd[0], cmd.slice(1), { stdio: ["pipe", "pipe", "inherit"], cwd: process.env.ACP_CWD });
const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal, at: Date.now() })));

// Lines as the client saw them, per direction; a last line without a
// newline is recorded at the end with partial set.
const pending = { c2a: Buffer.alloc(0), a2c: Buffer.alloc(0) };
function capture(dir, chunk) {
  let b = Buffer.concat([pending[dir], Buffer.from(chunk)]);
  for (let i = b.indexOf(10); i >= 0; i = b.indexOf(10)) {
    rec({ dir, line: b.subarray(0, i).toString("utf8") });
    b = b.subarray(i + 1);
  }
  pending[dir] = b;
}
function flush(dir) {
  if (pending[dir].length > 0) rec({ dir, line: pending[dir].toString("utf8"), partial: true });
  pending[dir] = Buffer.alloc(0);
}

let stdinOpen = true;
const toAgent = new WritableStream({
  write(chunk) {
    capture("c2a", chunk);
    return new Promise((resolve) => {
      if (!stdinOpen) return resolve();
      child.stdin.write(chunk, () => resolve());
    });
  },
  close() { closeStdin(); },
});
function closeStdin() {
  if (stdinOpen) { stdinOpen = false; flush("c2a"); rec({ event: "stdin_closed" }); child.stdin.end(); }
}
child.stdin.on("error", () => {}); // the agent may be gone
const fromAgent = new ReadableStream({
  start(ctrl) {
    child.stdout.on("data", (c) => { capture("a2c", c); ctrl.enqueue(new Uint8Array(c)); });
    child.stdout.on("end", () => { flush("a2c"); rec({ event: "stdout_eof" }); try { ctrl.close(); } catch {} });
  },
});

// kill signals the tee itself (target "tee": the editor stopping its
// agent command) or the tee's child (target "agent": the agent dying on
// its own).
let killedAt = 0;
function kill(target, signal) {
  if (killedAt) return;
  let pid = child.pid;
  if (target === "agent") pid = Number(execFileSync("pgrep", ["-P", String(child.pid)]).toString().trim().split(/\s+/)[0]);
  killedAt = Date.now();
  rec({ event: "kill", target, signal });
  process.kill(pid, signal);
}

// underWay plays the scenario's interruption once the turn is under way
// (its first update, or a few seconds in).
let interrupted = false;
function underWay() {
  if (interrupted) return;
  interrupted = true;
  if (scenario === "cancel") conn.cancel({ sessionId });
  if (scenario === "crash") kill("agent", "SIGKILL");
  if (scenario === "orphan") kill("tee", "SIGTERM");
}

let sessionId = "";
let updates = 0;
const conn = new acp.ClientSideConnection(() => ({
  async requestPermission(p) {
    const want = { allow: "allow_", reject: "reject_" }[scenario];
    if (!want) {
      // A turn being cancelled answers its pending requests cancelled.
      underWay();
      return { outcome: { outcome: "cancelled" } };
    }
    const opt = p.options.find((o) => o.kind === want + "once") || p.options.find((o) => o.kind.startsWith(want));
    return { outcome: { outcome: "selected", optionId: opt.optionId } };
  },
  async sessionUpdate(p) {
    updates++;
    if (updates === 1) underWay();
  },
  async readTextFile() { return { content: "" }; },
  async writeTextFile() { return {}; },
}), acp.ndJsonStream(toAgent, fromAgent));

const turn = (async () => {
  await conn.initialize({ protocolVersion: acp.PROTOCOL_VERSION, clientCapabilities: { fs: { readTextFile: false, writeTextFile: false } } });
  const s = await conn.newSession({ cwd: process.env.ACP_CWD || process.cwd(), mcpServers: [] });
  sessionId = s.sessionId;
  // An agent waiting on its model sends nothing: the turn counts as under
  // way after a while too.
  setTimeout(underWay, 4000).unref();
  const r = await conn.prompt({ sessionId, prompt: [{ type: "text", text: `SCENARIO:${scenario} please run the check` }] });
  rec({ event: "prompt_result", stopReason: r.stopReason });
})().catch((e) => rec({ event: "client_error", message: String(e && e.message || e) }));

const end = await Promise.race([turn.then(() => "turn"), exited.then(() => "exit")]);
if (end === "turn") closeStdin(); // the editor is done with the agent
const st = await exited;
await new Promise((r) => setTimeout(r, 100));
flush("a2c");
rec({ event: "exit", code: st.code, signal: st.signal, ms_after_kill: killedAt ? st.at - killedAt : undefined });
fs.closeSync(out);
process.exit(0);
