// MCP 2025-11-25 experimental tasks with a real client: the official TypeScript SDK's
// `client.experimental.tasks` (1.x, which speaks 2025-11-25) against `toolsmith serve`,
// over stdio and over Streamable HTTP (docs/tasks.md). `.ci/run` copies
// this file into the harness's `clients/`, whose `node_modules` holds the SDK, and runs
//   node tasks_2025_11_25.mjs /path/to/toolsmith
// Exit status 0 when every check passes on both transports.
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';

const toolsmith = process.argv[2];
const folder = mkdtempSync(join(tmpdir(), 'tasks-2025-11-25-'));
writeFileSync(join(folder, 'tally.toml'), `description = "Counts, then finishes."
command = ["sh", "-c", "sleep 0.2; echo tallied {count}"]
task = "optional"

[[parameters]]
name = "count"
type = "integer"
required = true
`);
writeFileSync(join(folder, 'crunch.toml'), `description = "Works for a minute."
command = ["sh", "-c", "sleep 60"]
task = "required"
timeout = "2m"
`);

let failed = 0;
const check = (transport, name, ok, detail) => {
  if (!ok) failed += 1;
  console.log(`${ok ? 'PASS' : 'FAIL'}  ${transport}  ${name}${ok ? '' : `: ${JSON.stringify(detail)}`}`);
};

async function run(name, transport) {
  const client = new Client({ name: 'tasks-2025-11-25', version: '1' },
    { capabilities: { tasks: { list: {}, cancel: {} } } });
  await client.connect(transport);
  const ok = (what, pass, detail) => check(name, what, pass, detail);
  ok('capabilities.tasks.requests.tools.call', !!client.getServerCapabilities()?.tasks?.requests?.tools?.call,
    client.getServerCapabilities());
  const tools = (await client.listTools()).tools;
  const support = (tool) => tools.find((t) => t.name === tool)?.execution?.taskSupport;
  ok('execution.taskSupport', support('tally') === 'optional' && support('crunch') === 'required', tools);

  const seen = [];
  for await (const message of client.experimental.tasks.callToolStream(
    { name: 'tally', arguments: { count: 3 } }, CallToolResultSchema, { task: { ttl: 60000 } })) {
    seen.push(message);
  }
  const last = seen.at(-1);
  ok('callToolStream: task created, polled, result', seen[0]?.type === 'taskCreated'
    && last?.type === 'result' && last.result.content?.[0]?.text === 'tallied 3', seen);
  const id = seen[0]?.task?.taskId;
  const got = await client.experimental.tasks.getTask(id);
  ok('tasks/get', got.status === 'completed' && got.taskId === id, got);
  const result = await client.experimental.tasks.getTaskResult(id, CallToolResultSchema);
  ok('tasks/result', result.content?.[0]?.text === 'tallied 3', result);

  const crunching = client.experimental.tasks.callToolStream(
    { name: 'crunch', arguments: {} }, CallToolResultSchema, { task: {} });
  const created = (await crunching.next()).value;
  ok('a required tool as a task', created?.type === 'taskCreated', created);
  const listed = (await client.experimental.tasks.listTasks()).tasks.map((task) => task.taskId);
  ok('tasks/list', listed.includes(id) && listed.includes(created?.task?.taskId), listed);
  const cancelled = await client.experimental.tasks.cancelTask(created.task.taskId);
  ok('tasks/cancel', cancelled.status === 'cancelled', cancelled);
  let end;
  for await (const message of crunching) end = message;
  ok('the cancelled task ends the stream', end?.type === 'error', end);
  await client.close();
}

await run('stdio', new StdioClientTransport({ command: toolsmith, args: ['serve', folder] }));

const port = 20000 + Math.floor(Math.random() * 20000);
const server = spawn(toolsmith, ['serve', folder, '--http', `127.0.0.1:${port}`], { stdio: 'ignore' });
try {
  const url = new URL(`http://127.0.0.1:${port}/mcp`);
  for (let tries = 0; ; tries += 1) {
    try { await fetch(url); break; } catch (error) {
      if (tries > 100) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  await run('http', new StreamableHTTPClientTransport(url));
} finally {
  server.kill();
}
console.log(`TASKS 2025-11-25: ${failed === 0 ? 'all checks passed' : `${failed} failed`}`);
process.exit(failed === 0 ? 0 : 1);
