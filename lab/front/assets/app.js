// The lab's front page: everything goes through the page's own JSON API
// (docs/front-page.md), which curl can use as well.
"use strict";

const $ = (sel) => document.querySelector(sel);
const el = (tag, attrs = {}, ...kids) => {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "text") e.textContent = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (v !== undefined && v !== null && v !== false) e.setAttribute(k, v === true ? "" : v);
  }
  for (const k of kids) if (k !== null && k !== undefined) e.append(k);
  return e;
};

async function api(method, path, body) {
  const opts = { method, headers: {} };
  if (body !== undefined) {
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  const resp = await fetch(path, opts);
  let data = null;
  try { data = await resp.json(); } catch (e) { data = null; }
  return { ok: resp.ok, status: resp.status, data };
}

// refusal is the message of an error answer: the page's {"error"}, or a
// service's problem (detail and each knob's reason).
function refusal(r) {
  const d = r.data || {};
  if (d.error) return d.error;
  let msg = d.detail || d.title || ("HTTP " + r.status);
  if (Array.isArray(d.errors)) msg += "\n" + d.errors.map((e) => `${e.field}: ${e.detail}`).join("\n");
  return msg;
}

const state = { config: null, catalog: [], kind: "all", current: null, shown: null, charts: {}, lastSeries: 0 };

function say(msg) { $("#status").textContent = msg; }

function fmtTime(iso) { return iso ? new Date(iso).toLocaleTimeString() : ""; }
function fmtLeft(ms) {
  if (ms <= 0) return "0 s";
  const s = Math.round(ms / 1000);
  return s >= 60 ? `${Math.floor(s / 60)} min ${s % 60} s` : `${s} s`;
}
function label(r) { return r.number ? `${r.number} ${r.scenario}` : r.scenario; }

// ---- catalog ----
function renderKinds() {
  const box = $("#kinds");
  for (const k of ["all", ...state.config.kinds]) {
    box.append(el("button", { type: "button", "data-kind": k, "aria-pressed": String(k === state.kind), text: k,
      onclick: () => { state.kind = k; for (const b of box.querySelectorAll("button")) b.setAttribute("aria-pressed", String(b.dataset.kind === k)); renderCatalog(); } }));
  }
}

function knobList(env) {
  const names = Object.keys(env || {}).sort();
  return names.length ? names.map((k) => `${k}=${env[k]}`).join(", ") : "none";
}

function renderCatalog() {
  const list = $("#scenarios");
  list.replaceChildren();
  const running = !!state.current;
  for (const s of state.catalog) {
    if (state.kind !== "all" && s.kind !== state.kind) continue;
    const phases = el("ul");
    for (const p of s.phases) phases.append(el("li", { text: `${p.name}: ${p.load}` + (p.knobs ? ` (knobs ${knobList(p.knobs)})` : "") }));
    const expects = el("ul");
    for (const e of s.expect) expects.append(el("li", { text: `${e.target || "every service"}: ${e.says}` + (e.slo ? ` [${e.slo}]` : "") }));
    const inlab = s.in_lab ? "yes" + (s.why ? `, ${s.why}` : "") : `no: ${s.why}`;
    const secs = $("#quick").checked ? s.quick_seconds : s.seconds;
    const btn = el("button", { type: "button", class: "run", "data-name": s.name, disabled: !s.in_lab || running,
      text: s.in_lab ? `Run ${s.name}` : "Not in the lab", onclick: () => startRun(s.name) });
    list.append(el("li", { class: "scenario", id: `scenario-${s.name}`, "data-name": s.name, "data-kind": s.kind },
      el("h3", { text: `${s.number} ${s.name}` }),
      el("div", { class: "kind", text: `${s.kind} · ${s.reproduces}` }),
      el("p", { text: s.question }),
      el("dl", {},
        el("dt", { text: "Knobs" }), el("dd", { text: knobList(s.changes.knobs) }),
        el("dt", { text: "Load" }), el("dd", {}, phases),
        el("dt", { text: "Database" }), el("dd", { text: s.changes.db.length ? s.changes.db.join("; ") : "nothing" }),
        el("dt", { text: "Expects" }), el("dd", {}, expects),
        el("dt", { text: "Watch" }), el("dd", { text: s.panels.length ? s.panels.join(", ") : "none: it runs in-process" }),
        el("dt", { text: "In the lab" }), el("dd", { class: s.in_lab ? "" : "inlab-no", text: inlab }),
        el("dt", { text: "Takes" }), el("dd", { text: secs ? `about ${fmtLeft(secs * 1000)} of load` : "as long as its requests take" })),
      btn));
  }
}

async function startRun(name) {
  const r = await api("POST", "/api/runs", { scenario: name, quick: $("#quick").checked, by: $("#by").value });
  if (!r.ok) { say(`Run refused: ${refusal(r)}`); alertRun(refusal(r)); return; }
  state.shown = r.data.id;
  showRun(r.data);
  say(`Run ${label(r.data)} started.`);
  location.hash = "#run";
  poll();
}

function alertRun(msg) {
  const e = $("#run-error");
  e.textContent = msg;
  e.hidden = false;
  $("#run-view").hidden = false;
  $("#run-none").hidden = true;
}

// ---- the run ----
const stateWords = {
  running: "running", stopping: "stopping: putting the knobs back", stopped: "stopped: knobs put back",
  done: "finished", failed: "failed: knobs put back",
};

function showRun(run) {
  $("#run-none").hidden = true;
  $("#run-view").hidden = false;
  $("#run-title").textContent = `${label(run)}: ${run.title}` + (run.quick ? " (quick)" : "");
  $("#run-state").textContent = stateWords[run.state] || run.state;
  $("#run-state").dataset.state = run.state;
  const live = run.state === "running" || run.state === "stopping";
  if (run.phase) {
    $("#run-phase").textContent = `${run.phase.index + 1} of ${run.phase.of}: ${run.phase.name}`;
    $("#run-phase").dataset.phase = run.phase.name;
  } else {
    $("#run-phase").textContent = live ? "between phases (changing knobs)" : "none";
    delete $("#run-phase").dataset.phase;
  }
  const left = [];
  if (run.phase && run.phase.ends_at) left.push(`phase ${fmtLeft(new Date(run.phase.ends_at) - Date.now())}`);
  if (live) left.push(`run about ${fmtLeft(new Date(run.ends_at) - Date.now())}`);
  $("#run-left").textContent = left.length ? left.join(", ") : "none";
  $("#run-started").textContent = `${fmtTime(run.started_at)} by ${run.by}` + (run.ended_at ? `; ended ${fmtTime(run.ended_at)}` : "");
  $("#stop").hidden = !live;
  $("#stop").disabled = run.state !== "running";
  const board = $("#run-board");
  board.hidden = !run.board;
  if (run.board) board.href = run.board;
  const err = $("#run-error");
  err.hidden = !run.error;
  err.textContent = run.error || "";
  $("#run-log").textContent = (run.log || []).join("\n");
  showResult(run);
}

function showResult(run) {
  const box = $("#result");
  const ended = run.state !== "running" && run.state !== "stopping";
  box.hidden = !ended;
  if (!ended) return;
  const body = $("#verdicts tbody");
  body.replaceChildren();
  const words = { MET: "met", MISSED: "missed", READ: "read the table: no figure to check", "NO RUN": "nothing measured", ERROR: "error", "NOT JUDGED": "not judged at quick size" };
  for (const v of run.verdicts || []) {
    const measured = el("td", {});
    for (const m of v.measured || []) measured.append(el("div", { text: m }));
    if (!(v.measured || []).length) measured.textContent = "—";
    body.append(el("tr", {},
      el("td", { class: v.mark === "MET" ? "met" : v.mark === "MISSED" ? "missed" : "", text: (v.mark === "MET" ? "✓ " : v.mark === "MISSED" ? "✗ " : "") + (words[v.mark] || v.mark) }),
      el("td", { text: v.target + (v.phase ? `, ${v.phase}` : "") }),
      el("td", {}, el("div", { text: v.says }), el("code", { text: v.slo || "" })),
      measured));
  }
  if (!(run.verdicts || []).length) body.append(el("tr", {}, el("td", { colspan: "4", text: "No verdict: the run ended before anything was measured." })));
  $("#conclusion").textContent = run.conclusion || "";
  $("#fix").textContent = run.fix || "";
  drawVerdict(run);
  const links = $("#report-links");
  links.hidden = !run.report;
  if (run.report) { $("#report-html").href = run.report.html; $("#report-json").href = run.report.json; }
}

// ---- the verdict picture ----
// The server draws it (the report's own chart, as an ECharts option): per
// model and phase, committed per second as a multiple of the bound on a
// log scale, success p99 against its target, answers by status, misses in
// red. Drawn once per run shown, not at every poll.
function drawVerdict(run) {
  const div = $("#verdict-chart");
  const d = run.picture_drawing;
  const key = d ? `${run.id}/${run.state}` : "";
  if (state.verdictChart && state.verdictKey === key) return;
  if (state.verdictChart) { state.verdictChart.dispose(); state.verdictChart = null; }
  state.verdictKey = key;
  div.hidden = !d || !window.echarts;
  if (div.hidden) return;
  div.style.height = `${d.height}px`;
  state.verdictChart = echarts.init(div);
  state.verdictChart.setOption(d.option);
}

// ---- live charts ----
// The services in the catalog's order, not the alphabet's.
const serviceOrder = ["unbounded", "semaphore", "pipeline"];
function ordered(names) {
  const rank = (n) => (serviceOrder.indexOf(n) < 0 ? serviceOrder.length : serviceOrder.indexOf(n));
  return [...names].sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}
function clock(ms) { return new Date(ms).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit", hour12: false }); }

function chartsFor(services, charts) {
  const box = $("#charts");
  const key = services.join(",");
  if (box.dataset.key === key) return;
  for (const c of Object.values(state.charts)) c.dispose();
  state.charts = {};
  box.replaceChildren();
  box.dataset.key = key;
  for (const svc of services) {
    const grid = el("div", { class: "grid" });
    box.append(el("div", { class: "service" }, el("h4", { text: svc }), grid));
    for (const c of charts) {
      const div = el("div", { class: "chart", role: "img", "aria-label": `${svc}: ${c.title}` });
      grid.append(div);
      if (window.echarts) state.charts[`${svc}/${c.id}`] = echarts.init(div);
    }
  }
}

// boundLine is the run's bound as a step line: each phase's bound, at the size that runs, from
// its start to the next phase's (or to `to`); a phase without one breaks the line. Null when no
// phase states a bound.
function boundLine(run, to) {
  const starts = run.phase_starts || [];
  if (!starts.some((p) => p.bound_rps)) return null;
  const points = [];
  starts.forEach((p, i) => {
    const from = new Date(p.at).getTime();
    const end = i + 1 < starts.length ? new Date(starts[i + 1].at).getTime() : (run.ended_at ? new Date(run.ended_at).getTime() : to);
    const v = p.bound_rps || null;
    points.push([from, v], [end, v], [end, null]);
  });
  return { name: "the run's bound", points, dashed: true };
}

async function refreshSeries(run) {
  const r = await api("GET", `/api/runs/${run.id}/series`);
  const note = $("#charts-note");
  if (!r.ok) {
    note.hidden = false;
    note.textContent = `No live charts: ${refusal(r)}. The page reads them from Prometheus (lab front -prometheus URL); docs/front-page.md says how to run one outside Docker. The verdict and the report do not need it.`;
    chartsFor([], []);
    return;
  }
  const s = r.data;
  note.hidden = !(s.errors || []).length;
  if (!note.hidden) note.textContent = `Some charts are missing: ${s.errors.join("; ")}`;
  const services = ordered(Object.keys(s.services));
  chartsFor(services, s.charts);
  // A line at the run's start, and one at each phase's (its knobs applied), named along the
  // line inside the plot: the run's at the bottom, the phases' at the top, clear of the axes'
  // labels and of each other when a phase starts a moment after the run.
  const marks = [{ xAxis: new Date(run.started_at).getTime(), label: { formatter: "run", position: "insideStartTop" } },
    ...(run.phase_starts || []).map((p) => ({ xAxis: new Date(p.at).getTime(), label: { formatter: p.name, position: "insideEndTop" } }))];
  for (const svc of services) {
    for (const c of s.charts) {
      const chart = state.charts[`${svc}/${c.id}`];
      if (!chart) continue;
      const lines = [...(s.services[svc][c.id] || [])];
      if (c.id === "orders") {
        const b = boundLine(run, new Date(s.to).getTime());
        if (b) lines.push(b);
      }
      chart.setOption({
        animation: false,
        title: { text: c.title, textStyle: { fontSize: 12 } },
        tooltip: { trigger: "axis" },
        legend: { top: 18, textStyle: { fontSize: 10 } },
        grid: { left: 48, right: 8, top: 48, bottom: 24 },
        xAxis: { type: "time", min: new Date(s.from).getTime(), max: new Date(s.to).getTime(), splitNumber: 3,
          axisLabel: { formatter: (v) => clock(v), hideOverlap: true, fontSize: 10 } },
        yAxis: { type: "value", name: c.unit, nameTextStyle: { fontSize: 10 } },
        series: lines.map((l, i) => ({ name: l.name, type: "line", showSymbol: false, data: l.points,
          lineStyle: l.dashed ? { type: "dashed" } : undefined,
          markLine: i === 0 ? { symbol: "none", silent: true, label: { fontSize: 9 }, lineStyle: { color: "#888" }, data: marks } : undefined })),
      }, true);
    }
  }
}

// ---- polling ----
async function poll() {
  const r = await api("GET", "/api/runs");
  if (!r.ok) { say("The page's server does not answer."); return; }
  const cur = r.data.current;
  const wasRunning = !!state.current;
  state.current = cur;
  if (cur) {
    state.shown = cur.id;
    showRun(cur);
    say(`Run ${label(cur)} is ${stateWords[cur.state] || cur.state}` + (cur.phase ? `, phase ${cur.phase.name}.` : "."));
    if (Date.now() - state.lastSeries > 3000) { state.lastSeries = Date.now(); refreshSeries(cur); }
  } else {
    // No run in progress: the one shown stays; a page opened afresh shows
    // the last run, its verdict on top, until another starts.
    const opened = state.shown === null;
    if (opened && r.data.runs.length) state.shown = r.data.runs[0].id;
    const done = r.data.runs.find((x) => x.id === state.shown);
    if (done) {
      const full = await api("GET", `/api/runs/${done.id}`);
      if (full.ok) { showRun(full.data); if (wasRunning || opened) refreshSeries(full.data); }
      if (wasRunning) say(`Run ${label(done)} ${stateWords[done.state] || done.state}.`);
      else if (opened) say(`No run in progress; the last one, ${label(done)}, ${stateWords[done.state] || done.state}.`);
    } else {
      say("No run in progress.");
    }
  }
  if (wasRunning !== !!cur) { renderCatalog(); if (!cur) loadKnobs(); }
  const hist = $("#history");
  hist.replaceChildren(...r.data.runs.map((x) => el("li", {},
    el("a", { href: "#run", text: `${label(x)}${x.quick ? " (quick)" : ""}, ${stateWords[x.state] || x.state}, ${fmtTime(x.started_at)} by ${x.by}`,
      onclick: async () => { state.shown = x.id; const f = await api("GET", `/api/runs/${x.id}`); if (f.ok) { showRun(f.data); refreshSeries(f.data); } } }))));
}

// ---- knobs ----
async function loadKnobs() {
  const r = await api("GET", "/api/knobs");
  const box = $("#knob-forms");
  if (!r.ok) { box.replaceChildren(el("p", { class: "muted", text: refusal(r) })); return; }
  box.replaceChildren();
  for (const svc of state.config.services) {
    const ans = r.data[svc] || {};
    const sec = el("div", { class: "knob-service", id: `knobs-${svc}` }, el("h3", { text: svc }));
    box.append(sec);
    if (ans.error) { sec.append(el("p", { class: "error", text: ans.error })); continue; }
    const tbody = el("tbody");
    const names = Object.keys(ans.knobs).filter((k) => ans.knobs[k].live).sort();
    for (const k of names) {
      const v = ans.knobs[k];
      const id = `knob-${svc}-${k}`;
      tbody.append(el("tr", {},
        el("th", { scope: "row" }, el("label", { for: id, text: k })),
        el("td", {}, el("input", { id, name: k, value: v.value, "data-value": v.value, "aria-describedby": `${id}-range` })),
        el("td", { id: `${id}-range`, text: `${v.range || "any"}${v.unit ? " " + v.unit : ""}; default ${v.default}` }),
        el("td", { class: "meaning", text: v.meaning })));
    }
    const msg = el("p", { class: "knob-msg", id: `knob-msg-${svc}`, role: "alert" });
    const form = el("form", { "data-service": svc },
      el("table", {}, el("thead", {}, el("tr", {}, el("th", { scope: "col", text: "knob" }), el("th", { scope: "col", text: "value" }),
        el("th", { scope: "col", text: "accepts, default" }), el("th", { scope: "col", class: "meaning", text: "meaning" }))), tbody),
      el("p", {}, el("button", { type: "submit", text: `Apply changes to ${svc}` })), msg);
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const change = {};
      for (const inp of form.querySelectorAll("input")) if (inp.value !== inp.dataset.value) change[inp.name] = inp.value;
      if (!Object.keys(change).length) { msg.textContent = "Nothing changed."; return; }
      const p = await api("PATCH", `/api/knobs/${svc}`, change);
      if (p.ok) {
        msg.className = "knob-msg";
        msg.textContent = `Applied: ${Object.entries(change).map(([k, v]) => `${k}=${v}`).join(", ")}.`;
        for (const inp of form.querySelectorAll("input")) if (inp.name in change) inp.dataset.value = inp.value;
      } else {
        msg.className = "knob-msg error";
        msg.textContent = `Refused, nothing changed: ${refusal(p)}`;
      }
    });
    sec.append(form);
  }
}

