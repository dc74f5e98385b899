#!/usr/bin/env node
// End-to-end test of the Rampart dashboard in real Chromium (Debian's /usr/bin/chromium,
// driven by playwright-core; no test runner, no browser download).
//
//   node e2e/dashboard.spec.mjs http://127.0.0.1:8080      (or RAMPART_URL=...)
//
// Needs a running `rampart up` (proxy + built-in demo upstream) whose admin endpoints this
// machine may use (loopback). It switches the proxy's mode, so do not point it at a proxy
// that guards real traffic. Exits 0 when every check passed, 1 with a message otherwise.
// Screenshots go to target/e2e-screenshots/ (E2E_SCREENSHOTS overrides). services/tests/
// dashboard_e2e.rs runs this under `cargo test`; docs/DASHBOARD.md describes it.

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, "..");
const BASE = (process.argv[2] || process.env.RAMPART_URL || "").replace(/\/+$/, "");
const CHROMIUM = process.env.CHROMIUM_PATH || "/usr/bin/chromium";
const SHOTS = path.resolve(process.env.E2E_SCREENSHOTS || path.join(ROOT, "target", "e2e-screenshots"));
const WAIT_MS = 15_000; // any single wait
const TOTAL_MS = 240_000; // the whole run
// Attack demos the engine is known not to detect (no detector for them): reported, not failed.
const KNOWN_MISSES = new Set(["auth-jwt-none"]);
// What an active kill (connection reset) looks like in Chromium's console: expected only
// while the test sends an attack in active mode.
const KILL_CONSOLE = /net::ERR_(CONNECTION_RESET|EMPTY_RESPONSE|CONNECTION_CLOSED|CONNECTION_ABORTED)/;

if (!BASE || !/^https?:\/\//.test(BASE)) {
  console.error("usage: node e2e/dashboard.spec.mjs <proxy base URL, e.g. http://127.0.0.1:8080>  (or RAMPART_URL)");
  process.exit(2);
}
if (!fs.existsSync(CHROMIUM)) {
  console.error(`FAIL: ${CHROMIUM} not found; run scripts/bootstrap (scripts/bootstrap-browser installs Debian's chromium)`);
  process.exit(1);
}

let step = "start";
const consoleErrors = []; // { step, text }
const pageErrors = []; // { step, text }
let browser; // the persistent browser context
let page;

const watchdog = setTimeout(() => fail(new Error(`the whole run took longer than ${TOTAL_MS / 1000} s`)), TOTAL_MS);

function log(msg) {
  console.log(`[e2e] ${msg}`);
}

async function fail(err) {
  clearTimeout(watchdog);
  console.error(`\nFAIL in step "${step}": ${err && err.stack ? err.stack : err}`);
  if (consoleErrors.length) console.error("console errors:\n  " + consoleErrors.map((e) => `[${e.step}] ${e.text}`).join("\n  "));
  if (pageErrors.length) console.error("page errors:\n  " + pageErrors.map((e) => `[${e.step}] ${e.text}`).join("\n  "));
  try {
    if (page) {
      const file = path.join(SHOTS, "failure.png");
      await page.screenshot({ path: file, fullPage: true, timeout: 5000 });
      console.error(`screenshot of the failure: ${file}`);
    }
  } catch (_) {
    /* the browser may be gone */
  }
  try {
    if (browser) await browser.close();
  } catch (_) {
    /* ignore */
  }
  process.exit(1);
}

function check(cond, message) {
  if (!cond) throw new Error(message);
}

