// {{name}}: repeats a text, from a warm worker.
//
// Toolsmith starts this program once and keeps it running (`worker = true` in {{name}}.toml):
// each call arrives as one JSON line on stdin and toolsmith_worker.js writes the answer to
// stdout. Load models and open connections at the top; every call reuses them. console.log
// goes to stderr once serve() runs.
const { tool, serve } = require("./toolsmith_worker");

tool("{{name}}", ({ text, times = 1 }) => Array(times).fill(text).join(" "));

serve();
