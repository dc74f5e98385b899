// Rampart live dashboard (spec 1.8). Plain JavaScript, no framework, no build step.
//
// Security rule for this file: the feed and the demo panel show attack payloads. Every piece
// of data reaches the page through textContent, an attribute set with setAttribute/title, or
// the canvas — never innerHTML, insertAdjacentHTML, document.write or eval. The page is served
// under a CSP with script-src 'self' and no inline script, so a payload could not run anyway;
// this keeps it that way by construction.
"use strict";

(() => {
  const MAX_ROWS = 500; // feed rows kept (newest first)
  const SEEN_KEYS = 2000; // event keys remembered to drop the replay after a reconnect
  const STATS_EVERY_MS = 4000; // tile refresh period
  const STATS_DEBOUNCE_MS = 400; // tile refresh after a burst of events
  const ACTION_LABEL = { passed: "passed", shadow_kill: "shadow kill", active_kill: "active kill", error: "error" };

  const $ = (id) => document.getElementById(id);

  /** Creates an element: `cls` is a class string, `text` goes in as textContent, `attrs` via setAttribute. */
  function el(tag, cls, text, attrs) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (attrs) for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
    return node;
  }

  const state = {
    mode: null,
    threshold: 0.5,
    seen: new Set(),
    seenOrder: [],
    count: 0,
    pending: [],
    flushTimer: 0,
    statsTimer: 0,
    statsInFlight: false,
    series: [],
    es: null,
    retryMs: 1000,
    demos: [],
  };

  // ---------------------------------------------------------------- formatting

  const nf = new Intl.NumberFormat();

  /** Percent-decodes for reading, and makes control and bidi characters visible. */
  function readable(raw) {
    if (!raw) return "";
    let text;
    try {
      text = decodeURIComponent(raw);
    } catch (_) {
      // A stray `%` or an invalid UTF-8 sequence: decode the ASCII escapes only.
      text = raw.replace(/%([0-7][0-9a-f])/gi, (_, hex) => String.fromCharCode(parseInt(hex, 16)));
    }
    return text.replace(/[\u0000-\u001f\u007f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g, (c) => {
      if (c === "\n") return "\\n";
      if (c === "\r") return "\\r";
      if (c === "\t") return "\\t";
      const code = c.charCodeAt(0);
      return code < 0x100 ? "\\x" + code.toString(16).padStart(2, "0") : "\\u" + code.toString(16).padStart(4, "0");
    });
  }

  function fmtTime(ts) {
    const d = new Date(ts);
    if (Number.isNaN(d.getTime())) return String(ts || "");
    return d.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit", hour12: false });
  }

  function fmtMs(ms) {
    if (ms === null || ms === undefined || !Number.isFinite(ms)) return "—";
    if (ms < 1) return ms.toFixed(2) + " ms";
    if (ms < 100) return ms.toFixed(1) + " ms";
    return Math.round(ms) + " ms";
  }

  function fmtDuration(s) {
    if (!Number.isFinite(s)) return "—";
    const d = Math.floor(s / 86400), h = Math.floor((s % 86400) / 3600), m = Math.floor((s % 3600) / 60);
    if (d) return `${d}d ${h}h`;
    if (h) return `${h}h ${m}m`;
    if (m) return `${m}m`;
    return `${Math.floor(s)}s`;
  }

  function fmtPct(rate) {
    const pct = (Number(rate) || 0) * 100;
    if (pct === 0) return "0%";
    if (pct < 10) return pct.toFixed(1) + "%";
    return Math.round(pct) + "%";
  }

  // ---------------------------------------------------------------- API

  async function api(path, options) {
    const res = await fetch(path, { cache: "no-store", credentials: "same-origin", ...options });
    if (!res.ok) {
      const err = new Error(`${path}: HTTP ${res.status}`);
      err.status = res.status;
      throw err;
    }
    return res.json();
  }

  function showBanner(text) {
    const banner = $("banner");
    if (text) {
      banner.textContent = text;
      banner.hidden = false;
    } else {
      banner.hidden = true;
    }
  }

  function forbiddenHint(err) {
    return err && err.status === 403
      ? "Not allowed: the dashboard and its APIs are admin-only. Open it from the proxy's host (loopback), or once with ?token=<WAF_ADMIN_TOKEN>."
      : null;
  }

  // ---------------------------------------------------------------- mode

  function renderMode(mode) {
    state.mode = mode;
    const tile = $("tile-mode");
    tile.dataset.mode = mode || "unknown";
    $("mode-value").textContent = mode ? mode.toUpperCase() : "—";
    const sw = $("mode-switch");
    sw.setAttribute("aria-checked", mode === "active" ? "true" : "false");
    sw.disabled = !mode;
    $("mode-hint").textContent =
      mode === "active"
        ? "blocking: kills are enforced"
        : mode === "shadow"
          ? "observing: kills only logged"
          : "—";
  }

  async function toggleMode() {
    const sw = $("mode-switch");
    const next = state.mode === "active" ? "shadow" : "active";
    sw.disabled = true;
    try {
      await api("/api/mode", {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ mode: next }),
      });
      const now = await api("/api/mode");
      renderMode(now.mode);
      showBanner(null);
      scheduleStats(0);
    } catch (err) {
      showBanner(forbiddenHint(err) || `Could not change the mode: ${err.message}`);
      sw.disabled = false;
    }
  }

  // ---------------------------------------------------------------- tiles

  function renderStats(s) {
    state.threshold = Number(s.threshold);
    $("threshold").textContent = `threshold ${Number.isFinite(state.threshold) ? state.threshold.toFixed(2) : "—"}`;
    renderMode(s.mode);

    const detectors = Object.entries(s.detectors || {}).sort(([a], [b]) => a.localeCompare(b));
    const models = detectors.filter(([, b]) => b === "model").length;
    $("detectors-value").textContent = String(detectors.length);
    $("detectors-hint").textContent = `${models} model · ${detectors.length - models} pattern`;
    const tile = $("tile-detectors");
    tile.title = detectors.map(([slug, backing]) => `${slug} (${backing})`).join("\n");
    const list = $("detectors-list");
    list.replaceChildren(
      ...detectors.map(([slug, backing]) => {
        const li = el("li", null, slug);
        li.append(el("span", `backing backing-${backing === "model" ? "model" : "regex"}`, backing));
        return li;
      }),
    );

    $("kills-value").textContent = nf.format(s.kills_24h);
    $("ttk-value").textContent = s.avg_kill_latency_ms === null ? "—" : fmtMs(Number(s.avg_kill_latency_ms));

    const sent = Number(s.benign_demo_sent) || 0;
    const flagged = Number(s.benign_demo_flagged) || 0;
    $("fp-value").textContent = fmtPct(s.false_positive_rate);
    $("fp-hint").textContent = `benign requests passed ${sent - flagged}/${sent}`;
    $("tile-fp").dataset.level = flagged > 0 ? "bad" : "ok";

    $("total-value").textContent = nf.format(s.total_requests);
    $("total-hint").textContent = `since proxy start · up ${fmtDuration(Number(s.uptime_s))}`;
    $("tile-total").title = `proxy started ${s.started_at}; ${nf.format(s.requests_24h)} requests in the last 24 h`;

    state.series = Array.isArray(s.series) ? s.series : [];
    drawChart();
  }

  async function refreshStats() {
    if (state.statsInFlight) return;
    state.statsInFlight = true;
    try {
      renderStats(await api("/api/stats"));
      showBanner(null);
    } catch (err) {
      showBanner(forbiddenHint(err) || `Cannot read /api/stats: ${err.message}`);
    } finally {
      state.statsInFlight = false;
    }
  }

  function scheduleStats(delay) {
    clearTimeout(state.statsTimer);
    state.statsTimer = setTimeout(refreshStats, delay);
  }

  // ---------------------------------------------------------------- chart

  function cssVar(name) {
    return getComputedStyle(document.documentElement).getPropertyValue(name).trim();
  }

  function drawChart(hoverIndex) {
    const canvas = $("chart");
    const box = $("chart-box");
    const dpr = window.devicePixelRatio || 1;
    const w = Math.max(120, box.clientWidth);
    const h = Math.max(60, box.clientHeight);
    if (canvas.width !== Math.round(w * dpr) || canvas.height !== Math.round(h * dpr)) {
      canvas.width = Math.round(w * dpr);
      canvas.height = Math.round(h * dpr);
    }
    const ctx = canvas.getContext("2d");
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, w, h);

    const series = state.series;
    const padL = 34, padR = 6, padT = 6, padB = 16;
    const plotW = w - padL - padR, plotH = h - padT - padB;
    const max = Math.max(1, ...series.map((p) => p.requests));
    const top = niceCeil(max);
    const font = cssVar("--font-ui") || "sans-serif";
    ctx.font = `10px ${font}`;
    ctx.fillStyle = cssVar("--muted");
    ctx.strokeStyle = cssVar("--grid");
    ctx.lineWidth = 1;
    ctx.textBaseline = "middle";
    ctx.textAlign = "right";
    for (const frac of [0, 0.5, 1]) {
      const y = Math.round(padT + plotH * (1 - frac)) + 0.5;
      ctx.beginPath();
      ctx.moveTo(padL, y);
      ctx.lineTo(w - padR, y);
      ctx.stroke();
      ctx.fillText(nf.format(Math.round(top * frac)), padL - 4, y);
    }
    ctx.textBaseline = "alphabetic";
    ctx.textAlign = "left";
    ctx.fillText("−60 min", padL, h - 3);
    ctx.textAlign = "center";
    ctx.fillText("−30", padL + plotW / 2, h - 3);
    ctx.textAlign = "right";
    ctx.fillText("now", w - padR, h - 3);

    if (!series.length) return;
    const slot = plotW / series.length;
    const barW = Math.max(1, slot - (slot > 4 ? 1.5 : 0.5));
    const reqColor = cssVar("--chart-requests");
    const killColor = cssVar("--chart-kills");
    series.forEach((p, i) => {
      const x = padL + i * slot;
      if (i === hoverIndex) {
        ctx.fillStyle = cssVar("--hover");
        ctx.fillRect(x, padT, slot, plotH);
      }
      const rh = (p.requests / top) * plotH;
      if (p.requests > 0) {
        ctx.fillStyle = reqColor;
        ctx.fillRect(x, padT + plotH - rh, barW, Math.max(1, rh));
      }
      if (p.kills > 0) {
        const kh = (p.kills / top) * plotH;
        ctx.fillStyle = killColor;
        ctx.fillRect(x, padT + plotH - kh, barW, Math.max(1.5, kh));
      }
    });
  }

  /** A round axis top whose half is a whole number too. */
  function niceCeil(n) {
    if (n <= 4) return 4;
    const mag = 10 ** Math.floor(Math.log10(n));
    for (const step of [1, 2, 4, 6, 8, 10]) if (n <= step * mag) return step * mag;
    return 10 * mag;
  }

  function chartHover(evt) {
    const series = state.series;
    if (!series.length) return;
    const rect = $("chart").getBoundingClientRect();
    const padL = 34, padR = 6;
    const x = evt.clientX - rect.left - padL;
    const i = Math.floor((x / (rect.width - padL - padR)) * series.length);
    if (i < 0 || i >= series.length) return chartLeave();
    const p = series[i];
    const at = new Date(p.t * 1000).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", hour12: false });
    $("chart-readout").textContent = `${at} · ${nf.format(p.requests)} requests · ${nf.format(p.kills)} kills`;
    drawChart(i);
  }

  function chartLeave() {
    $("chart-readout").textContent = "";
    drawChart();
  }

  // ---------------------------------------------------------------- live feed

  function eventKey(ev) {
    return [ev.timestamp, ev.method, ev.path, ev.query || "", ev.source_ip, ev.action, ev.score, ev.latency_ms].join("\u0001");
  }

  function remember(key) {
    state.seen.add(key);
    state.seenOrder.push(key);
    if (state.seenOrder.length > SEEN_KEYS) state.seen.delete(state.seenOrder.shift());
  }

  function onEvent(ev) {
    if (!ev || typeof ev !== "object") return;
    const key = eventKey(ev);
    if (state.seen.has(key)) return; // the replay after a reconnect
    remember(key);
    state.count += 1;
    state.pending.push(ev);
    if (!state.flushTimer) state.flushTimer = setTimeout(flushFeed, 60);
    scheduleStats(STATS_DEBOUNCE_MS);
  }

  function row(ev) {
    const action = Object.prototype.hasOwnProperty.call(ACTION_LABEL, ev.action) ? ev.action : "error";
    const tr = el("tr", `a-${action}`);
    const tsCell = el("td", "mono c-time", fmtTime(ev.timestamp));
    tsCell.title = String(ev.timestamp);
    const ip = el("td", "mono c-ip", ev.source_ip);
    ip.title = String(ev.source_ip);
    const method = el("td", "mono c-method", ev.method);
    const raw = String(ev.path || "") + (ev.query ? "?" + ev.query : "");
    const path = el("td", "mono path c-path", readable(String(ev.path || "")) + (ev.query ? "?" + readable(String(ev.query)) : ""));
    path.title = raw;
    const score = Number(ev.score);
    const scoreCell = el("td", "mono num score c-score", Number.isFinite(score) ? score.toFixed(2) : "—");
    if (score > state.threshold) scoreCell.classList.add("over");
    // A clean request's near-zero winner is noise: name a detector only when it said something.
    const named = ev.detector && (action !== "passed" || score >= 0.1);
    const detector = el("td", "detector c-detector", named ? ev.detector : "—");
    if (ev.reason) detector.title = String(ev.reason);
    const actionCell = el("td", "c-action");
    actionCell.append(el("span", `badge badge-${action}`, ev.action === action ? ACTION_LABEL[action] : String(ev.action)));
    if (ev.reason) actionCell.title = `${ev.reason} (${ev.mode} mode)`;
    const exclude = window.RampartExclude.button(ev);
    if (exclude) actionCell.append(" ", exclude);
    const latency = el("td", "mono num c-latency", fmtMs(Number(ev.latency_ms)));
    tr.append(tsCell, ip, method, path, scoreCell, detector, actionCell, latency);
    return tr;
  }

  function flushFeed() {
    state.flushTimer = 0;
    const batch = state.pending;
    state.pending = [];
    if (!batch.length) return;
    const body = $("feed-body");
    const frag = document.createDocumentFragment();
    // `batch` is oldest first; the table is newest first.
    for (let i = batch.length - 1; i >= Math.max(0, batch.length - MAX_ROWS); i--) frag.append(row(batch[i]));
    body.prepend(frag);
    while (body.rows.length > MAX_ROWS) body.lastElementChild.remove();
    updateFeedCount();
  }

  function updateFeedCount() {
    const shown = $("feed-body").rows.length;
    const total = state.count;
    $("feed-count").textContent = `${nf.format(total)} event${total === 1 ? "" : "s"}` + (shown < total ? ` · showing ${nf.format(shown)}` : "");
    $("feed-empty").hidden = shown > 0;
  }

  function setConn(stateName, text) {
    const conn = $("conn");
    conn.dataset.state = stateName;
    $("conn-text").textContent = text;
  }

  function connect() {
    if (state.es) state.es.close();
    const es = new EventSource("/api/events");
    state.es = es;
    setConn("connecting", "connecting…");
    es.onopen = () => {
      state.retryMs = 1000;
      setConn("live", "live");
      scheduleStats(0);
    };
    es.onmessage = (msg) => {
      let ev;
      try {
        ev = JSON.parse(msg.data);
      } catch (_) {
        return;
      }
      onEvent(ev);
    };
    es.onerror = () => {
      if (es.readyState === EventSource.CLOSED) {
        // The browser gave up (a non-200 answer, e.g. 403): retry ourselves, backing off.
        es.close();
        const wait = state.retryMs;
        state.retryMs = Math.min(30000, state.retryMs * 2);
        setConn("down", `disconnected · retrying in ${Math.round(wait / 1000)} s`);
        setTimeout(connect, wait);
      } else {
        setConn("reconnecting", "reconnecting…");
      }
    };
  }

  // ---------------------------------------------------------------- start

  function start() {
    $("mode-switch").addEventListener("click", toggleMode);
    $("kills-only").addEventListener("change", (e) => {
      $("feed").classList.toggle("kills-only", e.target.checked);
    });
    $("feed-clear").addEventListener("click", () => {
      // The keys stay remembered: a reconnect's replay does not bring the rows back.
      $("feed-body").replaceChildren();
      state.count = 0;
      updateFeedCount();
    });
    const canvas = $("chart");
    canvas.addEventListener("mousemove", chartHover);
    canvas.addEventListener("mouseleave", chartLeave);
    if (window.ResizeObserver) new ResizeObserver(() => drawChart()).observe($("chart-box"));
    else window.addEventListener("resize", () => drawChart());
    const scheme = window.matchMedia("(prefers-color-scheme: dark)");
    if (scheme.addEventListener) scheme.addEventListener("change", () => drawChart());

    updateFeedCount();
    drawChart();
    refreshStats();
    setInterval(() => {
      if (!document.hidden) refreshStats();
    }, STATS_EVERY_MS);
    // The feed connects once the page knows whether exclusions can be written: the replayed
    // rows get their "exclude" button too.
    window.RampartExclude.init({ $, el, api }).finally(connect);
    // The demo panel lives in demo.js (loaded first): it gets the few helpers it shares.
    window.RampartDemos.load({ $, el, api, readable, state, onSent: () => scheduleStats(STATS_DEBOUNCE_MS) });
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
