// aep-hook forwarder plugin for __AGENT__ (printed by `aep-hook plugin __VENDOR__`).
//
// It records what the agent does as AEP events without slowing it down: at
// load it starts ONE `aep-hook forward __VENDOR__` process and writes each bus
// event and tool hook to its stdin as one JSON line. It never throws, never
// waits on the recorder, and drops (and counts) lines rather than buffer
// without bound if the recorder falls behind. Token deltas are not sent
// unless AEP_DELTAS=1.
//
// Environment: AEP_HOOK_BIN (overrides the aep-hook binary written below),
// AEP_HOME and the AEP_CAPTURE* settings (read by aep-hook itself).
import { spawn } from "node:child_process"

const BIN = process.env.AEP_HOOK_BIN || "__AEP_HOOK_BIN__"
const DELTAS = process.env.AEP_DELTAS === "1"
const MAX_BUFFERED = 8 << 20 // bytes queued for the recorder before dropping
const MAX_STARTS = 5

let child = null
let starts = 0
let dropped = 0

function start() {
  if (starts >= MAX_STARTS) return null
  starts++
  try {
    const args = ["forward", "__VENDOR__"]
    if (DELTAS) args.push("--deltas")
    const c = spawn(BIN, args, { stdio: ["pipe", "ignore", "ignore"] })
    c.on("error", () => { if (child === c) child = null })
    c.on("exit", () => { if (child === c) child = null })
    c.stdin.on("error", () => { if (child === c) child = null })
    if (typeof c.unref === "function") c.unref()
    child = c
  } catch {
    child = null
  }
  return child
}

function send(moment) {
  try {
    const c = child || start()
    if (!c || !c.stdin.writable) return
    if (c.stdin.writableLength > MAX_BUFFERED) {
      dropped++
      return
    }
    if (dropped > 0) {
      moment = { ...moment, dropped }
      dropped = 0
    }
    c.stdin.write(JSON.stringify(moment) + "\n")
  } catch {
    // never harm the agent
  }
}

const hooks = {
  event: async ({ event }) => {
    if (!event || (event.type === "message.part.delta" && !DELTAS)) return
    send({ kind: "bus", event })
  },
  "tool.execute.before": async (input, output) => {
    send({ kind: "tool.before", input, output: { args: output && output.args } })
  },
  "tool.execute.after": async (input, output) => {
    send({ kind: "tool.after", input, output })
  },
  "permission.ask": async (input) => {
    send({ kind: "permission.ask", permission: input })
  },
}

__EXPORT__
