// The Partitions view: vanilla JavaScript, no build step. It reads the view's JSON API with
// Airflow's own session (the _token cookie Airflow's UI holds, sent with same-origin requests).
"use strict";

const ROOT = document.body.dataset.root;              // where the view is mounted: …/partitions
const AIRFLOW = ROOT.replace(/\/partitions$/, "");    // Airflow's own base path
const STATES = [
  ["success", "run succeeded"], ["failed", "run failed"], ["running", "running or queued"],
  ["pending", "pending: n/m upstream keys"], ["past deadline", "pending past its deadline"],
  ["never counting", "holding keys that will never count"], ["not opened", "not yet opened"],
];
const $ = (id) => document.getElementById(id);
const esc = (text) => String(text ?? "").replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const cls = (state) => "s-" + String(state).replace(/ /g, "-");
const enc = encodeURIComponent;
let view = null;          // the Dag page on screen: its answer and partitions by key
let currentDag = null;

async function api(path) {
  const response = await fetch(ROOT + "/api" + path, { credentials: "same-origin", headers: { Accept: "application/json" } });
  if (response.ok) return response.json();
  const detail = (await response.json().catch(() => ({}))).detail || response.statusText;
  const error = new Error(`${response.status}: ${typeof detail === "string" ? detail : JSON.stringify(detail)}`);
  error.status = response.status;
  throw error;
}

function showError(error) {
  const login = `${AIRFLOW}/api/v2/auth/login?next=${enc(location.href)}`;
  $("message").innerHTML = error.status === 401
    ? `You are not signed in to Airflow. <a href="${esc(login)}" target="_top">Sign in</a>`
    : error.status === 403 ? "You may not read this. Ask your Airflow administrator for access."
    : esc(error.message);
}

async function route() {
  $("message").textContent = "";
  const path = location.pathname.slice(ROOT.length);
  const match = path.match(/^\/dags\/([^/]+)/);
  const asset = path.match(/^\/assets\/([^/]+)/);
  $("dags").hidden = !!(match || asset);
  $("dag").hidden = !match;
  $("asset").hidden = !asset;
  try {
    if (match) await showDag(decodeURIComponent(match[1]));
    else if (asset) await showAsset(decodeURIComponent(asset[1]));
    else await showDags();
  } catch (error) { showError(error); }
}

function go(path) { history.pushState(null, "", ROOT + path); route(); }

async function showDags() {
  $("crumb").textContent = "";
  const { dags } = await api("/dags");
  $("dags").innerHTML = dags.length === 0 ? "<p>No partitioned Dag you may read.</p>" :
    `<table class="dags"><thead><tr><th>Dag</th><th>Schedule</th><th></th></tr></thead><tbody>${dags.map((d) =>
      `<tr><td><a href="${esc(ROOT)}/dags/${esc(enc(d.dag_id))}" data-dag="${esc(d.dag_id)}">${esc(d.dag_id)}</a>${d.is_paused ? " (paused)" : ""}</td>
       <td>${esc(d.schedule)}</td><td><a href="${esc(AIRFLOW)}/dags/${esc(enc(d.dag_id))}" target="_top">in Airflow</a></td></tr>`).join("")}</tbody></table>`;
}

function rangeQuery(offset) {
  const form = new FormData($("range"));
  const params = new URLSearchParams();
  for (const name of ["start", "end"]) if (form.get(name)) params.set(name, form.get(name));
  if (offset) params.set("offset", offset);
  return params;
}

async function showDag(dagId, offset = 0) {
  currentDag = dagId;
  $("crumb").textContent = "/ " + dagId;
  $("dag-title").textContent = dagId;
  $("dag-link").href = `${AIRFLOW}/dags/${enc(dagId)}`;
  const params = rangeQuery(offset);
  const started = performance.now();
  const answer = await api(`/dags/${enc(dagId)}?${params}`);
  view = { answer, byKey: new Map(answer.partitions.map((p) => [p.partition_key, p])) };
  $("dag-assets").innerHTML = "Upstream assets: " + answer.assets.map(([name]) =>
    `<a href="${esc(ROOT)}/assets/${esc(enc(name))}" data-asset="${esc(name)}">${esc(name)}</a>`).join(", ");
  renderLegend(answer);
  renderGrid(answer.grid);
  renderPaging(answer);
  renderRefusals(answer.refusals);
  $("detail").hidden = true;
  document.body.dataset.rendered = (performance.now() - started).toFixed(0);  // for the benchmark
}

