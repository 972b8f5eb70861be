#!/usr/bin/env node
// Stages the npm packages of a release, ready for `npm pack` or `npm publish`: the launcher
// `toolsmith-mcp` (from npm/toolsmith-mcp/) and one `toolsmith-mcp-<os>-<cpu>` per binary
// given (from the templates in npm/platform/), all at one version. docs/install-toolsmith.md.
//
//   node npm/stage.mjs --version 0.2.0 --out target/npm \
//     --binary linux-x64=target/x86_64-unknown-linux-gnu/dist/toolsmith \
//     --binary win32-x64=target/x86_64-pc-windows-msvc/dist/toolsmith.exe
//
// The launcher always names every platform as an optional dependency; npm installs the one
// whose `os` and `cpu` match the machine.
import { chmodSync, copyFileSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
export const PLATFORMS = ["linux-x64", "linux-arm64", "darwin-arm64", "darwin-x64", "win32-x64"];

function usage(message) {
  process.stderr.write(
    `error: ${message}\n  hint: node npm/stage.mjs --version X.Y.Z --out DIR [--binary OS-CPU=PATH ...]` +
      ` (OS-CPU one of ${PLATFORMS.join(", ")})\n`,
  );
  process.exit(2);
}

const args = process.argv.slice(2);
let version;
let out;
const binaries = new Map();
for (let i = 0; i < args.length; i += 2) {
  const [flag, value] = [args[i], args[i + 1]];
  if (value === undefined) usage(`\`${flag}\` needs a value`);
  if (flag === "--version") version = value;
  else if (flag === "--out") out = value;
  else if (flag === "--binary") {
    const at = value.indexOf("=");
    const platform = value.slice(0, at);
    if (at < 0 || !PLATFORMS.includes(platform)) usage(`\`--binary ${value}\` names no platform`);
    binaries.set(platform, value.slice(at + 1));
  } else usage(`unknown argument \`${flag}\``);
}
if (!version || !/^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$/.test(version)) usage("`--version` needs a semver version");
if (!out) usage("`--out` is missing");

const readJson = (path) => JSON.parse(readFileSync(path, "utf8"));
const writeJson = (path, value) => writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`);

// The launcher.
const launcherDir = join(out, "toolsmith-mcp");
rmSync(launcherDir, { recursive: true, force: true });
mkdirSync(join(launcherDir, "bin"), { recursive: true });
const launcher = readJson(join(here, "toolsmith-mcp", "package.json"));
launcher.version = version;
launcher.optionalDependencies = Object.fromEntries(
  PLATFORMS.map((platform) => [`toolsmith-mcp-${platform}`, version]),
);
writeJson(join(launcherDir, "package.json"), launcher);
copyFileSync(join(here, "toolsmith-mcp", "bin", "toolsmith.js"), join(launcherDir, "bin", "toolsmith.js"));
chmodSync(join(launcherDir, "bin", "toolsmith.js"), 0o755);
copyFileSync(join(here, "toolsmith-mcp", "README.md"), join(launcherDir, "README.md"));
const staged = [launcherDir];

// One package per binary.
const template = readFileSync(join(here, "platform", "package.json"), "utf8");
const readme = readFileSync(join(here, "platform", "README.md"), "utf8");
for (const [platform, binary] of binaries) {
  const [os, cpu] = platform.split("-");
  const dir = join(out, `toolsmith-mcp-${platform}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, "bin"), { recursive: true });
  const pkg = JSON.parse(template.replaceAll("OS", os).replaceAll("CPU", cpu));
  pkg.version = version;
  writeJson(join(dir, "package.json"), pkg);
  writeFileSync(join(dir, "README.md"), readme.replaceAll("OS", os).replaceAll("CPU", cpu));
  const exe = os === "win32" ? "toolsmith.exe" : "toolsmith";
  copyFileSync(binary, join(dir, "bin", exe));
  chmodSync(join(dir, "bin", exe), 0o755);
  staged.push(dir);
}
process.stdout.write(`${staged.join("\n")}\n`);
