// The fleet console: a consumer of the relay (its first load from GET
// /stream, then its WebSocket binding, AEP-0003 §3.3 and §3.5) that folds
// the record into the fleet, the sessions and
// the queue of attention requests waiting for a human, and answers them
// with control.attention.respond (AEP-0004 §5) when its token may.
//
// Plain JavaScript, no build step. Everything shown is built with
// textContent and createElement: no event content ever becomes markup.
//
// Hook points for other scripts (e.g. browser notifications), on window:
//   "aep:attention-pending"  CustomEvent, detail: a pending request (see
//                            publicRequest), when a request starts waiting;
//                            detail.replayed is true for one that already
//                            waited when the page loaded.
//   "aep:attention-settled"  CustomEvent, detail: {id, resolution}.
//   window.aepConsole        {config, pending(), answer(id, answer) ->
//                            Promise of the outcome, timing}
'use strict';
(() => {
  const RESPOND = 'control.attention.respond';
  const WINDOW_MS = 10000; // AEP-0004 §3's default ack window
  const RETRIES = 2;
  const LOG_CAP = 300; // events listed per session
  const RUN_CAP = 300; // runs kept per session
  const ITEM_CAP = 1000; // items outside runs kept per session
  const SEEN_CAP = 100000; // (source, id) pairs of unsequenced events remembered for dedupe
  const SEEN_STREAM_CAP = 20000; // ids remembered per stream
  const RESUME_CHUNK = 200; // resume positions per subscription
  const SETTLED_CAP = 10;

  const meta = document.querySelector('meta[name="aep-console"]');
  const cfg = meta ? JSON.parse(meta.content || '{}') : {signin: true};

  // ---------- small helpers ----------
  const $ = (id) => document.getElementById(id);
  function h(tag, attrs, ...kids) {
    const el = document.createElement(tag);
    if (attrs) {
      for (const k in attrs) {
        const v = attrs[k];
        if (v === undefined || v === null || v === false) continue;
        if (k === 'class') el.className = v;
        else if (k === 'text') el.textContent = v;
        else if (k.startsWith('on')) el.addEventListener(k.slice(2), v);
        else el.setAttribute(k, v === true ? '' : String(v));
      }
    }
    for (const c of kids) {
      if (c === undefined || c === null || c === false) continue;
      el.append(c instanceof Node ? c : String(c));
    }
    return el;
  }
  const str = (v) => (typeof v === 'string' ? v : '');
  const obj = (v) => (v && typeof v === 'object' && !Array.isArray(v) ? v : null);
  const num = (v) => (typeof v === 'number' && isFinite(v) ? v : undefined);
  function ms(t) {
    const n = Date.parse(t);
    return isNaN(n) ? undefined : n;
  }
  function dur(d) {
    if (d === undefined || d < 0) return '';
    if (d < 1000) return Math.round(d) + ' ms';
    if (d < 60000) return (d / 1000).toFixed(d < 10000 ? 1 : 0) + ' s';
    const s = Math.floor(d / 1000);
    if (s < 3600) return Math.floor(s / 60) + 'm ' + String(s % 60).padStart(2, '0') + 's';
    if (s < 86400) return Math.floor(s / 3600) + 'h ' + String(Math.floor((s % 3600) / 60)).padStart(2, '0') + 'm';
    return Math.floor(s / 86400) + 'd ' + Math.floor((s % 86400) / 3600) + 'h';
  }
  function ago(t) {
    if (t === undefined) return '';
    const d = Date.now() - t;
    return d < 1000 ? 'now' : dur(d) + ' ago';
  }
  function stamp(t) {
    return t === undefined ? '' : new Date(t).toISOString().replace('T', ' ').replace(/\.\d+Z$/, 'Z');
  }
  function short(s, n) {
    s = str(s);
    return s.length > n ? s.slice(0, n - 1) + '…' : s;
  }
  function clip(v, n) {
    if (v === undefined || v === null) return '';
    const s = typeof v === 'string' ? v : JSON.stringify(v);
    return s.length > n ? s.slice(0, n - 1) + '…' : s;
  }
  const B32 = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
  function ulid() {
    let t = Date.now();
    let s = '';
    for (let i = 0; i < 10; i++) {
      s = B32[t % 32] + s;
      t = Math.floor(t / 32);
    }
    const r = crypto.getRandomValues(new Uint8Array(16));
    for (let i = 0; i < 16; i++) s += B32[r[i] & 31];
    return s;
  }
  // sourceParts reads aep://{host}/agent/{agent}/session/{session}.
  function sourceParts(src) {
    const m = /^aep:\/\/([^/]*)\/agent\/([^/]+)/.exec(str(src));
    if (!m) return {host: '', agent: ''};
    const dec = (x) => {
      try { return decodeURIComponent(x); } catch (e) { return x; }
    };
    return {host: dec(m[1]), agent: dec(m[2])};
  }
  // reconcile makes parent's children exactly nodes, in order, moving
  // only what is out of place: a node that keeps its place keeps focus
  // (a half-typed answer survives a new request arriving above it).
  function reconcile(parent, nodes) {
    let cur = parent.firstChild;
    for (const n of nodes) {
      if (cur === n) {
        cur = cur.nextSibling;
        continue;
      }
      parent.insertBefore(n, cur);
    }
    while (cur) {
      const next = cur.nextSibling;
      parent.removeChild(cur);
      cur = next;
    }
  }
  const posAfter = (a, b) => !b || a.epoch > b.epoch || (a.epoch === b.epoch && a.seq > b.seq);

  // ---------- the state ----------
  const sessions = new Map(); // owner source -> session
  const byName = new Map(); // session name -> Set of owner sources
  const requests = new Map(); // attention.requested id -> request
  const commands = new Map(); // command id -> request id
  const seen = new Map(); // source + ' ' + id -> true, unsequenced events (dedupe, AEP-0001 §7.4)
  const seenIn = new Map(); // source -> Set of the ids of its sequenced events
  const settled = []; // recently settled requests, newest first
  let events = 0;
  let agentEvents = 0;
  let roster = [];
  let phase = 'replay'; // replay (the first load) | live | resumed (after a drop)
  let synced = false; // the first load's replay has been delivered whole
  // dropped: the socket's subscription resumes from positions the page
  // already holds (after a drop, or after the first load came over HTTP),
  // so a session it first sees may have begun before and is backfilled.
  let dropped = false;
  let loading = false; // the first load's HTTP body is being folded in
  let loadGen = 0; // bumped by a restart: an older load's chunks are dropped
  const stats = {resumes: 0, lastFrom: null, backfills: 0, connections: 0};
  const timing = {};
  const nav0 = performance.timeOrigin;

  // dedupe says whether (source, id) was seen already. A stream's
  // sequenced events are remembered in a set of their own, keyed by id
  // alone: no key is built per event, and a large first load pays for
  // small sets instead of one that holds every event.
  function dedupe(ev) {
    if (typeof ev.seq === 'number') {
      let ids = seenIn.get(ev.source);
      if (!ids) seenIn.set(ev.source, (ids = new Set()));
      if (ids.has(ev.id)) return true;
      ids.add(ev.id);
      if (ids.size > SEEN_STREAM_CAP) {
        let drop = SEEN_STREAM_CAP / 8;
        for (const id of ids) {
          ids.delete(id);
          if (--drop <= 0) break;
        }
      }
      return false;
    }
    const k = ev.source + ' ' + ev.id;
    if (seen.has(k)) return true;
    seen.set(k, true);
    if (seen.size > SEEN_CAP) {
      let drop = SEEN_CAP / 8;
      for (const key of seen.keys()) {
        seen.delete(key);
        if (--drop <= 0) break;
      }
    }
    return false;
  }

  function newSession(ev) {
    const p = sourceParts(ev.source);
    const s = {
      key: ev.source, name: ev.session, agent: str(ev.agent) || p.agent, host: p.host, tenant: str(ev.tenant),
      first: ms(ev.time), last: undefined, lastType: '', count: 0, pos: null, captures: {},
      runs: new Map(), openRuns: new Set(), runTerminal: '', runTerminalAt: undefined,
      tools: new Map(), toolCount: 0, toolFailed: 0, items: [], runsDropped: 0, itemsDropped: 0,
      pending: new Set(), ended: null, failed: false, started: null, parent: null, children: new Set(),
      lanes: new Map(), // run -> delegation item that started it (a subagent's lane)
      log: [], gaps: [], foreign: 0,
      state: 'idle', since: undefined, dirty: true, row: null,
    };
    sessions.set(s.key, s);
    let set = byName.get(s.name);
    if (!set) byName.set(s.name, (set = new Set()));
    set.add(s.key);
    return s;
  }

  function runOf(s, ev, t) {
    const id = str(ev.run);
    if (!id) return null;
    let r = s.runs.get(id);
    if (!r) {
      r = {id, seq: ev.seq, start: t, end: undefined, state: 'open', trigger: '', prompt: '', summary: '', reason: '',
        duration: undefined, usage: null, items: [], capture: ''};
      s.runs.set(id, r);
      if (s.runs.size > RUN_CAP) pruneRuns(s);
    }
    return r;
  }
  function pruneRuns(s) {
    for (const [id, r] of s.runs) {
      if (s.runs.size <= RUN_CAP) break;
      if (r.state === 'open') continue;
      s.runs.delete(id);
      s.runsDropped++;
      for (const it of r.items) if (it.kind === 'tool') s.tools.delete(it.key);
    }
  }
  function addItem(s, r, it) {
    if (r) {
      r.items.push(it);
    } else {
      s.items.push(it);
      if (s.items.length > ITEM_CAP) {
        s.items.shift();
        s.itemsDropped++;
      }
    }
    return it;
  }

  // apply folds one event of a session's own stream into its session.
  function apply(ev) {
    const s = sessions.get(ev.source) || newSession(ev);
    const t = ms(ev.time);
    const d = obj(ev.data) || {};
    const cap = str(ev.capture) || 'metadata';
    const p = {epoch: typeof ev.epoch === 'number' ? ev.epoch : 0, seq: ev.seq};
    if (s.pos && !posAfter(p, s.pos)) {
      // Out of order or a redelivery under a new id: it is kept in the
      // log, the state follows the newest.
    } else {
      if (s.pos && p.epoch === s.pos.epoch && p.seq > s.pos.seq + 1) {
        s.gaps.push({from: s.pos.seq + 1, to: p.seq - 1, epoch: p.epoch});
        if (s.gaps.length > 20) s.gaps.shift();
      }
      s.pos = p;
    }
    s.count++;
    events++;
    s.captures[cap] = (s.captures[cap] || 0) + 1;
    if (t !== undefined && (s.last === undefined || t >= s.last)) {
      s.last = t;
      s.lastType = ev.type;
    }
    if (s.first === undefined || (t !== undefined && t < s.first)) s.first = t;
    s.log.push({seq: ev.seq, epoch: p.epoch, time: t, type: ev.type, capture: cap, subject: str(ev.subject)});
    if (s.log.length > LOG_CAP) s.log.shift();
    const r = runOf(s, ev, t);
    if (r && r.capture === '') r.capture = cap;

    switch (ev.type) {
      case 'session.started':
        s.started = {time: t, label: str(d.label), cwd: str(d.cwd), model: str(d['gen_ai.request.model']),
          client: obj(d.client), trigger: str(d.trigger), capture: cap};
        if (obj(d.parent) && str(d.parent.session)) {
          s.parent = {session: d.parent.session, run: str(d.parent.run), agent: str(d.parent.agent)};
          link(s);
        }
        if (s.first === undefined) s.first = t;
        break;
      case 'session.ended':
        s.ended = {time: t, reason: str(d.reason), duration: num(d.duration_ms)};
        for (const id of s.pending) settle(id, 'session ended', t, true);
        break;
      case 'session.compacted':
        addItem(s, r, {kind: 'compaction', seq: ev.seq, time: t, trigger: str(d.trigger), capture: cap});
        break;
      case 'run.started':
        if (r) {
          r.start = t;
          r.seq = ev.seq;
          r.trigger = str(d.trigger);
          r.prompt = str(d.prompt);
          r.capture = cap;
          if (r.state === 'open') s.openRuns.add(r.id);
        }
        break;
      case 'run.finished':
      case 'run.failed':
      case 'run.cancelled':
        if (r) {
          r.state = ev.type.slice(4);
          r.end = t;
          r.duration = num(d.duration_ms);
          r.summary = str(d.summary);
          r.reason = ev.type === 'run.failed' ? str(d.reason) + (obj(d.error) && str(d.error.message) ? ': ' + d.error.message : '')
            : ev.type === 'run.cancelled' ? str(d.by) + (str(d.reason) ? ': ' + d.reason : '') : '';
          r.usage = obj(d.usage);
          s.openRuns.delete(r.id);
          s.runTerminal = r.state;
          s.runTerminalAt = t;
        }
        break;
      case 'tool.requested': {
        const tool = obj(d.tool) || {};
        const key = str(tool.call_id) || ev.id;
        const it = {kind: 'tool', key, seq: ev.seq, time: t, name: str(tool.name) || str(ev.subject), state: 'open',
          args: d.args !== undefined ? d.args : d.args_redacted, duration: undefined, end: undefined, detail: '',
          capture: cap, reqID: ev.id};
        s.tools.set(key, it);
        s.tools.set(ev.id, it);
        s.toolCount++;
        addItem(s, r, it);
        break;
      }
      case 'tool.completed':
      case 'tool.failed':
      case 'tool.denied': {
        const tool = obj(d.tool) || {};
        let it = s.tools.get(str(tool.call_id)) || s.tools.get(str(ev.cause));
        if (!it) {
          it = {kind: 'tool', key: str(tool.call_id) || ev.id, seq: ev.seq, time: t, name: str(tool.name) || str(ev.subject),
            args: undefined, capture: cap};
          s.toolCount++;
          addItem(s, r, it);
        }
        it.state = ev.type.slice(5);
        it.end = t;
        it.duration = num(d.duration_ms);
        if (it.duration === undefined && it.time !== undefined && t !== undefined && it.reqID) it.duration = t - it.time;
        if (ev.type === 'tool.completed') it.detail = clip(d.result !== undefined ? d.result : d.result_redacted, 600);
        if (ev.type === 'tool.failed') {
          s.toolFailed++;
          const e = obj(d.error) || {};
          it.detail = [str(e.type), str(e.message)].filter(Boolean).join(': ');
        }
        if (ev.type === 'tool.denied') {
          s.toolFailed++;
          it.detail = 'denied by ' + (str(d.by) || 'policy') + (str(d.rule) ? ' (' + d.rule + ')' : '');
        }
        it.endCapture = cap;
        break;
      }
      case 'delegation.subagent.started':
      case 'delegation.subagent.stopped': {
        const child = obj(d.child) || {};
        const ck = 'deleg:' + (str(child.session) || '') + ':' + (str(child.run) || str(ev.subject));
        let it = s.tools.get(ck);
        if (!it) {
          it = {kind: 'delegation', key: ck, seq: ev.seq, time: t, child: {session: str(child.session), run: str(child.run),
            agent: str(child.agent)}, agentType: str(d.agent_type), role: str(d.role), state: 'open', capture: cap, parentRun: r ? r.id : ''};
          s.tools.set(ck, it);
          addItem(s, r, it);
          if (it.child.run && !it.child.session) s.lanes.set(it.child.run, it);
          if (it.child.session) linkChild(s, it.child);
        }
        if (ev.type === 'delegation.subagent.stopped') {
          it.state = str(d.status) || 'stopped';
          it.end = t;
          it.duration = num(d.duration_ms);
        }
        break;
      }
      case 'attention.requested': {
        const req = {
          id: ev.id, key: s.key, session: ev.session, agent: s.agent, host: s.host, tenant: str(ev.tenant), source: ev.source,
          run: str(ev.run), subject: str(ev.subject), time: t, capture: cap, severity: str(ev.severity) || 'info',
          kind: str(d.kind) || 'other', prompt: str(d.prompt), options: Array.isArray(d.options) ? d.options.filter(obj) : [],
          fields: Array.isArray(d.fields) ? d.fields.filter(obj) : [], respondVia: Array.isArray(d.respond_via) ? d.respond_via : null,
          expiresAt: ms(d.expires_at), answer: null, acks: [], resolution: '', end: undefined, card: null, sending: null,
          replayed: phase !== 'live',
        };
        requests.set(req.id, req);
        addItem(s, r, {kind: 'attention', seq: ev.seq, time: t, req, capture: cap});
        if (!s.ended) {
          s.pending.add(req.id);
          pendingDirty = true;
          announce(req);
          askRoster();
        }
        break;
      }
      case 'attention.answered': {
        const req = requests.get(str(ev.subject));
        if (req) {
          const a = obj(d.answer) || {};
          req.answer = {option: str(a.option), text: str(a.text), values: obj(a.values), by: str(d.by), via: str(d.via), time: t, capture: cap};
          pendingDirty = true;
          if (req.card) updateCard(req);
        }
        break;
      }
      case 'attention.resolved':
      case 'attention.timeout': {
        const id = str(ev.subject);
        const res = ev.type === 'attention.timeout' ? 'timeout' : str(d.resolution) || 'resolved';
        settle(id, res, t, false);
        break;
      }
      case 'control.accepted':
      case 'control.rejected': {
        const rid = commands.get(str(ev.cause));
        const req = rid && requests.get(rid);
        if (req) {
          req.acks.push({type: ev.type.slice(8), reason: str(d.reason), detail: str(d.detail), time: t});
          if (req.card) updateCard(req);
        }
        settleCommand(str(ev.cause), ev.type === 'control.accepted' ? {ack: 'accepted'} : {ack: 'rejected', reason: str(d.reason), detail: str(d.detail)});
        break;
      }
      case 'error.raised':
        if (d.fatal === true) s.failed = true;
        addItem(s, r, {kind: 'error', seq: ev.seq, time: t, code: str(d.code), message: obj(d.error) ? str(d.error.message) : '',
          type: obj(d.error) ? str(d.error.type) : '', fatal: d.fatal === true, capture: cap});
        break;
      case 'progress.status':
        addItem(s, r, {kind: 'progress', seq: ev.seq, time: t, message: str(d.message), phase: str(d.phase), capture: cap});
        break;
    }
    computeState(s);
    touch(s);
  }

  // foreign takes an event about a session whose order its emitter does
  // not own (a command, attention.routed): it belongs to every session of
  // that name the page knows.
  function foreign(ev) {
    const d = obj(ev.data) || {};
    if (ev.type === RESPOND && str(ev.subject)) commands.set(ev.id, ev.subject);
    const keys = byName.get(ev.session);
    if (!keys) return;
    for (const k of keys) {
      const s = sessions.get(k);
      s.foreign++;
      s.log.push({seq: undefined, time: ms(ev.time), type: ev.type, capture: str(ev.capture) || 'metadata',
        subject: str(ev.subject), from: str(ev.agent)});
      if (s.log.length > LOG_CAP) s.log.shift();
      if (ev.type === 'attention.routed') {
        const req = requests.get(str(ev.subject));
        if (req) (req.routed = req.routed || []).push({to: str(d.to), via: str(d.via), by: str(ev.agent)});
      }
      touch(s);
    }
  }

  function link(s) {
    const keys = byName.get(s.parent.session);
    if (!keys) return;
    for (const k of keys) {
      const p = sessions.get(k);
      if (p && p !== s && (!s.parent.agent || p.agent === s.parent.agent)) {
        p.children.add(s.key);
        s.parentKey = p.key;
        touch(p);
      }
    }
  }
  function linkChild(s, child) {
    const keys = byName.get(child.session);
    if (!keys) return;
    for (const k of keys) {
      const c = sessions.get(k);
      if (c && c !== s && (!child.agent || c.agent === child.agent)) {
        s.children.add(c.key);
        c.parentKey = c.parentKey || s.key;
      }
    }
  }

  // The states of a session, in the fleet's order.
  const RANK = {waiting: 0, running: 1, failed: 2, idle: 3, ended: 4};
  const LABEL = {waiting: 'waiting for a human', running: 'running', failed: 'failed', idle: 'idle', ended: 'ended'};
  function computeState(s) {
    let state;
    let since;
    if (s.ended) {
      state = s.ended.reason === 'error' || s.failed || s.runTerminal === 'failed' ? 'failed' : 'ended';
      since = s.ended.time;
    } else if (waitingCount(s) > 0) {
      state = 'waiting';
      for (const id of s.pending) {
        const r = requests.get(id);
        if (r && !r.answer && (since === undefined || r.time < since)) since = r.time;
      }
    } else if (s.openRuns.size > 0) {
      state = 'running';
      for (const id of s.openRuns) {
        const r = s.runs.get(id);
        if (r && r.start !== undefined && (since === undefined || r.start < since)) since = r.start;
      }
    } else if (s.failed || s.runTerminal === 'failed') {
      state = 'failed';
      since = s.runTerminalAt;
    } else {
      state = 'idle';
      since = s.runTerminalAt !== undefined ? s.runTerminalAt : s.first;
    }
    if (since === undefined) since = s.last;
    s.state = state;
    s.since = since;
  }
  function waitingCount(s) {
    let n = 0;
    for (const id of s.pending) {
      const r = requests.get(id);
      if (r && !r.answer) n++;
    }
    return n;
  }

  function settle(id, resolution, t, quiet) {
    const req = requests.get(id);
    if (!req || req.resolution) return;
    req.resolution = resolution;
    req.end = t;
    const s = sessions.get(req.key);
    if (s) {
      s.pending.delete(id);
      if (!quiet) {
        computeState(s);
        touch(s);
      }
    }
    settled.unshift(req);
    if (settled.length > SETTLED_CAP) settled.pop();
    pendingDirty = true;
    window.dispatchEvent(new CustomEvent('aep:attention-settled', {detail: {id, resolution}}));
  }

  function announce(req) {
    window.dispatchEvent(new CustomEvent('aep:attention-pending', {detail: publicRequest(req)}));
    if (!req.replayed) notify(req);
  }

  // ---------- browser notifications ----------
  // A request that starts waiting while the page is open, of a kind that
  // stops an agent until a person acts (permission and form requests), is
  // shown once as a notification, when this browser has been asked to
  // (the button: permission is never asked on load). What it shows is what
  // the relay delivered under the token's ceiling: the prompt only when the
  // request came above metadata, otherwise the structural facts (agent,
  // kind, tool, machine, session). Clicking it brings the page forward with
  // the request's card focused. When the token may emit as its name, the
  // delivery is recorded in the request's session as attention.routed.
  const NOTIFY_KINDS = ['permission', 'form'];
  const NOTIFY_KEY = 'aep-console-notify';
  const notified = new Set(); // request ids shown
  const notes = {shown: 0, recorded: 0, errors: []};

  function notifyWanted() {
    let on = '';
    try {
      on = localStorage.getItem(NOTIFY_KEY) || '';
    } catch (e) { /* storage may be off */ }
    return on === 'on' && 'Notification' in window && Notification.permission === 'granted';
  }

  function notifyButton() {
    const b = $('notify');
    if (!('Notification' in window) || cfg.signin) {
      b.hidden = true;
      return;
    }
    b.hidden = false;
    const perm = Notification.permission;
    const on = notifyWanted();
    b.disabled = perm === 'denied';
    b.setAttribute('aria-pressed', on ? 'true' : 'false');
    b.textContent = perm === 'denied' ? 'Notifications blocked by the browser' : on ? 'Notifications on' : 'Turn on notifications';
    b.title = on ? 'Permission and form requests that start waiting are shown as notifications; press to stop' :
      'Show permission and form requests that start waiting as notifications of this browser';
  }

  function toggleNotify() {
    const set = (v) => {
      try {
        localStorage.setItem(NOTIFY_KEY, v);
      } catch (e) { /* storage may be off */ }
      notifyButton();
    };
    if (notifyWanted()) {
      set('off');
      return;
    }
    Promise.resolve(Notification.requestPermission()).then((perm) => set(perm === 'granted' ? 'on' : 'off'), () => set('off'));
  }

  function notify(req) {
    if (!NOTIFY_KINDS.includes(req.kind) || notified.has(req.id) || !notifyWanted()) return;
    notified.add(req.id);
    const what = req.kind === 'form' ? 'asks you to fill in a form' : 'requests permission';
    const title = req.agent + ' ' + what + (req.subject ? ': ' + req.subject : '');
    const free = req.capture !== 'metadata' && req.capture !== 'none';
    const lines = [];
    if (free && req.prompt) lines.push(short(req.prompt, 200));
    lines.push('on ' + (req.host || 'an unnamed machine') + ' · session ' + short(req.session, 40));
    let n;
    try {
      n = new Notification(title, {body: lines.join('\n'), tag: 'aep-attention-' + req.id});
    } catch (e) {
      notes.errors.push(String(e && e.message ? e.message : e));
      return;
    }
    notes.shown++;
    n.addEventListener('click', () => {
      window.focus();
      if (view.kind !== 'fleet' && view.key !== req.key) location.hash = '#/s/' + encodeURIComponent(req.key);
      focusCard(req);
      n.close();
    });
    routed(req, 'browser', 'notification');
  }

  // routed records where the page delivered req (AEP-0002 attention.routed:
  // in the request's session, under the page's own name, no seq).
  function routed(req, to, via) {
    if (!cfg.record) return;
    const ev = {aep: '0.1', id: ulid(), type: 'attention.routed', subject: req.id, cause: req.id, time: new Date().toISOString(),
      source: 'aep://console/agent/' + encodeURIComponent(cfg.name) + '/session/' + encodeURIComponent(req.session),
      agent: cfg.name, session: req.session, capture: 'metadata', data: {to, via}};
    if (req.run) ev.run = req.run;
    if (req.tenant) ev.tenant = req.tenant;
    if (send(ev)) notes.recorded++;
    else notes.errors.push('not connected: the delivery of ' + req.id + ' is not recorded');
  }

  // answerable says whether the page may offer answer controls for req,
  // and if not, why.
  function answerable(req) {
    if (!cfg.control) return {ok: false, why: cfg.local ? 'this relay runs without tokens: control is off' : 'this token may not answer (no control scope for ' + RESPOND + ')'};
    if (req.respondVia && !req.respondVia.includes('control')) return {ok: false, why: 'the agent takes the answer in its own UI (' + req.respondVia.join(', ') + ')'};
    if (!req.respondVia) return {ok: false, why: 'the request names no control channel'};
    return {ok: true};
  }
  function claimed(req) {
    return roster.some((e) => e.session === req.session && obj(e.control) && Array.isArray(e.control.accepts) && e.control.accepts.includes(RESPOND));
  }

  function publicRequest(req) {
    return {
      id: req.id, agent: req.agent, session: req.session, host: req.host, run: req.run, subject: req.subject,
      kind: req.kind, prompt: req.prompt, options: req.options.map((o) => ({id: str(o.id), label: str(o.label)})),
      fields: req.fields, severity: req.severity, capture: req.capture, since: req.time !== undefined ? new Date(req.time).toISOString() : '',
      answerable: answerable(req).ok, live: claimed(req), replayed: req.replayed, url: '#/s/' + encodeURIComponent(req.key),
    };
  }

  // ---------- the connection ----------
  let ws = null;
  let connected = false;
  let retryDelay = 500;
  let subSeq = 0;
  let userFilter = null;
  const subReplies = new Map(); // subscribe id -> function(error frame or null)
  const barriers = new Map(); // roster id -> function()
  const filling = new Map(); // session name -> buffered events (a backfill in progress)
  const filled = new Set();
  let mainSub = '';

  function send(v) {
    if (ws && ws.readyState === WebSocket.OPEN) {
      ws.send(typeof v === 'string' ? v : JSON.stringify(v));
      return true;
    }
    return false;
  }

  function filterFor(extra) {
    const f = Object.assign({}, cfg.filter || {}, userFilter || {}, extra || {});
    return f;
  }

  // load is the first load: everything the relay holds under the filter,
  // fetched as one HTTP response (GET /stream with live=0 ends after its
  // replay), folded in as it arrives and rendered once at the end. The same
  // replay over the socket is one frame per event, and a browser's
  // per-frame cost is what made a large fleet's first render take seconds;
  // one body costs a fraction of that. The socket then subscribes resumed
  // from the last position of every session, as after a drop, for what
  // came meanwhile and live. If the fetch fails the socket replays it all.
  async function load() {
    if (cfg.signin) return;
    const gen = ++loadGen;
    const f = filterFor();
    let url = '/stream?live=0&from=all';
    if (Object.keys(f).length) url += '&filter=' + encodeURIComponent(JSON.stringify(f));
    setConn('loading what the relay holds…', '');
    loading = true;
    let ok = false;
    try {
      const resp = await fetch(url, {credentials: 'same-origin', cache: 'no-store', headers: {Accept: 'text/event-stream'}});
      if (!resp.ok || !resp.body) throw new Error('status ' + resp.status);
      ok = await readStream(resp.body, gen);
    } catch (e) {
      stats.loadError = String(e && e.message ? e.message : e);
    }
    if (gen !== loadGen) return;
    loading = false;
    if (ok) {
      timing.synced = timing.loaded = performance.now();
      performance.mark('aep:fleet-synced');
      synced = true;
      dropped = true;
      phase = 'resumed';
      stats.bulk = true;
      fleetDirty = pendingDirty = true;
      // The first render of the whole fleet, now, not a frame later.
      clearTimeout(renderTimer);
      renderTimer = 0;
      render();
    } else {
      phase = 'replay';
    }
    connect();
  }

  // readStream folds the body of GET /stream into the state as its chunks
  // arrive; it says whether the body arrived (a body the relay cut short,
  // ": closing", still counts: the socket resumes from what it held).
  // Only each event's data line is looked at: the relay writes an event
  // as "event:", "id:" and "data:" lines, and a data line's JSON holds no
  // raw line break, so "\ndata: " starts one and the next "\n" ends it.
  // A replay from everything carries no replay-exhausted marks (only a
  // resume from positions does), and its other comments are pings.
  async function readStream(body, gen) {
    const reader = body.pipeThrough(new TextDecoderStream()).getReader();
    let rest = '\n';
    for (;;) {
      const {value, done} = await reader.read();
      if (gen !== loadGen) {
        reader.cancel();
        return false;
      }
      if (done) {
        if (rest.includes('\n: closing ')) stats.loadCut = true;
        return true;
      }
      const t0 = performance.now();
      const text = rest + value;
      let i = 0;
      for (let k = text.indexOf('\ndata: '); k >= 0; k = text.indexOf('\ndata: ', i)) {
        const e = text.indexOf('\n', k + 7);
        if (e < 0) break;
        streamData(text.slice(k + 7, e));
        i = e;
      }
      rest = text.slice(i);
      timing.busy = (timing.busy || 0) + performance.now() - t0;
      timing.chunks = (timing.chunks || 0) + 1;
      setConn('loading what the relay holds… ' + events.toLocaleString('en') + ' events', '');
    }
  }

  // streamData is the data line of one event of GET /stream.
  function streamData(d) {
    let m;
    try {
      m = JSON.parse(d);
    } catch (e) {
      return;
    }
    if (m && typeof m.type === 'string' && m.type.includes('.')) ingest(m);
  }

  function exhausted(session, earliest) {
    for (const k of byName.get(session) || []) {
      const s = sessions.get(k);
      s.gaps.push({exhausted: true, epoch: num(earliest.epoch), seq: num(earliest.seq)});
      touch(s);
    }
  }

  function connect() {
    if (cfg.signin) return;
    const url = (location.protocol === 'https:' ? 'wss://' : 'ws://') + location.host + '/socket';
    setConn('connecting…', '');
    const sock = new WebSocket(url);
    ws = sock;
    sock.onopen = () => {
      // The page emits when it answers (control) or records a delivery.
      const hello = {type: 'hello', versions: ['0.1'], role: cfg.control || cfg.record ? 'both' : 'consumer',
        identity: {instance: 'console/' + ulid().slice(16)}, capabilities: {emits: cfg.control ? ['control'] : []}};
      if (cfg.control || cfg.record) hello.identity.agent = cfg.name;
      sock.send(JSON.stringify(hello));
    };
    sock.onmessage = (m) => {
      const t0 = performance.now();
      if (timing.firstFrame === undefined) timing.firstFrame = t0;
      if (sock === ws) onMessage(m.data);
      timing.busy = (timing.busy || 0) + performance.now() - t0;
      timing.frames = (timing.frames || 0) + 1;
    };
    sock.onclose = (e) => {
      if (sock !== ws) return;
      connected = false;
      ws = null;
      subReplies.clear();
      barriers.clear();
      for (const [name, buf] of filling) {
        // A backfill cut short: what arrived is applied, in order.
        flushFill(name, buf);
      }
      filling.clear();
      // A drop before the first load was whole replays it all again (what
      // was already shown is deduplicated); after it, the page resumes
      // from its positions.
      phase = synced ? 'resumed' : 'replay';
      dropped = dropped || synced;
      const why = e.reason ? ' (' + e.reason + ')' : '';
      setConn('connection lost' + why + '; reconnecting in ' + dur(retryDelay) + ', resuming from the last position seen', 'down');
      setTimeout(connect, retryDelay);
      retryDelay = Math.min(retryDelay * 2, 10000);
    };
  }

  function onMessage(text) {
    let m;
    try {
      m = JSON.parse(text);
    } catch (e) {
      return;
    }
    if (!m || typeof m.type !== 'string') return;
    if (m.type.includes('.')) {
      ingest(m);
      return;
    }
    switch (m.type) {
      case 'hello':
        connected = true;
        stats.connections++;
        retryDelay = 500;
        subscribeAll();
        break;
      case 'subscribed':
      case 'unsubscribed': {
        const f = subReplies.get(m.id);
        if (f && m.type === 'subscribed') {
          subReplies.delete(m.id);
          f(null);
        }
        break;
      }
      case 'error':
        if (m.cause) {
          settleCommand(m.cause, {ack: 'refused', reason: str(m.code), detail: str(m.detail)});
        } else if (m.id && subReplies.has(m.id)) {
          const f = subReplies.get(m.id);
          subReplies.delete(m.id);
          f(m);
        } else if (m.id && barriers.has(m.id)) {
          const f = barriers.get(m.id);
          barriers.delete(m.id);
          f();
        } else {
          setConn('the relay said: ' + str(m.code) + (m.detail ? ' (' + m.detail + ')' : ''), 'down');
        }
        break;
      case 'roster':
        if (Array.isArray(m.entries)) {
          roster = m.entries.filter(obj);
          pendingDirty = true;
          scheduleRender();
        }
        if (barriers.has(m.id)) {
          const f = barriers.get(m.id);
          barriers.delete(m.id);
          f();
        }
        break;
      case 'replay-exhausted':
        exhausted(str(m.session), obj(m.earliest) || {});
        break;
      case 'ping':
        send({type: 'pong', t: m.t});
        break;
      case 'closing':
        setConn('the relay is closing the connection: ' + str(m.reason), 'down');
        break;
    }
  }

  function ingest(ev) {
    if (typeof ev.source !== 'string' || typeof ev.id !== 'string') return;
    if (typeof ev.session !== 'string') {
      if (!dedupe(ev)) agentEvents++;
      return;
    }
    if (typeof ev.seq !== 'number') {
      if (!dedupe(ev)) foreign(ev);
      return;
    }
    const buf = filling.get(ev.session);
    if (buf) {
      buf.push(ev);
      return;
    }
    if (dropped && !byName.has(ev.session) && !filled.has(ev.session)) {
      // A session first seen after a drop may have begun while the page
      // was cut off: fetch what the relay holds of it before showing it.
      backfill(ev);
      return;
    }
    if (dedupe(ev)) return;
    apply(ev);
  }

  // subscribeAll opens the page's subscriptions: on the first load one
  // replayed from everything the relay holds (from: all); after a drop,
  // one per chunk of known sessions resumed from the last position seen
  // of each (from: positions), then the live one. A roster request after
  // the subscriptions marks where their replay ends: the relay answers a
  // connection's frames in order.
  function subscribeAll() {
    const f = filterFor();
    mainSub = 'main-' + ++subSeq;
    const done = () => {
      setConn('live', 'live');
      if (phase === 'replay') {
        timing.synced = performance.now();
        performance.mark('aep:fleet-synced');
      }
      phase = 'live';
      synced = true;
      resendInflight();
      scheduleRender();
    };
    if (phase === 'replay') {
      setConn('replaying what the relay holds…', '');
      subscribe(mainSub, f, 'all', done);
      return;
    }
    setConn('resuming…', '');
    // The least recent position among the streams of each session name.
    const names = new Map();
    for (const s of sessions.values()) {
      if (!s.pos) continue;
      const p = names.get(s.name);
      if (!p || posAfter(p.pos, s.pos)) names.set(s.name, {pos: s.pos, last: s.last || 0});
    }
    const list = [...names].sort((a, b) => b[1].last - a[1].last).map(([name, v]) => ({session: name, epoch: v.pos.epoch, seq: v.pos.seq}));
    const temps = [];
    // The resume that follows a first load over HTTP is not a drop's.
    if (stats.connections > 1 || !stats.bulk) {
      stats.resumes++;
      stats.lastFrom = list;
    }
    // The sessions that began while the page was cut off are found by
    // their session.started (each is then backfilled whole).
    const disc = 'discover-' + ++subSeq;
    temps.push(disc);
    subscribe(disc, filterFor({type: 'session.started'}), 'all', null);
    for (let i = 0; i < list.length; i += RESUME_CHUNK) {
      const id = 'resume-' + ++subSeq;
      temps.push(id);
      subscribe(id, f, list.slice(i, i + RESUME_CHUNK), null);
    }
    subscribe(mainSub, f, null, () => {
      for (const id of temps) send({type: 'unsubscribe', id});
      done();
    });
  }

  // subscribe sends one subscribe frame, then a roster request whose reply
  // calls done once the subscription's replay has been delivered.
  function subscribe(id, filter, from, done) {
    const fr = {type: 'subscribe', id, filter};
    if (from) fr.from = from;
    subReplies.set(id, (err) => {
      if (err && id === mainSub) {
        $('filter-error').textContent = 'The relay refused the subscription: ' + str(err.code) + (err.detail ? ': ' + err.detail : '');
        setConn('not subscribed', 'down');
      }
    });
    send(fr);
    if (done) {
      const bid = 'sync-' + id;
      barriers.set(bid, done);
      send({type: 'roster', id: bid});
    }
  }

  function backfill(ev) {
    const name = ev.session;
    stats.backfills++;
    const buf = [ev];
    filling.set(name, buf);
    filled.add(name);
    const id = 'fill-' + ++subSeq;
    subscribe(id, filterFor({session: name}), [{session: name, epoch: 0, seq: -1}], () => {
      send({type: 'unsubscribe', id});
      filling.delete(name);
      flushFill(name, buf);
    });
  }
  function flushFill(name, buf) {
    buf.sort((a, b) => ((a.epoch || 0) - (b.epoch || 0)) || (a.seq - b.seq));
    for (const ev of buf) if (!dedupe(ev)) apply(ev);
  }

  let rosterTimer = 0;
  function askRoster() {
    if (!connected || rosterTimer) return;
    rosterTimer = setTimeout(() => {
      rosterTimer = 0;
      send({type: 'roster', id: 'roster-' + ++subSeq});
    }, 300);
  }
  setInterval(() => {
    if (!connected) return;
    for (const r of requests.values()) {
      if (!r.resolution) {
        askRoster();
        return;
      }
    }
  }, 15000);

  // ---------- answering (AEP-0004 §2-§3, the sender's side) ----------
  const inflight = new Map(); // command id -> flight

  function answer(reqID, ans) {
    const req = requests.get(reqID);
    if (!req) return Promise.reject(new Error('no request ' + reqID));
    const ok = answerable(req);
    if (!ok.ok) return Promise.reject(new Error(ok.why));
    const a = {};
    if (ans && str(ans.option)) a.option = ans.option;
    if (ans && str(ans.text)) a.text = ans.text;
    if (ans && obj(ans.values)) a.values = ans.values;
    if (!a.option && !a.text && !a.values) return Promise.reject(new Error('an answer is an option, text or a form\'s values'));
    const id = ulid();
    const ev = {aep: '0.1', id, type: RESPOND, subject: req.id, time: new Date().toISOString(),
      source: 'aep://console/agent/' + encodeURIComponent(cfg.name), agent: cfg.name, session: req.session, cause: req.id,
      capture: a.text || a.values ? 'full' : 'metadata'};
    if (req.tenant) ev.tenant = req.tenant;
    ev.data = {answer: a};
    commands.set(id, req.id);
    return new Promise((resolve) => {
      const f = {id, req, bytes: JSON.stringify(ev), sent: 0, started: Date.now(), timer: 0, sub: 'answer-' + ++subSeq, resolve, answer: a};
      inflight.set(id, f);
      req.sending = {answer: a, state: 'sending', command: id};
      if (req.card) updateCard(req);
      // Watch the target session's acks and outcome, then send.
      subReplies.set(f.sub, () => transmit(f));
      if (!send({type: 'subscribe', id: f.sub, filter: {source: [req.source], type: ['control.*', 'attention.*']}})) {
        subReplies.delete(f.sub);
        f.timer = setTimeout(() => expire(f), WINDOW_MS);
      }
    });
  }

  function transmit(f) {
    if (!inflight.has(f.id)) return;
    if (send(f.bytes)) f.sent++;
    clearTimeout(f.timer);
    const left = WINDOW_MS - (Date.now() - f.started);
    if (left <= 0) {
      expire(f);
      return;
    }
    f.timer = f.sent <= RETRIES ? setTimeout(() => transmit(f), Math.min(left, WINDOW_MS / (RETRIES + 1))) : setTimeout(() => expire(f), left);
  }
  function expire(f) {
    settleCommand(f.id, {ack: 'timeout', detail: 'no acknowledgement within ' + dur(WINDOW_MS)});
  }
  function resendInflight() {
    for (const f of inflight.values()) {
      subReplies.set(f.sub, () => transmit(f));
      send({type: 'subscribe', id: f.sub, filter: {source: [f.req.source], type: ['control.*', 'attention.*']}});
    }
  }
  function settleCommand(id, out) {
    const f = inflight.get(id);
    if (!f) return;
    inflight.delete(id);
    clearTimeout(f.timer);
    send({type: 'unsubscribe', id: f.sub});
    out.command = id;
    out.sent = f.sent;
    f.req.sending = Object.assign({answer: f.answer, state: out.ack}, out);
    if (f.req.card) updateCard(f.req);
    f.resolve(out);
  }

  // ---------- rendering ----------
  let renderTimer = 0;
  let pendingDirty = true;
  let fleetDirty = true;
  const dirty = new Set();
  let view = {kind: 'fleet'};

  function touch(s) {
    s.dirty = true;
    dirty.add(s);
    fleetDirty = true;
    scheduleRender();
  }
  function scheduleRender() {
    // The first load renders once, when it has all arrived.
    if (renderTimer || loading) return;
    const first = timing.firstRender === undefined;
    // While the first load replays, the fleet is laid out once a second
    // at most: each layout of a large table costs more than handling the
    // events between two of them.
    renderTimer = setTimeout(() => {
      renderTimer = 0;
      requestAnimationFrame(render);
    }, first ? 0 : phase === 'replay' ? 1000 : 60);
  }

  function render() {
    const t0 = performance.now();
    timing.renders = (timing.renders || 0) + 1;
    try {
      renderNow();
    } finally {
      timing.renderBusy = (timing.renderBusy || 0) + performance.now() - t0;
    }
  }
  function renderNow() {
    if (fleetDirty) renderFleet();
    if (pendingDirty) renderPending();
    if (view.kind === 'session') {
      const s = sessions.get(view.key);
      if (s && (s.dirty || view.stale)) renderSession(s);
    }
    for (const s of dirty) s.dirty = false;
    dirty.clear();
    if (timing.firstRender === undefined && sessions.size > 0) {
      timing.firstRender = performance.now();
      timing.firstRows = sessions.size;
      performance.mark('aep:fleet-first-render');
    }
    if (timing.synced !== undefined && timing.fleetComplete === undefined && view.kind === 'fleet') {
      // The first render after the first load's replay: the fleet whole.
      timing.fleetComplete = performance.now();
      timing.completeRows = $('fleet-body').rows.length;
      performance.mark('aep:fleet-complete');
    }
  }

  function setConn(text, cls) {
    const el = $('conn');
    el.textContent = text;
    el.className = 'conn ' + cls;
  }

  function orderSessions() {
    const roots = [];
    for (const s of sessions.values()) {
      if (!s.parentKey || !sessions.has(s.parentKey)) roots.push(s);
    }
    const cmp = (a, b) => {
      const d = RANK[a.state] - RANK[b.state];
      if (d) return d;
      if (a.state === 'waiting') return (a.since || 0) - (b.since || 0);
      return (b.last || 0) - (a.last || 0);
    };
    roots.sort(cmp);
    const out = [];
    const walk = (s, depth) => {
      out.push([s, depth]);
      if (depth > 4) return;
      const kids = [...s.children].map((k) => sessions.get(k)).filter((c) => c && c.parentKey === s.key);
      kids.sort(cmp);
      for (const c of kids) walk(c, depth + 1);
    };
    for (const s of roots) walk(s, 0);
    return out;
  }

  function rowFor(s) {
    if (s.row) return s.row;
    const cells = {};
    const td = (k, cls) => (cells[k] = h('td', {class: cls}));
    const link = h('a', {href: '#/s/' + encodeURIComponent(s.key), class: 'sess-link'});
    const tr = h('tr', {'data-key': s.key}, td('state'), td('since', 'num'), td('agent'), td('sess', 'sess'), td('host'),
      td('runs', 'num'), td('tools', 'num'), td('last'));
    cells.sess.append(link);
    cells.link = link;
    s.row = {tr, cells, last: {}};
    return s.row;
  }
  function setCell(row, k, text, title) {
    if (row.last[k] === text) return;
    row.last[k] = text;
    row.cells[k].textContent = text;
    if (title !== undefined) row.cells[k].title = title;
  }
  function fillRow(s, depth) {
    const row = rowFor(s);
    const st = row.last.state;
    if (st !== s.state) {
      row.last.state = s.state;
      row.cells.state.replaceChildren(h('span', {class: 'badge s-' + s.state, text: LABEL[s.state]}));
      row.tr.className = 'st-' + s.state + (depth ? ' child' : '');
    } else if ((depth > 0) !== row.tr.classList.contains('child')) {
      row.tr.classList.toggle('child', depth > 0);
    }
    setCell(row, 'since', ago(s.since), stamp(s.since));
    setCell(row, 'agent', s.agent);
    const label = s.started && s.started.label ? ' · ' + short(s.started.label, 60) : '';
    if (row.last.sess !== s.name + label) {
      row.last.sess = s.name + label;
      row.cells.link.textContent = short(s.name, 40) + label;
      row.cells.link.title = s.key;
    }
    setCell(row, 'host', s.host);
    setCell(row, 'runs', s.openRuns.size ? s.runs.size + ' (' + s.openRuns.size + ' open)' : String(s.runs.size + s.runsDropped));
    setCell(row, 'tools', s.toolFailed ? s.toolCount + ' (' + s.toolFailed + ' failed)' : String(s.toolCount));
    setCell(row, 'last', s.lastType + (s.last !== undefined ? ' · ' + ago(s.last) : ''), stamp(s.last));
    return row.tr;
  }

  function renderFleet() {
    fleetDirty = false;
    const order = orderSessions();
    const body = $('fleet-body');
    const counts = {waiting: 0, running: 0, failed: 0, idle: 0, ended: 0};
    const hosts = new Set();
    const rows = [];
    for (const [s, depth] of order) {
      counts[s.state]++;
      hosts.add(s.host);
      if (s.dirty || !s.row) fillRow(s, depth);
      if ((depth > 0) !== s.row.tr.classList.contains('child')) s.row.tr.classList.toggle('child', depth > 0);
      rows.push(s.row.tr);
    }
    reconcile(body, rows);
    $('fleet-empty').hidden = order.length > 0;
    $('fleet-count').textContent = '(' + order.length + (order.length === 1 ? ' session)' : ' sessions)');
    const parts = [];
    for (const k of ['waiting', 'running', 'failed', 'idle', 'ended']) if (counts[k]) parts.push(counts[k] + ' ' + LABEL[k]);
    $('fleet-summary').textContent = (parts.join(', ') || 'no sessions') + ' · ' + events.toLocaleString('en') + ' events · ' +
      hosts.size + (hosts.size === 1 ? ' machine' : ' machines') + (agentEvents ? ' · ' + agentEvents + ' agent events' : '');
  }

  // Relative times move on without events.
  setInterval(() => {
    for (const s of sessions.values()) {
      if (!s.row) continue;
      setCell(s.row, 'since', ago(s.since), stamp(s.since));
      setCell(s.row, 'last', s.lastType + (s.last !== undefined ? ' · ' + ago(s.last) : ''), stamp(s.last));
    }
    for (const r of requests.values()) if (r.card && !r.resolution) r.card.querySelector('.waited').textContent = 'waiting ' + dur(Date.now() - r.time);
  }, 5000);

  // ---------- the queue ----------
  const settledHead = h('li', {class: 'settled-head'}, h('h3', {text: 'Recently settled'}));
  function renderPending() {
    pendingDirty = false;
    const list = $('pending');
    const open = [...requests.values()].filter((r) => !r.resolution).sort((a, b) => (a.time || 0) - (b.time || 0));
    const keep = new Set(open);
    for (const r of settled) keep.add(r);
    const nodes = [];
    for (const r of open) {
      if (!r.card) r.card = card(r);
      updateCard(r);
      nodes.push(r.card);
    }
    if (settled.length) {
      nodes.push(settledHead);
      for (const r of settled) {
        if (!r.card) r.card = card(r);
        updateCard(r);
        nodes.push(r.card);
      }
    }
    reconcile(list, nodes);
    for (const r of requests.values()) if (r.card && !keep.has(r) && r.resolution) r.card = null;
    $('pending-empty').hidden = open.length > 0;
    $('pending-count').textContent = open.length ? '(' + open.length + ')' : '';
    $('pending-hint').textContent = cfg.control ? '' : answerable({respondVia: ['control']}).why + '.';
  }

  function optionLabel(o) {
    const id = str(o.id);
    const label = str(o.label);
    return label && label !== id ? label + ' (' + id + ')' : id;
  }

  function card(r) {
    const ok = answerable(r);
    const el = h('li', {class: 'card', 'data-request': r.id});
    el.append(
      h('h3', null, h('a', {href: '#/s/' + encodeURIComponent(r.key), text: r.agent + ' · ' + short(r.session, 24)}), ' ',
        h('span', {class: 'cap', title: 'capture level of this request as delivered', text: r.capture})),
      h('p', {class: 'meta'}, r.kind + (r.subject ? ' · ' + r.subject : '') + ' · ' + r.host + ' · ', h('span', {class: 'waited'})),
      h('p', {class: 'prompt', text: r.prompt}),
    );
    if (r.options.length && !ok.ok) {
      el.append(h('ul', {class: 'options'}, ...r.options.map((o) => h('li', {text: optionLabel(o)}))));
    }
    if (r.kind === 'form' && r.fields.length && !ok.ok) {
      el.append(h('ul', {class: 'options'}, ...r.fields.map((f) => h('li', {text: str(f.label) + ' (' + str(f.type) + (f.required ? ', required' : '') + ')'}))));
    }
    if (ok.ok) el.append(controls(r));
    else el.append(h('p', {class: 'meta why', text: ok.why}));
    el.append(h('p', {class: 'status', role: 'status', 'aria-live': 'polite'}));
    return el;
  }

  // controls are the answer controls: the vendor's own options as
  // buttons, a form's fields, and a text reply (AEP-0008: an option word
  // counts as that option, other text refuses with it as guidance).
  function controls(r) {
    const box = h('div', {class: 'controls'});
    const go = (a) => {
      for (const b of box.querySelectorAll('button, input, select')) b.disabled = true;
      answer(r.id, a).finally(() => {
        for (const b of box.querySelectorAll('button, input, select')) b.disabled = false;
      }).catch((e) => {
        r.sending = {state: 'error', detail: e.message};
        updateCard(r);
      });
    };
    if (r.kind === 'form' && r.fields.length) box.append(form(r, go));
    const opts = r.options.filter((o) => str(o.id));
    if (opts.length) {
      box.append(h('div', {class: 'answers', role: 'group', 'aria-label': 'Answer with an option'},
        ...opts.map((o) => h('button', {type: 'button', class: /^(deny|no|reject|decline|cancel|abort)/i.test(str(o.id)) ? 'danger' : 'primary',
          'data-option': o.id, onclick: () => go({option: o.id})}, optionLabel(o)))));
    }
    const input = h('input', {type: 'text', 'aria-label': 'Reply with text', placeholder: opts.length ? 'or reply with text (guidance)' : 'reply with text'});
    box.append(h('form', {class: 'reply', onsubmit: (e) => {
      e.preventDefault();
      if (input.value.trim()) go({text: input.value});
    }}, input, h('button', {type: 'submit'}, 'Send')));
    return box;
  }

  // form renders a kind:"form" request's fields (AEP-0006) and submits
  // their values.
  function form(r, go) {
    const getters = [];
    const fs = h('fieldset', null, h('legend', {text: 'Form'}));
    let n = 0;
    for (const f of r.fields) {
      const id = 'f-' + r.id + '-' + n++;
      const fid = str(f.id);
      const label = (str(f.label) || fid) + (f.required ? ' (required)' : '');
      const wrap = h('div', {class: 'field'});
      const type = str(f.type);
      if (type === 'boolean') {
        const cb = h('input', {type: 'checkbox', id});
        wrap.append(h('label', {for: id}, cb, ' ', label));
        getters.push(() => [fid, cb.checked, true]);
      } else if (type === 'number') {
        const inp = h('input', {type: 'number', id, min: num(f.min), max: num(f.max), step: 'any'});
        wrap.append(h('label', {for: id, text: label}), inp);
        getters.push(() => [fid, inp.value === '' ? undefined : Number(inp.value), inp.value !== '']);
      } else if (type === 'select') {
        const choices = Array.isArray(f.choices) ? f.choices.filter(obj) : [];
        let other = null;
        if (f.multi) {
          const group = h('div', {role: 'group', 'aria-label': label});
          const boxes = choices.map((c, i) => {
            const cid = id + '-' + i;
            const cb = h('input', {type: 'checkbox', id: cid, value: str(c.id)});
            group.append(h('label', {for: cid}, cb, ' ', optionLabel(c)), ' ');
            return cb;
          });
          wrap.append(h('span', {text: label}), group);
          if (f.other) {
            other = h('input', {type: 'text', 'aria-label': label + ': other', placeholder: 'other'});
            wrap.append(other);
          }
          getters.push(() => {
            const v = boxes.filter((b) => b.checked).map((b) => b.value);
            if (other && other.value.trim()) v.push(other.value);
            return [fid, v, v.length > 0];
          });
        } else {
          const sel = h('select', {id}, h('option', {value: '', text: '—'}), ...choices.map((c) => h('option', {value: str(c.id), text: optionLabel(c)})));
          wrap.append(h('label', {for: id, text: label}), sel);
          if (f.other) {
            other = h('input', {type: 'text', 'aria-label': label + ': other', placeholder: 'or other'});
            wrap.append(other);
          }
          getters.push(() => {
            const v = other && other.value.trim() ? other.value : sel.value;
            return [fid, v || undefined, !!v];
          });
        }
      } else {
        const inp = h('input', {type: 'text', id});
        wrap.append(h('label', {for: id, text: label}), inp);
        getters.push(() => [fid, inp.value, inp.value !== '']);
      }
      fs.append(wrap);
    }
    const status = h('p', {class: 'status bad', role: 'alert'});
    return h('form', {class: 'form', onsubmit: (e) => {
      e.preventDefault();
      const values = {};
      const missing = [];
      r.fields.forEach((f, i) => {
        const [k, v, set] = getters[i]();
        if (set) values[k] = v;
        else if (f.required) missing.push(str(f.label) || k);
      });
      if (missing.length) {
        status.textContent = 'Required: ' + missing.join(', ');
        return;
      }
      status.textContent = '';
      go({values});
    }}, fs, status, h('button', {type: 'submit', class: 'primary'}, 'Submit'));
  }

  function describeAnswer(a) {
    if (!a) return '';
    const what = a.option ? a.option : a.values ? 'values ' + clip(a.values, 120) : a.text ? 'text' : '';
    return what + (a.text && a.option ? ' with text' : '');
  }

  function updateCard(r) {
    const el = r.card;
    if (!el) return;
    const st = el.querySelector(':scope > .status');
    const w = el.querySelector('.waited');
    if (w) w.textContent = r.resolution ? 'waited ' + dur((r.end || Date.now()) - r.time) : 'waiting ' + dur(Date.now() - r.time);
    let text = '';
    let cls = 'status';
    if (r.answer) {
      text = 'answered ' + describeAnswer(r.answer) + (r.answer.by ? ' by ' + r.answer.by : '') + (r.answer.via ? ' via ' + r.answer.via : '');
      cls += ' good';
    }
    if (r.resolution) {
      text = (text ? text + '; ' : '') + 'resolved: ' + r.resolution;
      el.classList.add('settled');
      for (const b of el.querySelectorAll('.controls')) b.remove();
    } else if (r.sending) {
      const s = r.sending;
      const msg = {
        sending: 'sending ' + describeAnswer(s.answer) + '…',
        accepted: 'accepted by ' + r.agent + '; waiting for it to record the answer',
        rejected: 'rejected by ' + r.agent + ': ' + str(s.reason) + (s.detail ? ' (' + s.detail + ')' : ''),
        refused: 'the relay refused it: ' + str(s.reason) + (s.detail ? ' (' + s.detail + ')' : ''),
        timeout: 'timeout: ' + str(s.detail) + '; the agent may still apply it, the card shows what it records',
        error: str(s.detail),
      }[s.state] || s.state;
      if (!r.answer) {
        text = msg;
        cls += s.state === 'accepted' || s.state === 'sending' ? '' : ' bad';
      }
    } else if (!r.answer && answerable(r).ok) {
      text = claimed(r) ? 'the agent waits for an answer on this relay' : 'no live connection from the agent claims this session now: an answer would be refused (no-route)';
    }
    st.textContent = text;
    st.className = cls;
  }

  // ---------- the session view ----------
  function renderSession(s) {
    view.stale = false;
    $('session-title').textContent = s.agent + ' · ' + s.name;
    const facts = $('session-facts');
    const caps = Object.entries(s.captures).map(([k, v]) => k + ' ×' + v).join(', ');
    const rows = [
      ['State', h('span', null, h('span', {class: 'badge s-' + s.state, text: LABEL[s.state]}), ' since ' + stamp(s.since) + ' (' + ago(s.since) + ')')],
      ['Machine', s.host],
      ['Source', h('code', {text: s.key})],
      ['Started', stamp(s.started ? s.started.time : s.first)],
      ['Last event', s.lastType + ' · ' + stamp(s.last)],
      ['Capture shown', 'events at ' + (caps || 'none') + (cfg.capture ? ' · this token sees at most ' + cfg.capture : '')],
      ['Events', s.count + (s.foreign ? ' (+' + s.foreign + ' from others)' : '') + (s.runsDropped ? ' · ' + s.runsDropped + ' earlier runs not kept' : '')],
    ];
    if (s.started && s.started.model) rows.push(['Model', s.started.model]);
    if (s.started && s.started.client) rows.push(['Client', str(s.started.client.name) + (s.started.client.version ? ' ' + s.started.client.version : '')]);
    if (s.started && s.started.cwd) rows.push(['Directory', s.started.cwd]);
    if (s.started && s.started.label) rows.push(['Label', s.started.label]);
    if (s.ended) rows.push(['Ended', (s.ended.reason || 'ended') + ' · ' + stamp(s.ended.time)]);
    if (s.parentKey && sessions.get(s.parentKey)) {
      const p = sessions.get(s.parentKey);
      rows.push(['Parent', h('a', {href: '#/s/' + encodeURIComponent(p.key), text: p.agent + ' · ' + p.name})]);
    }
    if (s.children.size) {
      rows.push(['Subagent sessions', h('span', null, ...[...s.children].map((k) => sessions.get(k)).filter(Boolean)
        .map((c) => h('a', {href: '#/s/' + encodeURIComponent(c.key), text: c.name + ' ', class: 'mono'})))]);
    }
    const gaps = s.gaps.map((g) => (g.exhausted ? 'the relay no longer holds events before ' + g.epoch + ':' + g.seq : 'seq ' + g.from + '–' + g.to + ' not seen')).join('; ');
    if (gaps) rows.push(['History', gaps]);
    facts.replaceChildren(...rows.flatMap(([k, v]) => [h('dt', {text: k}), h('dd', null, v)]));

    // Lanes: the session's top-level runs and its own markers in order;
    // a subagent's run nests in the lane of the run that delegated it.
    const lanes = $('session-lanes');
    const top = [];
    for (const r of s.runs.values()) if (!s.lanes.has(r.id)) top.push({seq: r.seq, run: r});
    for (const it of s.items) top.push({seq: it.seq, item: it});
    top.sort((a, b) => (a.seq || 0) - (b.seq || 0));
    const out = top.map((x) => (x.run ? lane(s, x.run, 0) : itemEl(s, x.item, 0, !!s.ended)));
    if (!out.length) out.push(h('p', {class: 'empty', text: 'No runs yet.'}));
    lanes.replaceChildren(...out);

    const body = $('session-events').tBodies[0];
    const evRows = [];
    // A position names its epoch only where the session has more than one
    // (a restarted emitter): every session's first epoch is a clock reading.
    const epochs = new Set(s.log.map((e) => e.epoch || 0)).size > 1;
    for (let i = s.log.length - 1; i >= 0; i--) {
      const e = s.log[i];
      evRows.push(h('tr', null, h('td', {class: 'num', text: e.seq === undefined ? '—' : (epochs ? (e.epoch || 0) + ':' : '') + e.seq}),
        h('td', {text: stamp(e.time)}), h('td', {class: 'mono', text: e.type + (e.from ? ' (from ' + e.from + ')' : '')}),
        h('td', null, h('span', {class: 'cap', text: e.capture})), h('td', {text: short(e.subject, 60)})));
    }
    body.replaceChildren(...evRows);
  }

  function lane(s, r, depth) {
    const el = h('section', {class: 'lane t-' + r.state, 'aria-label': 'run ' + r.id, 'data-run': r.id});
    const d = r.duration !== undefined ? r.duration : r.end !== undefined && r.start !== undefined ? r.end - r.start : undefined;
    const usage = r.usage ? Object.entries(r.usage).filter(([, v]) => typeof v === 'number').map(([k, v]) => k.replace('gen_ai.usage.', '') + ' ' + v).join(', ') : '';
    el.append(h('div', {class: 'lane-head'},
      h('strong', {text: (depth ? 'Subagent run ' : 'Run ') + short(r.id, 18)}),
      h('span', {class: 'o-' + (r.state === 'finished' ? 'completed' : r.state), text: r.state === 'open' ? 'running' : r.state}),
      r.trigger ? h('span', {class: 'hint', text: 'trigger ' + r.trigger}) : null,
      h('span', {class: 'hint', text: stamp(r.start)}),
      d !== undefined ? h('span', {text: dur(d)}) : r.state === 'open' && r.start !== undefined ? h('span', {class: 'hint', text: 'for ' + dur(Date.now() - r.start)}) : null,
      usage ? h('span', {class: 'hint', text: usage}) : null,
      h('span', {class: 'cap', text: r.capture || 'metadata'})));
    if (r.prompt) el.append(h('p', {class: 'lane-text', text: short(r.prompt, 600)}));
    if (r.reason) el.append(h('p', {class: 'lane-text o-failed', text: r.reason}));
    if (r.summary) el.append(h('p', {class: 'lane-text', text: short(r.summary, 600)}));
    if (r.items.length) {
      const ul = h('ul', {class: 'items'});
      for (const it of r.items) ul.append(itemEl(s, it, depth, r.state !== 'open'));
      el.append(ul);
    }
    return el;
  }

  // itemEl is one item of a lane; closed says the lane (its run, or the
  // session) has ended, so what is still open there never got an outcome.
  function itemEl(s, it, depth, closed) {
    const li = h('li', {class: 'item k-' + it.kind});
    const cap = h('span', {class: 'cap', text: it.endCapture && it.endCapture !== it.capture ? it.capture + '/' + it.endCapture : it.capture});
    switch (it.kind) {
      case 'tool': {
        const open = it.state === 'open';
        li.append(h('span', {class: 'what', text: it.name || 'tool'}),
          h('span', {class: 'o-' + it.state, text: open ? (closed ? 'no outcome recorded' : 'running') : it.state}),
          it.duration !== undefined ? h('span', {text: dur(it.duration)}) : open && !closed && it.time !== undefined ? h('span', {class: 'hint', text: 'for ' + dur(Date.now() - it.time)}) : '',
          h('span', {class: 'hint', text: stamp(it.time)}), cap);
        if (it.args !== undefined) li.append(h('p', {class: 'detail', text: clip(it.args, 400)}));
        if (it.detail) li.append(h('p', {class: 'detail', text: it.detail}));
        break;
      }
      case 'attention': {
        const r = it.req;
        let state = r.resolution ? 'resolved: ' + r.resolution : r.answer ? 'answered' : 'waiting for a human';
        if (r.answer) state = 'answered ' + describeAnswer(r.answer) + (r.answer.by ? ' by ' + r.answer.by : '') + (r.answer.via ? ' via ' + r.answer.via : '') + (r.resolution ? '; resolved: ' + r.resolution : '');
        li.append(h('span', {class: 'what', text: 'attention · ' + r.kind}), h('span', {class: r.resolution ? 'o-completed' : 'o-open', text: state}),
          h('span', {class: 'hint', text: stamp(r.time)}), cap);
        if (r.prompt) li.append(h('p', {class: 'detail', text: r.prompt}));
        if (r.options.length) li.append(h('p', {class: 'detail', text: 'options: ' + r.options.map(optionLabel).join(' · ')}));
        for (const a of r.acks) li.append(h('p', {class: 'detail', text: 'command ' + a.type + (a.reason ? ': ' + a.reason : '') + (a.detail ? ' (' + a.detail + ')' : '')}));
        if (r.routed) li.append(h('p', {class: 'detail', text: 'routed to ' + r.routed.map((x) => x.to + (x.via ? ' via ' + x.via : '')).join(', ')}));
        if (!r.resolution) li.append(h('p', null, h('a', {href: '#', onclick: (e) => { e.preventDefault(); focusCard(r); }, text: 'answer in the queue'})));
        break;
      }
      case 'delegation': {
        const c = it.child;
        li.append(h('span', {class: 'what', text: 'subagent' + (it.agentType ? ' · ' + it.agentType : '')}),
          h('span', {class: it.state === 'open' ? 'o-open' : 'o-completed', text: it.state === 'open' ? 'running' : it.state}),
          it.duration !== undefined ? h('span', {text: dur(it.duration)}) : '', h('span', {class: 'hint', text: stamp(it.time)}), cap);
        const sub = c.run && !c.session ? s.runs.get(c.run) : null;
        if (sub && depth < 4) {
          li.append(lane(s, sub, depth + 1));
        } else if (c.session) {
          const kids = [...(byName.get(c.session) || [])].map((k) => sessions.get(k)).filter((x) => x && x !== s);
          if (kids.length) {
            for (const k of kids) li.append(childLane(k, depth + 1));
          } else {
            li.append(h('p', {class: 'detail', text: 'child session ' + c.session + ' (not in view)'}));
          }
        } else if (c.run) {
          li.append(h('p', {class: 'detail', text: 'child run ' + c.run + ' (no events yet)'}));
        }
        break;
      }
      case 'compaction':
        li.append(h('span', {class: 'what marker', text: 'context compacted' + (it.trigger ? ' (' + it.trigger + ')' : '')}), h('span', {class: 'hint', text: stamp(it.time)}), cap);
        break;
      case 'error':
        li.append(h('span', {class: 'what o-failed', text: 'error' + (it.code ? ' ' + it.code : '') + (it.fatal ? ' (fatal)' : '')}), h('span', {class: 'hint', text: stamp(it.time)}), cap);
        if (it.type || it.message) li.append(h('p', {class: 'detail', text: [it.type, it.message].filter(Boolean).join(': ')}));
        break;
      case 'progress':
        li.append(h('span', {class: 'what', text: 'progress' + (it.phase ? ' · ' + it.phase : '')}), h('span', {class: 'hint', text: stamp(it.time)}), cap);
        if (it.message) li.append(h('p', {class: 'detail', text: it.message}));
        break;
    }
    return li;
  }

  // childLane is a child session shown inside its parent's lane: its
  // runs, each a nested lane, with a link to it.
  function childLane(c, depth) {
    const el = h('section', {class: 'lane', 'aria-label': 'subagent session ' + c.name});
    el.append(h('div', {class: 'lane-head'}, h('a', {href: '#/s/' + encodeURIComponent(c.key), text: 'Subagent session ' + short(c.name, 30)}),
      h('span', {class: 'badge s-' + c.state, text: LABEL[c.state]})));
    if (depth < 4) for (const r of c.runs.values()) el.append(lane(c, r, depth + 1));
    return el;
  }

  function focusCard(r) {
    // A request that arrived since the last render has no card yet.
    if (!r.card && !r.resolution) render();
    if (!r.card) return;
    const b = r.card.querySelector('button, input, a');
    if (b) b.focus();
  }

  // ---------- routing and keys ----------
  function route() {
    const m = /^#\/s\/(.+)$/.exec(location.hash);
    const fleet = $('fleet-view');
    const sess = $('session-view');
    if (m) {
      let key;
      try { key = decodeURIComponent(m[1]); } catch (e) { key = ''; }
      view = {kind: 'session', key, stale: true};
      fleet.hidden = true;
      sess.hidden = false;
      const s = sessions.get(key);
      if (s) renderSession(s);
      else {
        $('session-title').textContent = 'Session not in view';
        $('session-facts').replaceChildren(h('dd', {text: 'The relay has sent nothing of ' + key + ' under this filter yet.'}));
        $('session-lanes').replaceChildren();
        $('session-events').tBodies[0].replaceChildren();
      }
      $('main').focus();
    } else {
      view = {kind: 'fleet'};
      sess.hidden = true;
      fleet.hidden = false;
    }
  }

  document.addEventListener('keydown', (e) => {
    const t = e.target;
    const typing = t && (t.tagName === 'INPUT' || t.tagName === 'TEXTAREA' || t.tagName === 'SELECT');
    if (e.key === 'Escape') {
      if (typing) t.blur();
      else if (view.kind !== 'fleet') location.hash = '#/';
      return;
    }
    if (typing || e.ctrlKey || e.metaKey || e.altKey) return;
    if (e.key === '/') {
      e.preventDefault();
      $('filter').focus();
    } else if (e.key === 'p') {
      // The first answer control, else the first card's link.
      const first = $('pending').querySelector('.card:not(.settled) .controls button, .card:not(.settled) .controls input') || $('pending').querySelector('.card a');
      if (first) first.focus();
    } else if ((e.key === 'j' || e.key === 'k') && view.kind === 'fleet') {
      const links = [...$('fleet-body').querySelectorAll('a.sess-link')];
      if (!links.length) return;
      let i = links.indexOf(document.activeElement);
      i = e.key === 'j' ? Math.min(i + 1, links.length - 1) : Math.max(i - 1, 0);
      links[i].focus();
    }
  });

  function applyFilter(text) {
    const err = $('filter-error');
    err.textContent = '';
    let f = null;
    if (text.trim()) {
      try {
        f = JSON.parse(text);
      } catch (e) {
        err.textContent = 'Not JSON: an attr-match filter is an object, e.g. {"agent":"codex"} or {"type":["attention.*"]}';
        return;
      }
      if (!obj(f)) {
        err.textContent = 'An attr-match filter is a JSON object';
        return;
      }
    }
    userFilter = f;
    try {
      sessionStorage.setItem('aep-console-filter', f ? JSON.stringify(f) : '');
    } catch (e) { /* storage may be off */ }
    restart();
  }

  // restart drops everything and subscribes again from what the relay
  // holds (a new filter is a new view).
  function restart() {
    sessions.clear();
    byName.clear();
    requests.clear();
    commands.clear();
    seen.clear();
    seenIn.clear();
    settled.length = 0;
    filling.clear();
    filled.clear();
    for (const f of inflight.values()) f.resolve({ack: 'abandoned', command: f.id});
    inflight.clear();
    events = 0;
    agentEvents = 0;
    $('fleet-body').replaceChildren();
    phase = 'replay';
    synced = false;
    dropped = false;
    fleetDirty = pendingDirty = true;
    const old = ws;
    ws = null;
    connected = false;
    if (old) old.close(1000, 'new filter');
    if (view.kind === 'session') view.stale = true;
    scheduleRender();
    load();
  }

  // ---------- start ----------
  function start() {
    const who = $('who');
    $('version').textContent = 'aep-hook' + (cfg.version ? ' ' + cfg.version : '');
    if (cfg.signin) {
      $('signin').hidden = false;
      $('layout').hidden = true;
      $('filter-form').hidden = true;
      if (cfg.expired) $('signin-text').prepend('The token this browser had saved is no longer accepted; it has been forgotten. ');
      who.textContent = 'not signed in';
      setConn('', '');
      return;
    }
    const parts = [];
    parts.push(cfg.local ? 'watch-only relay (no tokens file)' : 'signed in as ' + cfg.identity);
    if (cfg.capture) parts.push('sees at most: ' + cfg.capture + (cfg.capture === 'metadata' || cfg.capture === 'none' ? ' (no free text is delivered to it)' : ''));
    if (cfg.tenant && cfg.tenant !== '*') parts.push('tenant ' + cfg.tenant);
    parts.push(cfg.control ? 'may answer' : 'may not answer');
    who.textContent = parts.join(' · ');
    if (cfg.filter_error) {
      $('filter-error').textContent = cfg.filter_error;
      return;
    }
    $('filter-form').addEventListener('submit', (e) => {
      e.preventDefault();
      applyFilter($('filter').value);
    });
    $('filter-clear').addEventListener('click', () => {
      $('filter').value = '';
      applyFilter('');
    });
    let saved = '';
    try {
      saved = sessionStorage.getItem('aep-console-filter') || '';
    } catch (e) { /* storage may be off */ }
    if (saved) {
      $('filter').value = saved;
      try { userFilter = JSON.parse(saved); } catch (e) { userFilter = null; }
    }
    $('notify').addEventListener('click', toggleNotify);
    notifyButton();
    window.addEventListener('hashchange', route);
    route();
    renderPending();
    load();
  }

  window.aepConsole = {
    config: cfg,
    timing,
    stats,
    notifications: notes,
    navigationStart: nav0,
    pending: () => [...requests.values()].filter((r) => !r.resolution).map(publicRequest),
    answer: (id, a) => answer(id, a),
  };
  start();
})();
