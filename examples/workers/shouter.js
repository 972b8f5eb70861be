// The Node worker of this folder: `shout.toml` names `node shouter.js` with `worker = true`.
const { tool, serve } = require("./toolsmith_worker");

tool(function shout({ text, times = 1 }) {
  return Array(times).fill(text.toUpperCase()).join(" ");
});

serve();
