// A Toolsmith worker in a few lines: warm command tools in Node.js (docs/tools.md, "Warm
// command tools"). One file, no dependencies; copy it next to your worker.
//
//     const { tool, serve } = require("./toolsmith_worker");
//
//     tool(function shout({ text }) {
//       return text.toUpperCase();
//     });
//
//     serve();
//
// with a manifest naming the program and `worker = true`:
//
//     # shout.toml
//     description = "Shout the text."
//     command = ["node", "shouter.js"]
//     worker = true
//
// Each call arrives as one JSON line on stdin, {"id": 7, "tool": "shout", "arguments": {...},
// "options": {...}}, and is answered with one line on stdout, {"id": 7, "result": ...} or
// {"id": 7, "error": "..."}. A function's return value (or what its promise resolves to) is
// the result: a string is text, an object with `content` is a whole MCP CallToolResult, other
// JSON is structured content. A throw is the error. The second argument, `call`, has
// `progress(done, total, message)`, `log(level, message)`, `options` and `signal`, an
// AbortSignal that aborts when the client cancels. Print nothing else to stdout (console.log
// is sent to stderr once serve() runs).
"use strict";

const readline = require("node:readline");

const tools = new Map();
const running = new Map();

/** Registers `fn` as the tool named `name` (default: the function's name). */
function tool(nameOrFn, maybeFn) {
  const fn = typeof nameOrFn === "function" ? nameOrFn : maybeFn;
  const name = typeof nameOrFn === "string" ? nameOrFn : fn.name;
  tools.set(name, fn);
  return fn;
}

function event(id, fields) {
  process.stderr.write("mcp:" + JSON.stringify({ id, ...fields }) + "\n");
}

async function answer(message) {
  const { id, tool: name, arguments: args = {}, options = {} } = message;
  const fn = tools.get(name);
  if (!fn) {
    const known = [...tools.keys()].sort().join(", ") || "none";
    return { id, error: `this worker has no tool \`${name}\` (it has: ${known})` };
  }
  const controller = new AbortController();
  running.set(id, controller);
  const call = {
    id,
    options,
    signal: controller.signal,
    progress: (progress, total, text) => event(id, { progress, total, message: text }),
    log: (level, text, logger) => event(id, { log: level, message: text, logger }),
  };
  try {
    const result = await fn(args, call);
    return { id, result: result === undefined ? null : result };
  } catch (error) {
    if (controller.signal.aborted) return { id, error: "cancelled" };
    process.stderr.write(`${error && error.stack ? error.stack : error}\n`);
    return { id, error: error instanceof Error ? `${error.name}: ${error.message}` : String(error) };
  } finally {
    running.delete(id);
  }
}

/** Serves calls until stdin closes. */
function serve() {
  // stdout carries answers only.
  console.log = (...args) => console.error(...args);
  const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  lines.on("line", (line) => {
    if (!line.trim()) return;
    let message;
    try {
      message = JSON.parse(line);
    } catch {
      process.stderr.write(`toolsmith_worker: ignoring a line that is not JSON: ${line.slice(0, 80)}\n`);
      return;
    }
    if ("cancel" in message) {
      const controller = running.get(message.cancel);
      if (controller) controller.abort();
      return;
    }
    answer(message).then((reply) => {
      let text;
      try {
        text = JSON.stringify(reply);
      } catch (error) {
        text = JSON.stringify({ id: reply.id, error: `the result is not JSON: ${error.message}` });
      }
      process.stdout.write(text + "\n");
    });
  });
  lines.on("close", () => process.exit(0));
}

module.exports = { tool, serve };
