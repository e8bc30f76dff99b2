// The scripted A2A agent the real-agent harness records (aep-hook's
// harness/realagents, A2A scenarios). It is an @a2a-js/sdk server whose
// executor reads a SCENARIO:<name> marker in the user's text:
//   stream  submitted, working, an artifact in two chunks, completed
//   input   asks for input; the follow-up completes the task
//   auth    asks for authentication; the follow-up completes the task
//   reject  rejects the task
//   fail    works, then fails
//   cancel  works until cancelled (CancelTask)
//   message answers with a plain message, no task
// Usage: node agent.mjs PORT PUBLIC_URL   (prints "listening PORT" when up)
import express from 'express';
import { AgentEvent, DefaultRequestHandler, InMemoryTaskStore } from '@a2a-js/sdk/server';
import { jsonRpcHandler, agentCardHandler, UserBuilder } from '@a2a-js/sdk/server/express';
import { randomUUID } from 'node:crypto';

const port = Number(process.argv[2] || 0);
const publicUrl = process.argv[3] || `http://127.0.0.1:${port}`;

const card = {
  name: 'aep-scripted-agent',
  description: 'A scripted agent for recording A2A sessions',
  version: '1.0.0',
  supportedInterfaces: [
    { url: `${publicUrl}/a2a/jsonrpc`, protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: '' },
    { url: `${publicUrl}/a2a/jsonrpc`, protocolBinding: 'JSONRPC', protocolVersion: '0.3', tenant: '' },
  ],
  capabilities: { streaming: true, pushNotifications: false, extensions: [] },
  securitySchemes: {},
  securityRequirements: [],
  defaultInputModes: ['text/plain'],
  defaultOutputModes: ['text/plain'],
  skills: [{ id: 'script', name: 'script', description: 'scripted replies', tags: ['test'], examples: [], inputModes: [], outputModes: [], securityRequirements: [] }],
  signatures: [],
};

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const text = (t) => ({ content: { $case: 'text', value: t }, metadata: undefined, filename: '', mediaType: 'text/plain' });
const agentMsg = (ctx, task, t) => ({ messageId: randomUUID(), contextId: ctx, taskId: task, role: 2, parts: [text(t)], metadata: undefined, extensions: [], referenceTaskIds: [] });
const now = () => new Date().toISOString();

const cancelled = new Set();

function userText(msg) {
  return (msg.parts || []).map((p) => (p.content && p.content.$case === 'text' ? p.content.value : '')).join(' ');
}

class ScriptedExecutor {
  async execute(rc, bus) {
    const ctx = rc.contextId, id = rc.taskId;
    const said = userText(rc.userMessage);
    const m = /SCENARIO:(\w+)/.exec(said);
    let scenario = m ? m[1] : (rc.task ? 'resume' : 'stream');
    const status = (state, msg) => bus.publish(AgentEvent.statusUpdate({ taskId: id, contextId: ctx, status: { state, message: msg, timestamp: now() }, metadata: undefined }));
    if (scenario === 'message') {
      bus.publish(AgentEvent.message(agentMsg(ctx, '', 'A plain answer, no task needed.')));
      bus.finished();
      return;
    }
    if (!rc.task) {
      bus.publish(AgentEvent.task({ id, contextId: ctx, status: { state: 1, message: undefined, timestamp: now() }, artifacts: [], history: [rc.userMessage], metadata: undefined }));
    } else {
      bus.publish(AgentEvent.task(rc.task));
    }
    await sleep(20);
    switch (scenario) {
      case 'reject':
        status(7, agentMsg(ctx, id, 'I will not do that.'));
        break;
      case 'input':
        status(2, agentMsg(ctx, id, 'Looking into it.'));
        await sleep(20);
        status(6, agentMsg(ctx, id, 'Which city do you mean?'));
        break;
      case 'auth':
        status(8, agentMsg(ctx, id, 'Please sign in to the calendar service.'));
        break;
      case 'fail':
        status(2, agentMsg(ctx, id, 'Trying.'));
        await sleep(20);
        status(4, agentMsg(ctx, id, 'The upstream service broke.'));
        break;
      case 'cancel':
        status(2, agentMsg(ctx, id, 'Working for a long time.'));
        for (let i = 0; i < 600 && !cancelled.has(id); i++) await sleep(50);
        if (!cancelled.has(id)) status(4, agentMsg(ctx, id, 'Never cancelled.'));
        break;
      default: // stream, resume
        status(2, agentMsg(ctx, id, 'Writing the report.'));
        await sleep(20);
        const artifactId = randomUUID();
        bus.publish(AgentEvent.artifactUpdate({ taskId: id, contextId: ctx, artifact: { artifactId, name: 'report.txt', description: '', parts: [text('First half. ')], metadata: undefined, extensions: [] }, append: false, lastChunk: false, metadata: undefined }));
        await sleep(20);
        bus.publish(AgentEvent.artifactUpdate({ taskId: id, contextId: ctx, artifact: { artifactId, name: 'report.txt', description: '', parts: [text('Second half.')], metadata: undefined, extensions: [] }, append: true, lastChunk: true, metadata: undefined }));
        await sleep(20);
        status(3, agentMsg(ctx, id, 'Done: the report is ready.'));
    }
    bus.finished();
  }
  async cancelTask(taskId, bus) {
    cancelled.add(taskId);
    bus.publish(AgentEvent.statusUpdate({ taskId, contextId: '', status: { state: 5, message: undefined, timestamp: now() }, metadata: undefined }));
    bus.finished();
  }
}

const handler = new DefaultRequestHandler(card, new InMemoryTaskStore(), new ScriptedExecutor());
const app = express();
app.use('/.well-known/agent-card.json', agentCardHandler({ agentCardProvider: handler }));
// legacyCompat: a request without A2A-Version 1.0 speaks v0.3.
app.use('/a2a/jsonrpc', jsonRpcHandler({ requestHandler: handler, userBuilder: UserBuilder.noAuthentication, legacyCompat: { enabled: true } }));
const srv = app.listen(port, '127.0.0.1', () => {
  console.log(`listening ${srv.address().port}`);
});
process.on('SIGTERM', () => { srv.close(); process.exit(0); });
