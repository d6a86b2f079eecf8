// "What the lab sees" (GET /api/diagnosis, lab diagnose's reading) and
// mystery mode (POST /api/mysteries, GET /api/mysteries/{id}, answer):
// docs/front-page.md. Uses app.js's helpers ($, el, api, refusal, state).
"use strict";

const sees = { mystery: null, shownReveal: "" };

function num(v) { return v === undefined || v === null ? "?" : String(Number(v.toPrecision(3))); }
function ago(iso) {
  const s = Math.max(0, Math.round((Date.now() - new Date(iso)) / 1000));
  return s >= 60 ? `${Math.floor(s / 60)} min ${s % 60} s` : `${s} s`;
}
function evidenceList(ev) {
  return el("ul", { class: "evidence", "aria-label": "evidence" }, ...(ev || []).map((e) =>
    el("li", {}, el("b", { text: e.signal }), e.value === undefined ? (e.unit ? " = ? " + e.unit : "") : ` = ${num(e.value)} ${e.unit}`)));
}
// The scenario's page in the repository, and its card in the catalog.
function pageLinks(pitfall, page) {
  return el("span", {}, "Read ", el("code", { text: page }), " (", el("a", { href: `#scenario-${pitfall}`, text: "its card in the catalog" }), ")");
}
function finding(f, extra) {
  return el("div", { class: "finding", "data-pitfall": f.pitfall, "data-service": f.service },
    el("h3", { text: `${f.pitfall} on ${f.service}` }),
    f.title ? el("div", { class: "muted", text: f.title }) : null,
    el("div", { text: `firing since ${fmtTime(f.since)} (${ago(f.since)})` + (extra || "") }),
    f.summary ? el("p", { text: f.summary }) : null,
    evidenceList(f.evidence),
    el("p", {}, pageLinks(f.pitfall, f.page), f.board ? el("span", {}, " · ", el("a", { href: f.board, target: "_blank", rel: "noopener", text: "the board's What is firing panel" })) : null));
}

// ---- What the lab sees ----
async function refreshSees() {
  const box = $("#sees-body");
  const r = await api("GET", "/api/diagnosis");
  if (r.status === 409) {
    box.dataset.state = "held";
    box.replaceChildren(el("p", { text: "Held back while a mystery waits for your answer: what the lab sees would name it. Answer below." }));
    return;
  }
  if (!r.ok) {
    box.dataset.state = "error";
    box.replaceChildren(el("p", { class: "error", text: `The lab cannot ask Prometheus: ${refusal(r)}.` }),
      el("p", { class: "muted", text: "So it cannot say which pitfall it sees, if any. Start the lab's Prometheus, or point lab front -prometheus URL at one that loads prometheus/rules (docs/diagnose.md)." }));
    return;
  }
  const d = r.data;
  const parts = [];
  if (!d.findings.length) {
    box.dataset.state = "calm";
    parts.push(el("p", { class: "calm", text: `No pitfall: none of the ${d.rules} pitfall rules that ${d.prometheus} evaluates fires (asked ${fmtTime(d.asked_at)}).` }));
  } else {
    box.dataset.state = "firing";
    parts.push(...d.findings.map((f) => finding(f)));
  }
  for (const p of d.pending) parts.push(el("p", { class: "pending", text: `Pending: ${p.pitfall} on ${p.service} since ${fmtTime(p.since)}, not named until it has held as long as its rule asks.` }));
  for (const b of d.broken) parts.push(el("p", { class: "error", text: `A pitfall rule cannot evaluate, so it cannot fire: ${b}` }));
  box.replaceChildren(...parts);
}

// ---- mystery mode ----
async function startMystery() {
  const r = await api("POST", "/api/mysteries", { quick: $("#quick").checked, by: $("#by").value });
  if (!r.ok) { $("#mystery-msg").textContent = `Not started: ${refusal(r)}`; return; }
  $("#mystery-msg").textContent = "Started. Watch the run below and the board, then answer.";
  sees.shownReveal = "";
  showMystery(r.data);
  state.shown = r.data.id;
  poll();
  refreshSees();
  loadKnobs();
}

function showMystery(m) {
  sees.mystery = m.id;
  $("#mystery-view").hidden = false;
  const run = m.run;
  const live = run.state === "running" || run.state === "stopping";
  $("#mystery-state").textContent = `Mystery ${m.id}${run.quick ? " (quick)" : ""}, started ${fmtTime(run.started_at)} by ${run.by}: ` +
    (live ? `running, about ${fmtLeft(new Date(run.ends_at) - Date.now())} left.` : `${stateWords[run.state] || run.state}.`) +
    (m.reveal ? "" : " Which pitfall is it?");
  const box = $("#mystery-choices");
  if (box.dataset.id !== String(m.id)) {
    box.dataset.id = String(m.id);
    box.replaceChildren(...m.choices.map((c) => el("label", {},
      el("input", { type: "radio", name: "pitfall", value: c.pitfall, required: true }), ` ${c.pitfall}`,
      el("span", { class: "muted", text: ` (${c.title})` }))));
  }
  $("#mystery-form").hidden = !!m.reveal;
  if (m.reveal) showReveal(m);
}

