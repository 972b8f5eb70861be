// Drives a gateway with the official TypeScript SDK (@modelcontextprotocol/sdk, installed in
// .ci/upstreams): the same steps as py_client.py, printed as one JSON document.
//   NODE_PATH=.ci/upstreams/node_modules node ts_client.cjs --stdio "CMD ARGS..." | --url URL
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StdioClientTransport } = require("@modelcontextprotocol/sdk/client/stdio.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");
const { CreateMessageRequestSchema } = require("@modelcontextprotocol/sdk/types.js");

async function main() {
  const [flag, value] = process.argv.slice(2);
  let transport;
  if (flag === "--stdio") {
    const argv = value.split(" ");
    transport = new StdioClientTransport({ command: argv[0], args: argv.slice(1), stderr: "inherit" });
  } else {
    transport = new StreamableHTTPClientTransport(new URL(value));
  }
  const client = new Client({ name: "ts-gateway-test", version: "1.0.0" }, { capabilities: { sampling: {} } });
  client.setRequestHandler(CreateMessageRequestSchema, async () => ({
    role: "assistant",
    content: { type: "text", text: "sampled by the typescript client" },
    model: "test-model",
  }));
  await client.connect(transport);
  const options = { timeout: 60000 };
  const out = {};
  out.tools = (await client.listTools()).tools.map((tool) => tool.name);
  out.echo = await client.callTool({ name: "everything_echo", arguments: { message: "from typescript" } });
  out.prompts = (await client.listPrompts()).prompts.map((prompt) => prompt.name);
  out.args_prompt = await client.getPrompt({ name: "everything_args-prompt", arguments: { city: "Oslo", state: "Viken" } });
  out.own_prompt = await client.getPrompt({ name: "own", arguments: {} });
  out.resources = (await client.listResources()).resources.map((resource) => resource.uri);
  out.templates = (await client.listResourceTemplates()).resourceTemplates.map((template) => template.uriTemplate);
  out.static = await client.readResource({ uri: "demo://resource/static/document/features.md" });
  out.dynamic = await client.readResource({ uri: "demo://resource/dynamic/text/7" });
  // Progress as it comes off the wire, up to the call's result. The SDK's own `onprogress`
  // can miss the last step: it runs notification handlers in a microtask but drops a
  // request's progress handler as soon as the response is read, so a progress notification
  // that arrives in the same read as the response (two lines in one pipe or SSE chunk, which
  // happens under load) is "for an unknown token". What the gateway owes the client is every
  // step, in order, before the result; that is what is recorded here.
  const progress = [];
  let watching = true;
  const deliver = transport.onmessage;
  transport.onmessage = (message, extra) => {
    if (watching && message.method === "notifications/progress") {
      progress.push(message.params.progress);
    } else if (watching && message.id !== undefined && message.method === undefined) {
      watching = false;
    }
    deliver(message, extra);
  };
  out.long = await client.callTool(
    { name: "everything_trigger-long-running-operation", arguments: { duration: 1, steps: 3 } },
    undefined,
    { ...options, onprogress: () => {} },
  );
  watching = false;
  out.progress = progress;
  out.sampling = await client.callTool({ name: "everything_trigger-sampling-request", arguments: { prompt: "hi" } }, undefined, options);
  process.stdout.write(JSON.stringify(out) + "\n");
  await client.close();
}

main().then(
  () => process.exit(0),
  (error) => {
    process.stderr.write(String(error && error.stack ? error.stack : error) + "\n");
    process.exit(1);
  },
);