async function resetKnobs() {
  const m = $("#reset-msg");
  m.textContent = "Resetting…";
  const r = await api("POST", "/api/knobs/reset");
  if (!r.ok) { m.textContent = `Not reset: ${refusal(r)}`; return; }
  const parts = Object.entries(r.data.changed).map(([svc, d]) => `${svc}: ${Object.keys(d).length ? Object.entries(d).map(([k, v]) => `${k}=${v}`).join(", ") : "already at defaults"}`);
  m.textContent = `Reset. ${parts.join("; ")}`;
  loadKnobs();
}

// ---- background ----
async function loadBackground() {
  const box = $("#bg-rates");
  if (!state.config.background) { box.textContent = "No background load known to the page."; $("#bg-form button").hidden = true; return; }
  const r = await api("GET", "/api/background");
  if (!r.ok) { box.textContent = `The background load does not answer: ${refusal(r)}`; return; }
  box.replaceChildren(...Object.keys(r.data).sort().map((svc) => el("label", {}, `${svc} `,
    el("input", { type: "number", min: "0", max: "10000", step: "any", name: svc, value: String(r.data[svc]) }), " requests/s")));
}

async function applyBackground(ev) {
  ev.preventDefault();
  const set = {};
  for (const inp of $("#bg-rates").querySelectorAll("input")) set[inp.name] = Number(inp.value);
  const r = await api("PUT", "/api/background", set);
  $("#bg-msg").textContent = r.ok ? "Applied." : `Refused: ${refusal(r)}`;
  loadBackground();
}

async function main() {
  const c = await api("GET", "/api/config");
  const k = await api("GET", "/api/catalog");
  if (!c.ok || !k.ok) { say("The page's server does not answer."); return; }
  state.config = c.data;
  state.catalog = k.data;
  if (c.data.grafana) $("#grafana-link").href = c.data.board || c.data.grafana;
  renderKinds();
  renderCatalog();
  $("#quick").addEventListener("change", renderCatalog);
  $("#stop").addEventListener("click", async () => {
    $("#stop").disabled = true;
    const r = await api("POST", "/api/runs/current/stop");
    say(r.ok ? "Stopped: the knobs are being put back." : `Stop refused: ${refusal(r)}`);
    poll();
  });
  $("#reset").addEventListener("click", resetKnobs);
  $("#bg-form").addEventListener("submit", applyBackground);
  await poll();
  loadKnobs();
  loadBackground();
  // One poll at a time: on a busy machine an answer can take longer than
  // the interval, and overlapping polls would queue every other request.
  let polling = false;
  setInterval(async () => {
    if (state.current) showRun(state.current);
    if (polling) return;
    polling = true;
    try { await poll(); } finally { polling = false; }
  }, 1000);
}

main();