function renderLegend(answer) {
  const counts = answer.states;
  $("legend").innerHTML = STATES.map(([state, text]) => {
    const n = state === "running" ? (counts.running || 0) + (counts.queued || 0) : counts[state];
    return `<li><span class="cell ${cls(state)}"></span>${esc(text)}${n ? ` (${n})` : ""}</li>`;
  }).join("");
}

function cellHtml(cell) {
  if (cell === null) return "<span></span>";
  const title = cell.key ? `${cell.key}: ${cell.state}${cell.count ? " " + cell.count : ""}` : `${cell.label}: not yet opened`;
  return `<button class="cell ${cls(cell.state)}" ${cell.key ? `data-key="${esc(cell.key)}"` : "disabled"}
    data-state="${esc(cell.state)}" title="${esc(title)}">${esc(cell.label)}${cell.count ? `<small>${esc(cell.count)}</small>` : ""}</button>`;
}

function renderGrid(blocks) {
  const html = blocks.map((block) => {
    let body;
    if (block.kind === "month") {
      body = `<div class="month">${["Mo", "Tu", "We", "Th", "Fr", "Sa", "Su"].map((d) => `<span class="dow">${d}</span>`).join("")}${block.weeks.flat().map(cellHtml).join("")}</div>`;
    } else if (block.kind === "day") {
      body = `<div class="strip">${block.cells.map(cellHtml).join("")}</div>`;
    } else if (block.kind === "rows") {
      body = `<div class="rows" style="grid-template-columns: auto repeat(${block.columns.length}, 30px)">${block.rows.map((row) =>
        `<span class="rowtitle">${esc(row.title)}</span>${row.cells.map(cellHtml).join("")}`).join("")}</div>`;
    } else {
      body = `<div class="list">${block.cells.map(cellHtml).join("")}</div>`;
    }
    return `<div class="block ${esc(block.kind)}-block"><h4>${esc(block.title)}</h4>${body}</div>`;
  }).join("");
  $("grid").innerHTML = html || "<p>No partition in this range yet.</p>";
}

function renderPaging(answer) {
  const { offset, limit, total_entries: total } = answer;
  $("page-info").textContent = total === 0 ? "no partitions" :
    `partitions ${offset + 1}–${Math.min(offset + limit, total)} of ${total}`;
  $("prev").disabled = offset === 0;
  $("next").disabled = offset + limit >= total;
  $("prev").onclick = () => showDag(answer.dag_id, Math.max(0, offset - limit)).catch(showError);
  $("next").onclick = () => showDag(answer.dag_id, offset + limit).catch(showError);
}

function renderRefusals(refusals) {
  $("refusals").innerHTML = !refusals.length ? "" :
    `<h3>Keys refused on arrival (Airflow's audit log: failed to map partition_key)</h3><ul>${refusals.map((r) =>
      `<li>${esc(r.when)}: ${esc(r.message)}</li>`).join("")}</ul>`;
}

