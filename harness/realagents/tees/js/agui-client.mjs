// agui-client.mjs: @ag-ui/client's HttpAgent running one scripted scenario
// against URL (the aep-hook AG-UI tee in front of agui-server.mjs),
// recording each HTTP exchange as the client saw it (request, response
// bytes, how the stream ended) as JSON lines.
//
//   node agui-client.mjs SCENARIO URL TRANSCRIPT
//
// AGUI_CLIENT names @ag-ui/client's dist/index.mjs.
import fs from "node:fs";

const { HttpAgent } = await import(process.env.AGUI_CLIENT);
const [scenario, url, transcript] = process.argv.slice(2);
const exchanges = [];

// fetchRec is the client's fetch, recording what passes.
async function fetchRec(u, init) {
  const x = { method: init.method, path: new URL(u).pathname, header: { ...init.headers }, body: String(init.body ?? ""),
    status: 0, resp_header: {}, chunks: [], end: "complete" };
  exchanges.push(x);
  const resp = await fetch(u, init);
  x.status = resp.status;
  x.resp_header = { "content-type": resp.headers.get("content-type") };
  const reader = resp.body.getReader();
  const body = new ReadableStream({
    async pull(ctrl) {
      try {
        const { done, value } = await reader.read();
        if (done) { ctrl.close(); return; }
        x.chunks.push(Buffer.from(value).toString("utf8"));
        ctrl.enqueue(value);
      } catch (e) {
        x.end = init.signal && init.signal.aborted ? "aborted" : "dropped";
        ctrl.error(e);
      }
    },
    cancel(reason) { x.end = "aborted"; return reader.cancel(reason); },
  });
  return new Response(body, { status: resp.status, headers: resp.headers });
}

// A stream cut under the client rejects inside the client's pipeline too:
// it is the scenario, not a driver failure.
process.on("unhandledRejection", () => {});

const agent = new HttpAgent({ url, fetch: fetchRec, threadId: `thread-${scenario}` });
const ask = (text) => agent.addMessage({ id: `u-${agent.messages.length}`, role: "user", content: `SCENARIO:${scenario} ${text}` });
const run = async (params, sub) => {
  try { return await agent.runAgent(params, sub); } catch (e) { return { error: String(e && e.message || e) }; }
};

switch (scenario) {
  case "interrupt": {
    ask("clean the build");
    const r1 = await run({});
    const pending = r1.outcome && r1.outcome.interrupts ? r1.outcome.interrupts : [{ id: "int-1" }];
    await run({ resume: pending.map((i) => ({ interruptId: i.id, status: "resolved", payload: { approved: true } })) });
    break;
  }
  case "abort": {
    ask("write a long answer");
    let n = 0;
    await run({}, { onEvent() { if (++n === 5) agent.abortRun(); } });
    break;
  }
  case "rerun":
    ask("first");
    await run({ runId: "run-fixed" });
    ask("again");
    await run({ runId: "run-fixed" });
    break;
  default:
    ask("please help");
    await run({});
}
await new Promise((r) => setTimeout(r, 200));
fs.writeFileSync(transcript, exchanges.map((x) => JSON.stringify(x)).join("\n") + "\n");
process.exit(0);