async function until(what, fn, timeout = WAIT_MS, every = 150) {
  const deadline = Date.now() + timeout;
  let last;
  for (;;) {
    try {
      last = await fn();
      if (last) return last;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeout} ms waiting for ${what}${last instanceof Error ? ` (last error: ${last.message})` : ""}`);
    await new Promise((r) => setTimeout(r, every));
  }
}

async function http(pathAndQuery, init = {}) {
  const ctl = AbortSignal.timeout(WAIT_MS);
  return fetch(BASE + pathAndQuery, { ...init, signal: ctl });
}

async function apiJson(pathAndQuery, init) {
  const res = await http(pathAndQuery, init);
  check(res.ok, `${pathAndQuery}: HTTP ${res.status}`);
  return res.json();
}

async function apiMode() {
  return (await apiJson("/api/mode")).mode;
}

async function setModeByApi(mode) {
  await apiJson("/api/mode", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ mode }) });
}

/** Clicks the UI switch and waits until both GET /api/mode and the tile say `want`. */
async function switchModeInUi(want) {
  const before = await apiMode();
  check(before !== want, `the mode is already ${want}`);
  await page.locator("#mode-switch").click({ timeout: WAIT_MS });
  await until(`GET /api/mode = ${want}`, async () => (await apiMode()) === want);
  await until(`the mode tile showing ${want}`, async () => (await page.locator("#mode-value").textContent()) === want.toUpperCase());
  const checked = await page.locator("#mode-switch").getAttribute("aria-checked");
  check(checked === String(want === "active"), `switch aria-checked=${checked} in ${want} mode`);
}

async function openTab(group) {
  await page.locator(`#demo-tabs [role=tab][data-group="${group}"]`).click({ timeout: WAIT_MS });
  await page.locator(`#demo-panels [role=tabpanel][data-group="${group}"]`).waitFor({ state: "visible", timeout: WAIT_MS });
}

async function sendDemo(group, id) {
  await openTab(group);
  const card = page.locator(`.demo[data-id="${id}"]`);
  await card.locator("button.send").click({ timeout: WAIT_MS });
  await until(`an outcome for demo ${id}`, async () => {
    const o = await card.locator(".outcome").getAttribute("data-outcome");
    return o && o !== "idle" && o !== "sending" ? o : null;
  });
  return {
    outcome: await card.locator(".outcome").getAttribute("data-outcome"),
    text: (await card.locator(".outcome").textContent()).trim(),
  };
}

/** Waits for a feed row whose Path cell contains `text` (and, if given, whose action is `action`). */
async function feedRow(text, action) {
  return until(`a feed row with "${text}"${action ? ` and action ${action}` : ""}`, () =>
    page.evaluate(
      ([t, a]) => {
        for (const tr of document.querySelectorAll("#feed-body tr")) {
          const cell = tr.querySelector("td.path");
          if (cell && cell.textContent.includes(t) && (!a || tr.classList.contains("a-" + a))) {
            return { path: cell.textContent, action: tr.querySelector(".badge").textContent, cells: tr.cells.length };
          }
        }
        return null;
      },
      [text, action],
    ),
  );
}

async function shot(name, opts = {}) {
  const file = path.join(SHOTS, name);
  await page.screenshot({ path: file, timeout: WAIT_MS, ...opts });
  log(`screenshot ${path.relative(process.cwd(), file) || file}`);
}

async function main() {
  fs.mkdirSync(SHOTS, { recursive: true });
  fs.rmSync(path.join(SHOTS, "failure.png"), { force: true }); // from an earlier failed run
  log(`proxy ${BASE}, browser ${CHROMIUM}, screenshots in ${SHOTS}`);

  step = "proxy ready";
  await until("/_waf/health to say scorer ok", async () => (await apiJson("/_waf/health")).scorer === "ok", 90_000, 250);
  if ((await apiMode()) !== "shadow") await setModeByApi("shadow");
  const catalogue = await apiJson("/_waf/dashboard/demos.json");
  const allItems = catalogue.groups.flatMap((g) => g.items.map((item) => ({ group: g.name, ...item })));
  check(allItems.length > 0, "demos.json has no items");

  step = "launch chromium";
  const userDataDir = fs.mkdtempSync(path.join(os.tmpdir(), "rampart-e2e-"));
  // A fresh profile each run (playwright passes it as --user-data-dir).
  browser = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    timeout: 60_000,
    viewport: { width: 1280, height: 800 },
    colorScheme: "light",
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
  log(`chromium ${browser.browser() ? browser.browser().version() : "(version unknown)"}, profile ${userDataDir}`);
  page = browser.pages()[0] || (await browser.newPage());
  page.setDefaultTimeout(WAIT_MS);
  // Test instrumentation, injected by the browser (not the page, so the CSP does not apply):
  // keep each EventSource the page opens, and count its messages.
  await page.addInitScript(() => {
    const Native = window.EventSource;
    window.__eventSources = [];
    window.EventSource = class extends Native {
      constructor(...args) {
        super(...args);
        this.__messages = 0;
        this.addEventListener("message", () => {
          this.__messages += 1;
        });
        window.__eventSources.push(this);
      }
    };
  });
  page.on("console", (msg) => {
    if (msg.type() === "error") consoleErrors.push({ step, text: msg.text() });
  });
  page.on("pageerror", (err) => pageErrors.push({ step, text: String(err && err.stack ? err.stack : err) }));

  // 1. The page loads, under its CSP, with no console errors, and fills in.
  step = "page load";
  const resp = await page.goto(`${BASE}/_waf/dashboard`, { waitUntil: "load", timeout: WAIT_MS });
  check(resp && resp.status() === 200, `GET /_waf/dashboard: HTTP ${resp && resp.status()}`);
  const csp = resp.headers()["content-security-policy"] || "";
  check(csp.includes("script-src 'self'") && !csp.includes("unsafe-inline"), `unexpected CSP: ${csp}`);
  await until("the SSE feed to connect", async () => (await page.locator("#conn").getAttribute("data-state")) === "live");
  await until("the tiles to fill in", async () => /^\d/.test((await page.locator("#total-value").textContent()) || ""));
  await until("the demo catalogue to render", async () => (await page.locator(".demo").count()) === allItems.length);
  const detectors = await apiJson("/api/stats").then((s) => Object.keys(s.detectors).length);
  check((await page.locator("#detectors-value").textContent()) === String(detectors), "armed detectors tile differs from /api/stats");
  const tip = await page.locator("#tile-detectors").getAttribute("title");
  check(tip && tip.split("\n").length === detectors, `the detectors tile's hover list has ${tip && tip.split("\n").length} entries, want ${detectors}`);
  check(/^benign requests passed \d+\/\d+$/.test(await page.locator("#fp-hint").textContent()), "FP tile hint format");
  await page.waitForTimeout(500);
  check(consoleErrors.length === 0 && pageErrors.length === 0, "console errors while loading the page");
  log("page loaded: CSP in place, feed live, tiles and demo catalogue rendered, no console errors");

  // 2. A request sent through the proxy (not by the page) appears in the live feed.
  step = "live feed";
  const marker = `e2e-marker-${Date.now().toString(36)}`;
  const res = await http(`/search?q=${marker}`);
  check(res.status === 200, `GET /search?q=${marker} through the proxy: HTTP ${res.status}`);
  const row = await feedRow(marker, "passed");
  check(row.cells === 8, `feed rows have ${row.cells} cells, want 8`);
  check(/^\d+ events?/.test(await page.locator("#feed-count").textContent()), "event count");
  log(`live feed shows ${row.path} (${row.action})`);

  // 3. The UI mode switch changes GET /api/mode, both ways.
  step = "mode switch";
  await switchModeInUi("active");
  await switchModeInUi("shadow");
  log("mode switch: shadow → active → shadow, confirmed by GET /api/mode");

  // 4. A demo attack in shadow mode shows as a shadow kill.
  step = "shadow kill";
  const attackGroup = "SQL Injection";
  const attackId = "sqli-tautology";
  let out = await sendDemo(attackGroup, attackId);
  check(out.outcome === "shadow-kill" && out.text.startsWith("shadow kill"), `shadow mode: demo ${attackId} shows "${out.text}"`);
  await feedRow("/api/login", "shadow_kill");
  log(`shadow mode: ${attackId} → "${out.text}"`);

  // 5. The same attack in active mode shows as killed (connection reset).
  step = "active kill";
  await switchModeInUi("active");
  out = await sendDemo(attackGroup, attackId);
  check(out.outcome === "killed" && out.text === "killed (connection reset)", `active mode: demo ${attackId} shows "${out.text}"`);
  await feedRow("/api/login", "active_kill");
  log(`active mode: ${attackId} → "${out.text}"`);
  await page.waitForTimeout(300); // let the reset's console line arrive in this step
  step = "back to shadow";
  await switchModeInUi("shadow");

  // 6. Every demo, in shadow mode: benign ones pass clean, attacks are shadow kills.
  step = "demo catalogue";
  const results = [];
  for (const group of catalogue.groups) {
    await openTab(group.name);
    const panel = page.locator(`#demo-panels [role=tabpanel][data-group="${group.name}"]`);
    await panel.locator("button.send-group").click();
    await until(`every demo in "${group.name}" to finish`, async () => {
      const states = await panel.locator(".outcome").evaluateAll((els) => els.map((e) => e.dataset.outcome));
      return states.every((s) => s !== "idle" && s !== "sending");
    }, 60_000);
    for (const item of group.items) {
      const o = page.locator(`.demo[data-id="${item.id}"] .outcome`);
      results.push({ group: group.name, id: item.id, kind: item.kind, outcome: await o.getAttribute("data-outcome"), text: (await o.textContent()).trim(), why: await o.getAttribute("title") });
    }
  }
  console.log(results.map((r) => `  ${r.kind.padEnd(6)} ${r.id.padEnd(20)} ${r.text}${r.why ? `  [${r.why}]` : ""}`).join("\n"));
  const wrong = results.filter((r) =>
    r.kind === "benign" ? r.outcome !== "passed" : r.outcome !== "shadow-kill" && !(KNOWN_MISSES.has(r.id) && r.outcome === "missed"),
  );
  const originHint = wrong.some((r) => r.kind === "benign" && /ssrf:loopback-url/.test(r.why || ""))
    ? `\n(hint: ssrf:loopback-url on benign POSTs is Chromium's Origin header, ${new URL(BASE).origin}, being scored as an SSRF URL: a scoring problem, not the page's)`
    : "";
  check(wrong.length === 0, `demo outcomes not as expected:\n  ${wrong.map((r) => `${r.kind} ${r.id}: ${r.text} ${r.why || ""}`).join("\n  ")}${originHint}`);
  const benignCount = results.filter((r) => r.kind === "benign").length;
  check(benignCount >= 3, "the catalogue must hold benign items");
  for (const r of results.filter((r) => KNOWN_MISSES.has(r.id) && r.outcome === "missed")) log(`known miss: ${r.id} (${r.text})`);
  log(`demo catalogue: ${results.length} items, ${benignCount} benign passed, every detected attack a shadow kill`);

  // 7. The false-positive tile stays at 0%, benign requests passed N/N.
  step = "false-positive tile";
  const stats = await until("the server to count the benign demos", async () => {
    const s = await apiJson("/api/stats");
    return s.benign_demo_sent >= benignCount ? s : null;
  });
  check(stats.benign_demo_flagged === 0, `server counts ${stats.benign_demo_flagged} flagged benign demo requests`);
  const n = stats.benign_demo_sent;
  await until(`the FP tile to read 0% and "benign requests passed ${n}/${n}"`, async () =>
    (await page.locator("#fp-value").textContent()) === "0%" &&
    (await page.locator("#fp-hint").textContent()) === `benign requests passed ${n}/${n}`,
  );
  log(`FP tile: 0%, benign requests passed ${n}/${n}`);

  // 8. Attack text in a path is shown as text and never runs.
  step = "xss in path";
  const payloads = [
    { sent: "/search/%3Cimg%20src%3Dx%20onerror%3Dwindow.__xss%3D1%3E", shown: "/search/<img src=x onerror=window.__xss=1>" },
    { sent: "/%3Cscript%3Ewindow.__xss%3D1%3C%2Fscript%3E", shown: "/<script>window.__xss=1</script>" },
    { sent: "/search?q=%3Csvg%2Fonload%3Dwindow.__xss%3D1%3E", shown: "/search?q=<svg/onload=window.__xss=1>" },
  ];
  for (const p of payloads) {
    const r = await http(p.sent);
    check(r.status === 200, `GET ${p.sent} (shadow mode, forwarded): HTTP ${r.status}`);
    await feedRow(p.shown);
  }
  await page.waitForTimeout(500);
  const xss = await page.evaluate(() => ({
    flag: typeof window.__xss,
    elements: document.querySelectorAll("#feed-body img, #feed-body script, #feed-body svg, #demo-panels img, #demo-panels script, #demo-panels svg").length,
  }));
  check(xss.flag === "undefined", "window.__xss was set: a payload ran");
  check(xss.elements === 0, `${xss.elements} element(s) made from payloads in the feed or the demo panel`);
  log("XSS payloads in paths shown as text; none ran");

  // 9. Screenshots: desktop light and dark, phone width light and dark.
  step = "screenshots";
  await openTab("SQL Injection");
  await page.evaluate(() => document.getElementById("feed-wrap").scrollTo(0, 0));
  await shot("dashboard-1280x800.png");
  await page.emulateMedia({ colorScheme: "dark" });
  await page.waitForTimeout(200);
  await shot("dashboard-1280x800-dark.png");
  await page.emulateMedia({ colorScheme: "light" });
  await page.setViewportSize({ width: 375, height: 812 });
  await page.waitForTimeout(300);
  const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  check(overflow <= 0, `at 375 px the page is ${overflow} px wider than the window (horizontal scrolling)`);
  await shot("dashboard-375.png");
  await shot("dashboard-375-full.png", { fullPage: true });
  await page.emulateMedia({ colorScheme: "dark" });
  await page.waitForTimeout(200);
  await shot("dashboard-375-dark.png");
  await page.emulateMedia({ colorScheme: "light" });
  await page.setViewportSize({ width: 1280, height: 800 });

  // 10. A lost stream shows in the header; the replay after the reconnect adds no duplicates.
  // The test ends the page's EventSource itself (see the init script above) and reports the
  // error to the page's handler, as the browser does when it gives up on a stream.
  step = "reconnect";
  const rowsBefore = await page.locator("#feed-body tr").count();
  const countBefore = await page.locator("#feed-count").textContent();
  const sourcesBefore = await page.evaluate(() => window.__eventSources.length);
  await page.evaluate(() => {
    const es = window.__eventSources[window.__eventSources.length - 1];
    es.close();
    es.dispatchEvent(new Event("error"));
  });
  const shown = await page.locator("#conn-text").textContent();
  check(/reconnecting|disconnected/.test(shown), `after losing the stream the header says "${shown}"`);
  await until("the feed to be live again", async () => (await page.locator("#conn").getAttribute("data-state")) === "live", 45_000);
  const replayed = Math.min(200, rowsBefore);
  await until(`the replay of ${replayed} events on the new stream`, () =>
    page.evaluate((n) => window.__eventSources.length > 1 && window.__eventSources[window.__eventSources.length - 1].__messages >= n, replayed),
  );
  await page.waitForTimeout(300);
  const sourcesAfter = await page.evaluate(() => window.__eventSources.length);
  check(sourcesAfter === sourcesBefore + 1, `${sourcesAfter - sourcesBefore} new EventSource(s), want 1`);
  const rowsAfter = await page.locator("#feed-body tr").count();
  const countAfter = await page.locator("#feed-count").textContent();
  check(rowsAfter === rowsBefore && countAfter === countBefore, `after a reconnect: ${rowsAfter} rows / "${countAfter}", before: ${rowsBefore} / "${countBefore}"`);
  const marker2 = `e2e-after-reconnect-${Date.now().toString(36)}`;
  check((await http(`/search?q=${marker2}`)).status === 200, "a request after the reconnect");
  await feedRow(marker2, "passed");
  log(`reconnect: "${shown}", then live again; ${replayed} replayed events dropped as repeats, new events shown`);

  // 11. A reload keeps the figures (kept server-side) and the feed (replayed by /api/events).
  step = "reload";
  await page.reload({ waitUntil: "load", timeout: WAIT_MS });
  await until("the replayed feed after a reload", async () => (await page.locator("#feed-body tr").count()) > 0);
  await until("the 24 h kill count after a reload", async () => Number((await page.locator("#kills-value").textContent()).replace(/\D/g, "")) > 0);
  await feedRow(marker);
  log("reload: tiles and replayed feed back");

  // No console error or page error at all, except the reset of the killed request.
  step = "console";
  await page.waitForTimeout(300);
  const unexpected = consoleErrors.filter((e) => !(e.step === "active kill" && KILL_CONSOLE.test(e.text)));
  check(pageErrors.length === 0, "page errors");
  check(unexpected.length === 0, "console errors");

  await browser.close();
  clearTimeout(watchdog);
  fs.rmSync(userDataDir, { recursive: true, force: true });
  log("PASS");
}

main().catch(fail);