async function showAsset(name) {
  $("crumb").textContent = "/ asset " + name;
  $("asset-title").textContent = name;
  const answer = await api(`/assets/${enc(name)}`);
  $("asset-link").href = `${AIRFLOW}/assets/${enc(answer.asset_id)}`;
  const gaps = answer.coverage.series.reduce((n, s) => n + s.days.filter((d) => d.gap).length, 0);
  $("asset-summary").textContent = `${answer.uri}: ${answer.keys.length} partition keys with events` +
    `${gaps ? `, ${gaps} ${gaps === 1 ? "day" : "days"} without a key (gaps, marked)` : ", no day without a key"}` +
    `${answer.unkeyed_events ? `; ${answer.unkeyed_events} events without a partition key` : ""}.`;
  $("coverage").innerHTML = answer.coverage.series.map((series) => `
    ${series.title ? `<h3>${esc(series.title)}</h3>` : ""}
    <table class="coverage"><thead><tr><th>Day</th><th>Events</th><th>Keys</th></tr></thead><tbody>${series.days.map((d) =>
      `<tr class="${d.gap ? "gap" : d.missing_hours.length ? "partial" : ""}" data-day="${esc(d.day)}"><td>${esc(d.day)}</td><td>${d.events}</td>
       <td>${d.gap ? "<strong>gap: no key</strong>" : d.keys.map((k) => `<code data-key="${esc(k)}">${esc(k)}</code>`).join(" ")}
       ${d.missing_hours.length ? `<br><strong>missing hours: ${esc(d.missing_hours.join(", "))}</strong>` : ""}</td></tr>`).join("")}</tbody></table>`).join("") +
    (answer.coverage.other.length ? `<h3>Other keys</h3>${list(answer.coverage.other)}` : "") ||
    "<p>No partition key has an event yet.</p>";
  $("asset-refusals").innerHTML = !answer.refusals.length ? "" :
    `<h3>Keys refused on arrival (Airflow's audit log: failed to map partition_key)</h3><ul>${answer.refusals.map((r) =>
      `<li>${esc(r.when)}: ${r.dag_id ? `<a href="${esc(ROOT)}/dags/${esc(enc(r.dag_id))}" data-dag="${esc(r.dag_id)}">${esc(r.dag_id)}</a>: ` : ""}${esc(r.message)}</li>`).join("")}</ul>`;
}

const list = (items, empty = "none") => items.length ? `<ul class="keys">${items.map((k) => `<li>${esc(k)}</li>`).join("")}</ul>` : `<p>${empty}</p>`;

function showDetail(key) {
  const p = view.byKey.get(key);
  const dagId = view.answer.dag_id;
  const runs = p.runs.map(([runId, state]) =>
    `<li><a href="${esc(AIRFLOW)}/dags/${esc(enc(dagId))}/runs/${esc(enc(runId))}" target="_top">${esc(runId)}</a> <span class="state ${cls(state)}">${esc(state)}</span></li>`).join("");
  const progress = p.progress.map((a) => `
    <h3>Upstream asset ${esc(a.asset)}</h3>
    <p>${a.expected.length ? `${a.expected.length - a.missing.length} of ${a.expected.length} awaited keys counted` : "any one key is enough"}; ${a.received.length} received.</p>
    ${a.expected.length ? `<h3>Missing</h3>${list(a.missing)}` : ""}
    <h3>Received</h3>${list(a.received)}
    ${a.never_counting.length ? `<h3>Will never count</h3><ul class="keys">${a.never_counting.map(([k, why]) => `<li>${esc(k)}: ${esc(why)}</li>`).join("")}</ul>` : ""}`).join("");
  $("detail").innerHTML = `
    <h2>${esc(p.partition_key)}</h2>
    <p><span class="state ${cls(p.state)}">${esc(p.state)}</span></p>
    ${p.opened_at ? `<p>Opened ${esc(p.opened_at)}${p.queue_position ? `, place ${p.queue_position} of ${view.answer.pending_total} pending in the scheduler's queue` : ""}.</p>` : ""}
    ${p.fires_at ? `<p>Its completion deadline lets it fire from ${esc(p.fires_at)}.</p>` : ""}
    <h3>Dag runs</h3>${runs ? `<ul>${runs}</ul><p>The asset events that fed a run are on its page in Airflow.</p>` : "<p>none yet</p>"}
    ${progress}`;
  $("detail").hidden = false;
  document.querySelectorAll(".cell.selected").forEach((c) => c.classList.remove("selected"));
  document.querySelector(`.cell[data-key="${CSS.escape(key)}"]`)?.classList.add("selected");
}

document.addEventListener("click", (event) => {
  const cell = event.target.closest(".cell[data-key]");
  if (cell) return showDetail(cell.dataset.key);
  const dag = event.target.closest("a[data-dag]");
  if (dag && !event.ctrlKey && !event.metaKey) { event.preventDefault(); go("/dags/" + enc(dag.dataset.dag)); }
  const asset = event.target.closest("a[data-asset]");
  if (asset && !event.ctrlKey && !event.metaKey) { event.preventDefault(); go("/assets/" + enc(asset.dataset.asset)); }
});
$("home").addEventListener("click", (event) => { event.preventDefault(); go("/"); });
$("range").addEventListener("submit", (event) => { event.preventDefault(); showDag(currentDag).catch(showError); });
window.addEventListener("popstate", route);
route();
