// The scripted A2A client the real-agent harness drives (aep-hook's
// harness/realagents, A2A scenarios): an @a2a-js/sdk ClientFactory client
// connected to BASE_URL (the tee), running one scenario and printing one
// JSON line per task it created ({"task": id, "context": id}).
// input-hold waits for a line on stdin before answering the task.
// Usage: node client.mjs BASE_URL SCENARIO
import { ClientFactory } from '@a2a-js/sdk/client';
import { randomUUID } from 'node:crypto';

const [base, scenario] = process.argv.slice(2);
const factory = new ClientFactory();
const client = scenario === 'legacy' ? null : await factory.createFromUrl(base);

const text = (t) => ({ content: { $case: 'text', value: t }, metadata: undefined, filename: '', mediaType: 'text/plain' });
const request = (t, ctx = '', task = '') => ({
  tenant: '',
  message: { messageId: randomUUID(), contextId: ctx, taskId: task, role: 1, parts: [text(t)], metadata: undefined, extensions: [], referenceTaskIds: [] },
  configuration: { acceptedOutputModes: ['text/plain'], taskPushNotificationConfig: undefined, historyLength: undefined, returnImmediately: false },
  metadata: undefined,
});
const seen = new Set();
const note = (task, ctx) => {
  if (task && !seen.has(task)) {
    seen.add(task);
    console.log(JSON.stringify({ task, context: ctx }));
  }
};
const ids = (ev) => {
  const p = ev.payload;
  if (!p) return {};
  if (p.$case === 'task') return { task: p.value.id, ctx: p.value.contextId, state: p.value.status?.state };
  if (p.$case === 'statusUpdate') return { task: p.value.taskId, ctx: p.value.contextId, state: p.value.status?.state };
  if (p.$case === 'artifactUpdate') return { task: p.value.taskId, ctx: p.value.contextId };
  return { ctx: p.value.contextId };
};
async function stream(t, ctx, task, onEvent) {
  let last = {};
  for await (const ev of client.sendMessageStream(request(t, ctx, task))) {
    const x = ids(ev);
    note(x.task, x.ctx);
    last = { ...last, ...Object.fromEntries(Object.entries(x).filter(([, v]) => v !== undefined && v !== '')) };
    if (onEvent) await onEvent(x);
  }
  return last;
}

switch (scenario) {
  case 'stream':
  case 'fail': {
    const r = await stream(`SCENARIO:${scenario} write the report`);
    await client.getTask({ tenant: '', id: r.task, historyLength: 0 });
    break;
  }
  case 'input': {
    const r = await stream('SCENARIO:input what is the weather');
    await stream('Paris', r.ctx, r.task);
    break;
  }
  case 'auth': {
    const res = await client.sendMessage(request('SCENARIO:auth book a meeting'));
    const task = res.id ? res : res.task || res;
    note(task.id, task.contextId);
    const res2 = await client.sendMessage(request('signed in', task.contextId, task.id));
    void res2;
    break;
  }
  case 'reject': {
    const res = await client.sendMessage(request('SCENARIO:reject delete everything'));
    note(res.id, res.contextId);
    break;
  }
  case 'cancel': {
    let cancelledOnce = false;
    await stream('SCENARIO:cancel count to a million', '', '', async (x) => {
      if (!cancelledOnce && x.state === 2 && x.task) {
        cancelledOnce = true;
        await client.cancelTask({ tenant: '', id: x.task, metadata: undefined });
      }
    });
    break;
  }
  case 'input-hold': {
    // The follower's scenario: the task asks for input; the answer waits
    // for a line on stdin (the harness's go once the follower is on).
    const res = await client.sendMessage(request('SCENARIO:input what is the weather'));
    const task = res.id ? res : res.task || res;
    note(task.id, task.contextId);
    await new Promise((resolve) => process.stdin.once('data', resolve));
    await client.sendMessage(request('Paris', task.contextId, task.id));
    process.stdin.destroy();
    break;
  }
  case 'legacy': {
    // A v0.3 peer (no A2A-Version header: the server's compat layer):
    // message/stream asks for input, message/send answers it.
    const rpc = async (method, params, id) => fetch(`${base}/a2a/jsonrpc`, {
      method: 'POST', headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
    });
    const msg = (t, ctx, task) => ({ kind: 'message', messageId: randomUUID(), role: 'user', parts: [{ kind: 'text', text: t }],
      ...(ctx ? { contextId: ctx } : {}), ...(task ? { taskId: task } : {}) });
    const res = await rpc('message/stream', { message: msg('SCENARIO:input what is the weather') }, 1);
    const body = await res.text();
    let task = '', ctx = '';
    for (const line of body.split('\n')) {
      if (!line.startsWith('data:')) continue;
      const r = JSON.parse(line.slice(5)).result || {};
      task = task || r.taskId || (r.kind === 'task' ? r.id : '');
      ctx = ctx || r.contextId || '';
    }
    note(task, ctx);
    const done = await rpc('message/send', { message: msg('Paris', ctx, task) }, 2);
    await done.text();
    break;
  }
  case 'message': {
    const res = await client.sendMessage(request('SCENARIO:message say hello'));
    void res;
    break;
  }
  default:
    console.error(`unknown scenario ${scenario}`);
    process.exit(2);
}
