// An upstream whose prompt and resource ask the client something while they are answered:
// the prompt `introduce` asks for the user's name by elicitation, the resource
// `asking://haiku` samples a line from the client's model. Built on the official TypeScript
// SDK (installed in .ci/upstreams), over stdio.
//   NODE_PATH=.ci/upstreams/node_modules node server.cjs
const { McpServer } = require("@modelcontextprotocol/sdk/server/mcp.js");
const { StdioServerTransport } = require("@modelcontextprotocol/sdk/server/stdio.js");

const server = new McpServer({ name: "asking", version: "1.0.0" });

server.registerPrompt(
  "introduce",
  { description: "Introduces the user, by the name they give when asked." },
  async () => {
    const answer = await server.server.elicitInput({
      message: "What is your name?",
      requestedSchema: {
        type: "object",
        properties: { name: { type: "string", description: "Your name" } },
        required: ["name"],
      },
    });
    const name = answer.action === "accept" ? answer.content.name : "nobody";
    return {
      messages: [{ role: "user", content: { type: "text", text: `Please greet ${name}.` } }],
    };
  },
);

server.registerResource(
  "haiku",
  "asking://haiku",
  { mimeType: "text/plain", description: "A line the client's model writes." },
  async (uri) => {
    const sampled = await server.server.createMessage({
      messages: [{ role: "user", content: { type: "text", text: "Write a line about autumn." } }],
      maxTokens: 40,
    });
    return { contents: [{ uri: uri.href, mimeType: "text/plain", text: `sampled: ${sampled.content.text}` }] };
  },
);

server.connect(new StdioServerTransport());
