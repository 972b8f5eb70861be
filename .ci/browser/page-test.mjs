// The page of `toolsmith serve --http` in a real browser: Debian's
// chromium, headless, driven by puppeteer-core. Run by crates/toolsmith/tests/it/page_browser.rs
// against a server it started on a fixture folder; exits non-zero, saying why, when the
// page breaks.
//
//   node page-test.mjs URL SCREENSHOT [--token TOKEN]
//
// Without --token: every tool of /api/info is on the page, a description's <script> shows
// as text and does not run, the try-it form of `scale` (a number, an enum and an array)
// calls it and shows the result, `refuse` shows its isError result in red. With --token
// (a server started with --auth-token): the page asks for the token, a wrong one shows
// the 401, the right one shows the tools and a call works. SCREENSHOT is written either way.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import puppeteer from "puppeteer-core";

const [url, screenshot, ...rest] = process.argv.slice(2);
const token = rest[0] === "--token" ? rest[1] : undefined;
if (!url || !screenshot) {
  console.error("usage: node page-test.mjs URL SCREENSHOT [--token TOKEN]");
  process.exit(2);
}
const chromium = process.env.CHROMIUM || "/usr/bin/chromium";
const WAIT = 20_000;

// The whole run is bounded: a hung browser fails the test instead of holding it.
const deadline = setTimeout(() => fail("still running after 120 s"), 120_000);
deadline.unref();

let browser;
const profile = mkdtempSync(join(tmpdir(), "toolsmith-page-"));

function fail(message) {
  console.error(`page test failed: ${message}`);
  process.exitCode = 1;
  throw new Error(message);
}

function check(condition, message) {
  if (!condition) fail(message);
}

async function resultOf(page, tool, fill) {
  const form = `form.try-form[data-tool="${tool}"]`;
  await page.$eval(`${form}`, (node) => { node.closest("details").open = true; });
  await fill(form);
  await page.click(`${form} button[type=submit]`);
  await page.waitForFunction(
    (selector) => {
      const box = document.querySelector(`${selector} .result`);
      return box && /\b(ok|error)\b/.test(box.className) && !box.textContent.includes("Calling…");
    },
    { timeout: WAIT },
    form,
  );
  return page.$eval(`${form} .result`, (box) => ({
    ok: box.classList.contains("ok"),
    text: box.textContent,
    color: getComputedStyle(box).color,
  }));
}

async function callScale(page) {
  const result = await resultOf(page, "scale", async (form) => {
    await page.type(`${form} [data-param=values]`, "[1, 2.5]");
    await page.type(`${form} [data-param=factor]`, "2");
    await page.select(`${form} [data-param=unit]`, JSON.stringify("in"));
  });
  check(result.ok, `scale's result is not shown as a success: ${result.text}`);
  check(result.text.includes('"total": 7'), `scale's structured result is missing: ${result.text}`);
  check(result.text.includes('"unit": "in"'), `scale did not get the enum's value: ${result.text}`);
  return result;
}

async function open() {
  const page = await browser.newPage();
  await page.setViewport({ width: 1100, height: 900 });
  page.on("pageerror", (error) => fail(`the page's script threw: ${error.message}`));
  const response = await page.goto(url, { waitUntil: "domcontentloaded", timeout: WAIT });
  return { page, response };
}

async function withoutToken() {
  const info = await (await fetch(new URL("/api/info", url))).json();
  const { page, response } = await open();
  check(response.status() === 200, `GET / answered ${response.status()}`);
  const shown = await page.$$eval("article.tool", (tools) => tools.map((tool) => tool.dataset.tool));
  const expected = info.tools.map((tool) => tool.name);
  check(
    JSON.stringify(shown) === JSON.stringify(expected),
    `the page shows the tools ${JSON.stringify(shown)}, /api/info ${JSON.stringify(expected)}`,
  );
  check(shown.length > 0, "no tools on the page");
  const shady = await page.$eval("#tool-shady .prose", (node) => node.textContent);
  check(shady.includes("<script>window.pwned = true</script>"), `the description's markup is not shown as text: ${shady}`);
  check(!(await page.evaluate(() => window.pwned)), "a script in a tool description ran");
  check(await page.$("#tool-shady .badge.discoverable"), "the discoverable tool is not marked");
  const described = await page.$eval("#tool-scale .prose", (node) => node.textContent);
  check(described.includes("served over HTTP"), `the HTTP override is not applied: ${described}`);

  await callScale(page);
  const refused = await resultOf(page, "refuse", async (form) => {
    await page.type(`${form} [data-param=reason]`, "nope");
  });
  check(!refused.ok, `refuse's isError result is not shown as an error: ${refused.text}`);
  check(refused.text.includes("refused: nope"), `refuse's message is missing: ${refused.text}`);
  const [red, green] = refused.color.match(/\d+/g).map(Number);
  check(red > 150 && green < 110, `an isError result is not red: ${refused.color}`);

  await page.screenshot({ path: screenshot, fullPage: true });
  console.log(`page screenshot: ${screenshot}`);
}

async function withToken() {
  const { page, response } = await open();
  check(response.status() === 401, `GET / without the token answered ${response.status()}`);
  check(await page.$("#token-form input[type=password]"), "the page does not ask for the token");
  check((await page.$$("article.tool")).length === 0, "the page shows tools without the token");

  await page.type("#token", "not-the-token");
  await page.click("#token-form button[type=submit]");
  await page.waitForFunction(
    () => document.getElementById("token-status")?.textContent.includes("401"),
    { timeout: WAIT },
  );
  const refusal = await page.$eval("#token-status", (node) => node.textContent);
  check(/401 Unauthorized/.test(refusal), `a wrong token is not shown as a 401: ${refusal}`);
  const refused = screenshot.replace(/\.png$/, "-401.png");
  await page.screenshot({ path: refused });
  console.log(`page screenshot (a wrong token): ${refused}`);

  await page.$eval("#token", (input) => { input.value = ""; });
  await page.type("#token", token);
  await page.click("#token-form button[type=submit]");
  await page.waitForSelector("article.tool", { timeout: WAIT });
  const html = await page.content();
  check(!html.includes(token), "the page holds the token");
  await callScale(page);
  await page.screenshot({ path: screenshot, fullPage: true });
  console.log(`page screenshot (with --auth-token): ${screenshot}`);
}

try {
  browser = await puppeteer.launch({
    executablePath: chromium,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      `--user-data-dir=${profile}`,
    ],
    timeout: WAIT,
  });
  await (token === undefined ? withoutToken() : withToken());
} catch (error) {
  if (!process.exitCode) console.error(`page test failed: ${error.stack || error}`);
  process.exitCode = 1;
} finally {
  await browser?.close().catch(() => {});
  rmSync(profile, { recursive: true, force: true });
}
