#!/usr/bin/env node
// The live feed's "exclude" button in real Chromium (playwright-core, Debian's chromium):
//
//   node e2e/exclude.spec.mjs http://127.0.0.1:8080 policy   # a proxy started with --policy
//   node e2e/exclude.spec.mjs http://127.0.0.1:8080 none     # a proxy without a policy file
//
// With a policy file: an attack (`<script>` in query parameter q) is killed (403), its row in
// the feed has an "exclude" button, the proposal names the rule and the field, confirming it
// writes it; the same request then passes and the same payload in another parameter is still
// killed. Without one: no button, and the feed says why. services/tests/dashboard_e2e.rs runs
// both. Exits 0 when every check passed, 1 with the failing step otherwise.

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { chromium } from "playwright-core";

const BASE = (process.argv[2] || "").replace(/\/+$/, "");
const EXPECT = process.argv[3] || "policy";
const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";
const SHOTS = path.resolve(process.env.E2E_SCREENSHOTS || "target/e2e-screenshots");
const WAIT_MS = 15_000;
const SCRIPT = "%3Cscript%3Ex%3C%2Fscript%3E";

let step = "start";
let browser;
let page;
const problems = [];
const watchdog = setTimeout(() => fail(new Error("the run took longer than 120 s")), 120_000);

function log(msg) {
  console.log(`[exclude] ${msg}`);
}

function check(cond, message) {
  if (!cond) throw new Error(message);
}

async function fail(err) {
  clearTimeout(watchdog);
  console.error(`FAIL in step "${step}": ${err && err.stack ? err.stack : err}`);
  if (problems.length) console.error("page problems:\n  " + problems.join("\n  "));
  try {
    if (page) await page.screenshot({ path: path.join(SHOTS, `exclude-${EXPECT}-failure.png`), fullPage: true, timeout: 5000 });
    if (browser) await browser.close();
  } catch (_) {
    /* the browser may be gone */
  }
  process.exit(1);
}

async function until(what, fn) {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const got = await fn().catch(() => null);
    if (got) return got;
    if (Date.now() > deadline) throw new Error(`timed out after ${WAIT_MS} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function status(pathAndQuery) {
  const res = await fetch(BASE + pathAndQuery, { signal: AbortSignal.timeout(WAIT_MS) });
  await res.arrayBuffer();
  return res.status;
}

/** The row whose path cell holds `text` and whose action is `action`, as a locator. */
async function feedRow(text, action) {
  const row = page.locator(`#feed-body tr.a-${action}`, { has: page.locator("td.path", { hasText: text }) }).first();
  await row.waitFor({ state: "visible", timeout: WAIT_MS });
  return row;
}

async function main() {
  fs.mkdirSync(SHOTS, { recursive: true });
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), "rampart-exclude-"));
  browser = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    timeout: 60_000,
    viewport: { width: 1280, height: 900 },
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking"],
  });
  page = browser.pages()[0] || (await browser.newPage());
  page.setDefaultTimeout(WAIT_MS);
  page.on("pageerror", (err) => problems.push(`page error: ${err.message}`));
  page.on("console", (msg) => {
    if (msg.type() === "error") problems.push(`console: ${msg.text()}`);
  });

  step = "open the dashboard";
  await page.goto(`${BASE}/_waf/dashboard`, { waitUntil: "domcontentloaded" });
  await until("the feed to connect", async () => (await page.locator("#conn").getAttribute("data-state")) === "live");

  step = "an attack is killed and shows in the feed";
  const marker = `e2e${Date.now()}`;
  const attack = `/search?m=${marker}&q=${SCRIPT}`;
  check((await status(attack)) === 403, `${attack} was not killed`);
  const row = await feedRow(marker, "active_kill");

  if (EXPECT === "none") {
    step = "no policy file: no button, a note says why";
    check((await row.locator("button.btn-exclude").count()) === 0, "an exclude button without a policy file");
    await page.locator("#exclude-off").waitFor({ state: "visible" });
    check((await page.locator("#exclude-off").textContent()).includes("--policy"), "the note does not name --policy");
    log("without a policy file the feed has no exclude button and says why");
  } else {
    check(await page.locator("#exclude-off").isHidden(), "the no-policy note shows although a policy file is in use");
    step = "exclude: the proposal";
    await row.locator("button.btn-exclude").click();
    const proposal = page.locator("#exclude-proposal");
    await until("the proposal", async () => (await proposal.textContent()).includes("[[scope]]"));
    const text = await proposal.textContent();
    check(text.includes('rule = "script-tag"') && text.includes('field = "query:q"'), `unexpected proposal:\n${text}`);
    check((await status(attack)) === 403, "a proposal changed the policy before it was confirmed");
    log(`proposal shown:\n${text}`);

    step = "confirm";
    await page.locator("#exclude-confirm").click();
    await until("the applied message", async () => (await page.locator("#exclude-status").textContent()).startsWith("Applied"));
    await page.screenshot({ path: path.join(SHOTS, "exclude-applied.png") });

    step = "the same request passes, the payload elsewhere is still killed";
    check((await status(attack)) === 200, "the excluded request is still killed");
    const elsewhere = `/search?m=${marker}&name=${SCRIPT}`;
    check((await status(elsewhere)) === 403, "the same payload in another parameter passed");
    log("confirmed: the request passes; the payload in another parameter is still killed");
  }
  check(problems.length === 0, "the page reported problems");
  clearTimeout(watchdog);
  await browser.close();
  log("PASS");
}

if (!BASE) {
  console.error("usage: node e2e/exclude.spec.mjs <proxy base URL> [policy|none]");
  process.exit(2);
}
main().catch(fail);
