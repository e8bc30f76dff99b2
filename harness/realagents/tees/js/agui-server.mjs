// agui-server.mjs: an AG-UI agent endpoint built on @ag-ui/encoder's
// EventEncoder (node:http), streaming one scripted run per request; the
// scenario is the SCENARIO:<name> marker of the last user message. It logs
// every request it receives and every byte it sends as JSON lines to
// AGUI_SERVER_LOG, and prints its port on its first stdout line.
import http from "node:http";
import fs from "node:fs";

const { EventEncoder } = await import(process.env.AGUI_ENCODER);
const log = fs.openSync(process.env.AGUI_SERVER_LOG, "w");
const rec = (o) => fs.writeSync(log, JSON.stringify(o) + "\n");
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function scenarioOf(input) {
  const users = (input.messages || []).filter((m) => m.role === "user");
  const text = users.length ? String(users[users.length - 1].content) : "";
  const m = /SCENARIO:([a-z-]+)/.exec(text);
  return m ? m[1] : "";
}

// The scripted runs: each a function of (input, emit) returning how the
// stream ends ("complete" or "drop"), the upstream's own choice.
const runs = {
  async tools(input, emit) {
    const t = { threadId: input.threadId, runId: input.runId };
    await emit({ type: "RUN_STARTED", ...t });
    await emit({ type: "STATE_SNAPSHOT", snapshot: { files: [] } });
    await emit({ type: "STEP_STARTED", stepName: "plan" });
    await emit({ type: "TEXT_MESSAGE_START", messageId: "m1", role: "assistant" });
    await emit({ type: "TEXT_MESSAGE_CONTENT", messageId: "m1", delta: "Searching the docs." });
    await emit({ type: "TEXT_MESSAGE_END", messageId: "m1" });
    await emit({ type: "TOOL_CALL_START", toolCallId: "call-1", toolCallName: "search_docs", parentMessageId: "m1" });
    await emit({ type: "TOOL_CALL_ARGS", toolCallId: "call-1", delta: "{\"query\":\"rate limits\"}" });
    await emit({ type: "TOOL_CALL_END", toolCallId: "call-1" });
    await emit({ type: "TOOL_CALL_RESULT", messageId: "m2", toolCallId: "call-1", content: "3 pages found", role: "tool" });
    await emit({ type: "STATE_DELTA", delta: [{ op: "add", path: "/files/-", value: "limits.md" }] });
    await emit({ type: "STEP_FINISHED", stepName: "plan" });
    await emit({ type: "RUN_FINISHED", ...t, result: { pages: 3, answer: "Limits are per key." } });
    return "complete";
  },
  async interrupt(input, emit) {
    const t = { threadId: input.threadId, runId: input.runId };
    if (input.resume && input.resume.length) {
      await emit({ type: "RUN_STARTED", ...t, input });
      await emit({ type: "TOOL_CALL_RESULT", messageId: "m4", toolCallId: "call-rm", content: "removed", role: "tool" });
      await emit({ type: "TEXT_MESSAGE_START", messageId: "m5", role: "assistant" });
      await emit({ type: "TEXT_MESSAGE_CONTENT", messageId: "m5", delta: "Done." });
      await emit({ type: "TEXT_MESSAGE_END", messageId: "m5" });
      await emit({ type: "RUN_FINISHED", ...t, outcome: { type: "success" } });
      return "complete";
    }
    await emit({ type: "RUN_STARTED", ...t });
    await emit({ type: "TOOL_CALL_START", toolCallId: "call-rm", toolCallName: "delete_folder" });
    await emit({ type: "TOOL_CALL_ARGS", toolCallId: "call-rm", delta: "{\"path\":\"build\"}" });
    await emit({ type: "TOOL_CALL_END", toolCallId: "call-rm" });
    await emit({ type: "RUN_FINISHED", ...t, outcome: { type: "interrupt", interrupts: [
      { id: "int-1", reason: "tool_approval", toolCallId: "call-rm", message: "Delete the build folder?" }] } });
    return "complete";
  },
  async cancelled(input, emit) {
    const t = { threadId: input.threadId, runId: input.runId };
    await emit({ type: "RUN_STARTED", ...t });
    await emit({ type: "TEXT_MESSAGE_START", messageId: "m1", role: "assistant" });
    await emit({ type: "TEXT_MESSAGE_CONTENT", messageId: "m1", delta: "Working" });
    await emit({ type: "TEXT_MESSAGE_END", messageId: "m1" });
    await emit({ type: "RUN_FINISHED", ...t, outcome: { type: "cancelled" } });
    return "complete";
  },
  async error(input, emit) {
    const t = { threadId: input.threadId, runId: input.runId };
    await emit({ type: "RUN_STARTED", ...t });
    await emit({ type: "RUN_ERROR", message: "model quota exhausted", code: "quota" });
    return "complete";
  },
  async drop(input, emit) {
    const t = { threadId: input.threadId, runId: input.runId };
    await emit({ type: "RUN_STARTED", ...t });
    await emit({ type: "TEXT_MESSAGE_START", messageId: "m1", role: "assistant" });
    await emit({ type: "TEXT_MESSAGE_CONTENT", messageId: "m1", delta: "Half an ans" });
    return "drop";
  },
  async abort(input, emit, closed) {
    const t = { threadId: input.threadId, runId: input.runId };
    await emit({ type: "RUN_STARTED", ...t });
    await emit({ type: "TEXT_MESSAGE_START", messageId: "m1", role: "assistant" });
    for (let i = 0; i < 200 && !closed(); i++) {
      await emit({ type: "TEXT_MESSAGE_CONTENT", messageId: "m1", delta: `token ${i} ` });
      await sleep(50);
    }
    return "complete";
  },
  async rerun(input, emit) {
    const t = { threadId: input.threadId, runId: input.runId };
    const id = `m-${input.messages.length}`;
    await emit({ type: "RUN_STARTED", ...t });
    await emit({ type: "TEXT_MESSAGE_START", messageId: id, role: "assistant" });
    await emit({ type: "TEXT_MESSAGE_CONTENT", messageId: id, delta: "Again." });
    await emit({ type: "TEXT_MESSAGE_END", messageId: id });
    await emit({ type: "RUN_FINISHED", ...t });
    return "complete";
  },
};

const server = http.createServer(async (req, res) => {
  const parts = [];
  for await (const c of req) parts.push(c);
  const body = Buffer.concat(parts).toString("utf8");
  const x = { method: req.method, path: req.url, header: req.headers, body, chunks: [], end: "complete" };
  let gone = false;
  res.on("close", () => { gone = !res.writableFinished; });
  let input = {};
  try { input = JSON.parse(body); } catch {}
  const enc = new EventEncoder({ accept: req.headers.accept });
  res.writeHead(200, { "Content-Type": enc.getContentType(), "Cache-Control": "no-cache" });
  const emit = async (ev) => {
    if (gone) return;
    const s = enc.encode(ev);
    x.chunks.push(s);
    res.write(s);
    await sleep(10);
  };
  const run = runs[scenarioOf(input)] || runs.tools;
  const end = await run(input, emit, () => gone);
  if (gone) x.end = "aborted";
  else if (end === "drop") { x.end = "dropped"; await sleep(50); req.socket.destroy(); }
  else res.end();
  rec(x);
});
server.listen(0, "127.0.0.1", () => console.log(server.address().port));
process.on("SIGTERM", () => { server.close(); process.exit(0); });