async function answerMystery(ev) {
  ev.preventDefault();
  const picked = $("#mystery-form input[name=pitfall]:checked");
  if (!picked || sees.mystery === null) return;
  const r = await api("POST", `/api/mysteries/${sees.mystery}/answer`, { pitfall: picked.value });
  if (!r.ok) { $("#mystery-msg").textContent = `Not taken: ${refusal(r)}`; return; }
  showMystery(r.data);
  refreshSees();
  loadKnobs();
}

function showReveal(m) {
  const rv = m.reveal;
  const key = JSON.stringify([rv.diagnosed, m.run.state]);
  if (sees.shownReveal === key) return;
  sees.shownReveal = key;
  const ran = rv.ran;
  const settings = el("tbody", {}, ...ran.settings.map((s) => el("tr", {},
    el("th", { scope: "row", text: s.name + (s.also ? ` (and ${s.also.join(", ")})` : "") }),
    el("td", { text: s.value }), el("td", { text: s.range }), el("td", { text: s.catalog || "not set" }))));
  const d = rv.diagnosed;
  const named = d.findings.filter((f) => f.pitfall === ran.pitfall).map((f) => f.service);
  const others = d.findings.filter((f) => f.pitfall !== ran.pitfall);
  let said;
  if (d.questions === 0) said = `The lab could not ask Prometheus during the run${d.error ? ": " + d.error : ""}.`;
  else if (named.length) said = `The lab named ${ran.pitfall} on ${named.join(", ")}` + (others.length ? `, and also ${others.map((f) => `${f.pitfall} on ${f.service}`).join(", ")}.` : ", and nothing else.");
  else if (others.length) said = `The lab did not name ${ran.pitfall}; it named ${others.map((f) => `${f.pitfall} on ${f.service}`).join(", ")}.`;
  else said = `The lab named no pitfall during the run (${d.questions} readings)` + (m.run.quick ? ": a quick run is shorter than the alerts' windows (a minute) and their for (up to 15 s)." : ".");
  const live = m.run.state === "running" || m.run.state === "stopping";
  $("#mystery-reveal").hidden = false;
  $("#mystery-reveal").replaceChildren(
    el("p", { class: rv.correct ? "verdict-ok" : "verdict-bad", "data-correct": String(rv.correct),
      text: rv.correct ? `Right: it was ${ran.pitfall}.` : `Not ${rv.answer}: it was ${ran.pitfall}.` }),
    el("p", {}, el("strong", { text: ran.title }), ". ", pageLinks(ran.pitfall, ran.page), "."),
    el("h3", { text: "What ran" }),
    el("ul", {},
      el("li", { text: ran.targets.length > 1 ? `On ${ran.targets.join(", ")}, one after the other.` : `On ${ran.targets[0]}.` }),
      el("li", { text: `Knobs: ${knobList(ran.knobs)}.` }),
      ...ran.load.map((l) => el("li", { text: `Load: ${l}.` })),
      ...ran.db.map((x) => el("li", { text: `Database: ${x}.` }))),
    el("table", { class: "settings" },
      el("caption", { text: m.run.quick ? `Drawn at full size, within each range. This quick run divided the pools and the load by ${num(ran.quick_factor || 1)} and ran a few seconds a service: the knobs and the load above are what ran.` : "Drawn at random within each range, beside the catalog's value." }),
      el("thead", {}, el("tr", {}, el("th", { scope: "col", text: "drawn" }), el("th", { scope: "col", text: "value" }),
        el("th", { scope: "col", text: "range" }), el("th", { scope: "col", text: "the catalog's" }))), settings),
    el("h3", { text: "What the lab diagnosed" + (live ? " so far" : "") }),
    el("p", { id: "mystery-said", text: said }),
    ...d.findings.map((f) => finding(f, `; seen from ${fmtTime(f.first_seen)} to ${fmtTime(f.last_seen)}`)),
    el("h3", { text: "On the board, over the run" }),
    el("ul", { id: "mystery-panels" },
      ...rv.panels.map((p) => el("li", {}, el("a", { href: p.url, target: "_blank", rel: "noopener", text: p.title }))),
      rv.board ? el("li", {}, el("a", { href: rv.board, target: "_blank", rel: "noopener", text: "the whole board" })) : null));
}

async function refreshMystery() {
  if (sees.mystery === null) {
    // A page opened afresh shows the mystery in progress, or the last run if it was one.
    const r = await api("GET", "/api/runs");
    if (!r.ok) return;
    const run = r.data.current || r.data.runs[0];
    if (!run || !run.mystery) return;
    sees.mystery = run.id;
  }
  const r = await api("GET", `/api/mysteries/${sees.mystery}`);
  if (r.ok) showMystery(r.data);
}

// once(name, f) is f, skipped while its last call is still under way: on a
// busy machine answers can take longer than the interval, and requests
// that pile up queue the next click behind them.
const inFlight = {};
function once(name, f) {
  return async () => {
    if (inFlight[name]) return;
    inFlight[name] = true;
    try { await f(); } finally { inFlight[name] = false; }
  };
}

function mysteryMain() {
  $("#mystery-start").addEventListener("click", startMystery);
  $("#mystery-form").addEventListener("submit", answerMystery);
  refreshSees();
  refreshMystery();
  setInterval(once("sees", refreshSees), 5000);
  setInterval(() => { $("#mystery-start").disabled = !!state.current; }, 1000);
  setInterval(once("mystery", refreshMystery), 2000);
}

mysteryMain();
