// Rampart dashboard: the demo panel (spec 1.8). Each catalogue item (demos.json) is a real
// request sent through the proxy, marked with X-Rampart-Demo so the server can count the
// benign ones for the false-positive tile. Same rule as app.js: data reaches the page through
// textContent and attributes only, never as HTML.
"use strict";

(() => {
  const DEMO_TIMEOUT_MS = 15000;
  /** Helpers shared with app.js: { $, el, api, readable, state, onSent }. */
  let ctx = null;
  const $ = (id) => ctx.$(id);
  const el = (...args) => ctx.el(...args);
  const readable = (raw) => ctx.readable(raw);
  const api = (...args) => ctx.api(...args);


  function requestText(item, kind) {
    const lines = [`${item.method} ${item.path} HTTP/1.1`];
    for (const [name, value] of Object.entries(item.headers || {})) lines.push(`${name}: ${value}`);
    lines.push(`X-Rampart-Demo: ${kind}`);
    if (item.body) lines.push("", item.body);
    return lines.join("\n");
  }

  function setOutcome(card, outcome, text, detail) {
    const box = card.querySelector(".outcome");
    box.dataset.outcome = outcome;
    box.textContent = text;
    box.title = detail || "";
    card.dataset.outcome = outcome;
  }

  async function sendDemo(item, card) {
    const kind = item.kind === "benign" ? "benign" : "attack";
    const button = card.querySelector("button.send");
    button.disabled = true;
    setOutcome(card, "sending", "sending…");
    const headers = { ...(item.headers || {}), "X-Rampart-Demo": kind };
    const ctl = new AbortController();
    const timer = setTimeout(() => ctl.abort(), DEMO_TIMEOUT_MS);
    try {
      const res = await fetch(item.path, {
        method: item.method,
        headers,
        body: item.body && item.method !== "GET" && item.method !== "HEAD" ? item.body : undefined,
        cache: "no-store",
        // Demo traffic is anonymous: the admin cookie is not sent to the upstream.
        credentials: "omit",
        redirect: "manual",
        referrerPolicy: "no-referrer",
        signal: ctl.signal,
      });
      let echo = null;
      try {
        echo = await res.json();
      } catch (_) {
        echo = null;
      }
      const waf = (echo && typeof echo === "object" && echo.waf) || {};
      const score = waf["x-waf-score"];
      const scoreText = score !== undefined ? ` · score ${Number(score).toFixed(2)}` : "";
      if (res.status === 403 && (res.headers.get("x-waf-killed") === "true" || (echo && echo.error === "forbidden"))) {
        setOutcome(card, "blocked", "blocked (403)", "active mode with WAF_KILL_RESPONSE=forbidden");
      } else if (res.type === "opaqueredirect") {
        setOutcome(card, "passed", "passed (redirect)", "the upstream answered with a redirect");
      } else if (waf["x-waf-would-have-killed"] === "true") {
        setOutcome(card, "shadow-kill", `shadow kill${scoreText}`, `${waf["x-waf-reason"] || ""} — forwarded because the proxy is in shadow mode`);
      } else if (waf["x-waf-error"]) {
        setOutcome(card, "error", `passed unscored (${waf["x-waf-error"]})`, "a scoring failure: forwarded under fail-open");
      } else if (res.ok) {
        const missed = kind === "attack";
        setOutcome(card, missed ? "missed" : "passed", missed ? `passed — not detected${scoreText}` : `passed${scoreText}`, waf["x-waf-reason"] || "");
      } else {
        setOutcome(card, "error", `HTTP ${res.status}`, (echo && (echo.detail || echo.error)) || res.statusText);
      }
    } catch (err) {
      if (ctl.signal.aborted) {
        setOutcome(card, "error", "timed out", `no answer within ${DEMO_TIMEOUT_MS / 1000} s`);
      } else {
        setOutcome(card, "killed", "killed (connection reset)", "active mode: the proxy reset the connection before any byte of a response");
      }
    } finally {
      clearTimeout(timer);
      button.disabled = false;
      ctx.onSent();
    }
  }

  async function sendAll(items) {
    for (const { item, card } of items) await sendDemo(item, card);
  }

  function demoCard(item) {
    const kind = item.kind === "benign" ? "benign" : "attack";
    const card = el("article", `demo demo-${kind}`, null, { "data-id": item.id, "data-kind": kind });
    const head = el("div", "demo-head");
    head.append(el("span", `kind kind-${kind}`, kind), el("h3", null, item.title));
    const send = el("button", "btn send", "Send", { type: "button" });
    send.setAttribute("aria-label", `Send: ${item.title}`);
    head.append(send);
    card.append(head);
    if (item.description) card.append(el("p", "desc", item.description));
    const target = String(item.path);
    const decoded = readable(target);
    if (decoded !== target) card.append(el("p", "decoded mono", `decoded: ${item.method} ${decoded}`));
    const contentType = Object.entries(item.headers || {}).find(([k]) => k.toLowerCase() === "content-type");
    if (item.body && contentType && /x-www-form-urlencoded/i.test(contentType[1])) {
      const body = readable(String(item.body).replace(/\+/g, " "));
      if (body !== item.body) card.append(el("p", "decoded mono", `decoded body: ${body}`));
    }
    card.append(el("pre", "request mono", requestText(item, kind)));
    const outcome = el("div", "outcome", "not sent", { "data-outcome": "idle", "aria-live": "polite" });
    card.append(outcome);
    send.addEventListener("click", () => sendDemo(item, card));
    return card;
  }

  function selectTab(index) {
    const tabs = $("demo-tabs").querySelectorAll("[role=tab]");
    const panels = $("demo-panels").querySelectorAll("[role=tabpanel]");
    tabs.forEach((t, i) => {
      t.setAttribute("aria-selected", i === index ? "true" : "false");
      t.tabIndex = i === index ? 0 : -1;
    });
    panels.forEach((p, i) => {
      p.hidden = i !== index;
    });
  }

  async function loadDemos() {
    let catalogue;
    try {
      catalogue = await api("/_waf/dashboard/demos.json");
    } catch (err) {
      $("demo-loading").textContent = `Could not load the demo catalogue: ${err.message}`;
      return;
    }
    const groups = Array.isArray(catalogue.groups) ? catalogue.groups : [];
    const tabs = $("demo-tabs");
    const panels = $("demo-panels");
    panels.replaceChildren();
    const benign = [];
    groups.forEach((group, gi) => {
      const items = Array.isArray(group.items) ? group.items : [];
      const slug = String(group.name).toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "");
      const tab = el("button", "tab", null, {
        type: "button",
        role: "tab",
        id: `tab-${slug}`,
        "aria-controls": `panel-${slug}`,
        "data-group": group.name,
      });
      tab.append(el("span", null, group.name), el("span", "tab-count", items.length));
      tab.addEventListener("click", () => selectTab(gi));
      tab.addEventListener("keydown", (e) => {
        if (e.key !== "ArrowRight" && e.key !== "ArrowLeft") return;
        const next = (gi + (e.key === "ArrowRight" ? 1 : groups.length - 1)) % groups.length;
        selectTab(next);
        tabs.querySelectorAll("[role=tab]")[next].focus();
      });
      tabs.append(tab);

      const panel = el("div", "demo-panel", null, { role: "tabpanel", id: `panel-${slug}`, "aria-labelledby": `tab-${slug}`, "data-group": group.name });
      const cards = items.map((item) => ({ item, card: demoCard(item) }));
      const bar = el("div", "panel-bar");
      const attacks = cards.filter((c) => c.item.kind !== "benign").length;
      bar.append(el("span", "muted", `${attacks} attack${attacks === 1 ? "" : "s"}, ${cards.length - attacks} benign`));
      const all = el("button", "btn btn-small send-group", `Send all ${cards.length}`, { type: "button" });
      all.addEventListener("click", async () => {
        all.disabled = true;
        await sendAll(cards);
        all.disabled = false;
      });
      bar.append(all);
      panel.append(bar, ...cards.map((c) => c.card));
      panels.append(panel);
      benign.push(...cards.filter((c) => c.item.kind === "benign"));
    });
    selectTab(0);
    const benignButton = $("demo-send-benign");
    benignButton.textContent = `Send all benign (${benign.length})`;
    benignButton.disabled = benign.length === 0;
    benignButton.addEventListener("click", async () => {
      benignButton.disabled = true;
      await sendAll(benign);
      benignButton.disabled = false;
    });
    ctx.state.demos = groups;
  }

  window.RampartDemos = {
    load(shared) {
      ctx = shared;
      return loadDemos();
    },
  };
})();
