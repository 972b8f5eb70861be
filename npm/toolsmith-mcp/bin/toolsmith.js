#!/usr/bin/env node
// The `toolsmith` command of the npm package `toolsmith-mcp`: runs the binary from the
// platform package npm installed beside it (`toolsmith-mcp-<os>-<cpu>`, an optional
// dependency limited by `os` and `cpu`, as esbuild and biome ship theirs), with this
// process's arguments, standard streams and exit status. docs/install-toolsmith.md.
"use strict";

const { spawnSync } = require("child_process");

const PLATFORMS = {
  "linux-x64": "toolsmith-mcp-linux-x64",
  "linux-arm64": "toolsmith-mcp-linux-arm64",
  "darwin-arm64": "toolsmith-mcp-darwin-arm64",
  "darwin-x64": "toolsmith-mcp-darwin-x64",
  "win32-x64": "toolsmith-mcp-win32-x64",
};

function binaryPath() {
  const key = `${process.platform}-${process.arch}`;
  const pkg = PLATFORMS[key];
  if (!pkg) {
    fail(
      `toolsmith-mcp has no binary for ${key}`,
      `supported: ${Object.keys(PLATFORMS).join(", ")}; build from source with ` +
        "`cargo install --locked --git https://github.com/toolsmith-dev/toolsmith toolsmith`",
    );
  }
  const exe = process.platform === "win32" ? "toolsmith.exe" : "toolsmith";
  try {
    return require.resolve(`${pkg}/bin/${exe}`);
  } catch {
    fail(
      `the package \`${pkg}\` is not installed, so there is no \`toolsmith\` binary to run`,
      "npm leaves optional dependencies out with `--no-optional` or `--omit=optional`; " +
        "install again without it, e.g. `npm install toolsmith-mcp`",
    );
  }
}

function fail(message, hint) {
  process.stderr.write(`error: ${message}\n  hint: ${hint}\n`);
  process.exit(2);
}

const result = spawnSync(binaryPath(), process.argv.slice(2), {
  stdio: "inherit",
  windowsHide: true,
});
if (result.error) {
  fail(`cannot run \`toolsmith\`: ${result.error.message}`, "reinstall `toolsmith-mcp`");
}
if (result.signal) {
  // Ended by a signal: end the same way, so the caller sees what happened.
  process.kill(process.pid, result.signal);
}
process.exit(result.status === null ? 2 : result.status);
