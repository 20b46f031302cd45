// The Partitions view: vanilla JavaScript, no build step. It reads the view's JSON API with
// Airflow's own session (the _token cookie Airflow's UI holds, sent with same-origin requests).
// The page is one string of HTML per section, one element per cell, one delegated listener.
"use strict";

const ROOT = document.body.dataset.root;              // where the view is mounted: …/partitions
const AIRFLOW = ROOT.replace(/\/partitions$/, "");    // Airflow's own base path
// The states, what needs attention first (the API's order), each with what it means.
const MEANING = new Map([
  ["failed", "its latest Dag run failed"],
  ["ran incomplete", "its runs ran without all its upstream keys (n/m: what they ran with)"],
  ["never counting", "pending, and holding keys that will never count"],
  ["past deadline", "pending past its completion deadline: it fires once settled"],
  ["overdue", "its period ended with keys missing, and no deadline will fire it"],
  ["stale", "it succeeded, then a key it counted came again (corrected upstream): run it again"],
  ["pending", "pending: n/m upstream keys counted"],
  ["running", "its latest Dag run is running"],
  ["queued", "its latest Dag run is queued"],
  ["success", "its latest Dag run succeeded, and its runs had every upstream key"],
  ["not opened", "a place of the calendar with no partition yet"],
]);
const PENDING = new Set(["never counting", "past deadline", "overdue", "pending"]);
// Late is no state: a partition of any state but success can be late, marked with a corner of its own.
const LATE = "late: no successful run although its period ended longer ago than its expected_within (a corner mark, whatever its state)";
const PAGE = 100;                                     // keys per page of a list in the detail
const $ = (id) => document.getElementById(id);
const esc = (text) => String(text ?? "").replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const cls = (state) => "s-" + String(state).replace(/[ _]/g, "-");
const enc = encodeURIComponent;
const plural = (n, one, many = one + "s") => `${n} ${n === 1 ? one : many}`;
/** An ISO 8601 time as UTC to the second, "2026-05-03 00:00:00 UTC" (the API's times are UTC). */
/** "1 key after it ran, pending": the pending run keys sent after a partition's runs opened, else "" (keys counted as members). */
const againText = (p) => p && p.pending_again ? `${plural(p.progress.reduce((n, a) => n + (a.expected_total ? a.counted : a.received_total), 0), "key")} after it ran, ${p.pending_again}` : "";
/** *text* as one shell word: quoted when it holds anything but letters, digits and -_.:+ ("us|2026-05-02"). */
const shellQuoted = (text) => /^[\w.:+-]+$/.test(text) ? text : `'${String(text).replace(/'/g, "'\\''")}'`;
const when = (iso) => { const t = new Date(iso); return isNaN(t) ? String(iso ?? "") : t.toISOString().slice(0, 19).replace("T", " ") + " UTC"; };
let view = null;          // the Dag page on screen: its answer, partitions by key, its query
let loads = 0;            // the latest route: an answer to an older one is dropped (clicks outrun answers)
let warmingTimer = null;  // while a Dag on screen is read for the first time: the route asked again
const WARMING = "being read for the first time since an install or upgrade: shown when done";

async function api(path) {
  return answerOf(await fetch(ROOT + "/api" + path, { credentials: "same-origin", headers: { Accept: "application/json" } }));
}

/** A response's JSON, or an Error of its status and Airflow's detail (error.status: 401, 403, …). */
async function answerOf(response) {
  if (response.ok) return response.json();
  const detail = (await response.json().catch(() => ({}))).detail || response.statusText;
  const error = new Error(`${response.status}: ${typeof detail === "string" ? detail : JSON.stringify(detail)}`);
  error.status = response.status;
  throw error;
}

/** The answer for the route on screen: a later route (a click outran the answer) drops it by throwing. */
/** Ask the route on screen again in 3 s while *warming* (a Dag of it is read for the first time), else stop. */
function warmingAgain(warming) {
  clearTimeout(warmingTimer);
  const load = loads;
  warmingTimer = warming ? setTimeout(() => { if (load === loads) route(); }, 3000) : null;
}

async function routed(path) {
  const load = loads;
  const answer = await api(path);
  if (load !== loads) throw new Error("a later route replaced this one");
  return answer;
}

function showError(error) {
  const login = `${AIRFLOW}/api/v2/auth/login?next=${enc(location.href)}`;
  $("message").innerHTML = error.status === 401
    ? `You are not signed in to Airflow. <a href="${esc(login)}" target="_top">Sign in</a>`
    : error.status === 403 ? "You may not read this. Ask your Airflow administrator for access."
    : esc(error.message);
}

// -- routing: the path says which page, the query what it selects (start, end, state, offset) --

async function route() {
  const load = ++loads;
  delete document.body.dataset.ready;
  $("message").textContent = "";
  const path = location.pathname.slice(ROOT.length);
  const query = new URLSearchParams(location.search);
  const dag = path.match(/^\/dags\/([^/]+)/);
  const asset = path.match(/^\/assets\/([^/]+)/);
  $("dags").hidden = !!(dag || asset);
  $("dag").hidden = !dag;
  $("asset").hidden = !asset;
  try {
    if (dag) await showDag(decodeURIComponent(dag[1]), query);
    else if (asset) await showAsset(decodeURIComponent(asset[1]));
    else await showDags(query);
  } catch (error) { if (load === loads) showError(error); }
  if (load === loads) document.body.dataset.ready = "1";  // for the tests: the page has its answer
}

function go(path, query) {
  const search = query && String(query) ? "?" + query : "";
  history.pushState(null, "", ROOT + path + search);
  return route();
}

/** Go to the Dag page on screen with its query changed (null removes a parameter). */
function requery(changes, { keepOffset = false } = {}) {
  const query = new URLSearchParams(location.search);
  if (!keepOffset) query.delete("offset");
  query.delete("key");
  for (const [name, value] of Object.entries(changes)) {
    query.delete(name);
    for (const v of [].concat(value ?? [])) if (v !== "" && v !== null) query.append(name, v);
  }
  return go("/dags/" + enc(view.answer.dag_id), query);
}

// -- the overview: every partitioned Dag, what needs attention first --------------------------

async function showDags(query) {
  $("crumb").textContent = "";
  const wanted = query.getAll("state");
  const params = new URLSearchParams(wanted.map((s) => ["state", s]));
  const answer = await routed("/dags" + (wanted.length ? "?" + params : ""));
  $("dag-filter-chips").innerHTML = answer.states.filter((s) => s !== "not opened").map((s) =>
    `<label class="chip" title="${esc(MEANING.get(s) || s)}"><input type="checkbox" name="state" value="${esc(s)}"${wanted.includes(s) ? " checked" : ""}>
     <span class="swatch ${cls(s)}"></span>${esc(s)}</label>`).join("");
  const { dags } = answer;
  warmingAgain(dags.some((d) => d.warming));
  $("dag-list").innerHTML = dags.length === 0
    ? `<p>${wanted.length ? "No partitioned Dag you may read has partitions in these states." : "No partitioned Dag you may read."}</p>`
    : `<p class="muted">${plural(answer.total_entries, "partitioned Dag")}${wanted.length ? ` with partitions ${wanted.map(esc).join(" or ")}` : ""}, what needs attention first.</p>
    <table class="dags"><thead><tr><th>Dag</th><th>Partitions by state</th><th>Keys</th><th>Over time</th><th></th></tr></thead><tbody>${dags.map(dagRow).join("")}</tbody></table>`;
}

function dagRow(d) {
  const href = `${ROOT}/dags/${enc(d.dag_id)}`;
  const total = Object.values(d.states).reduce((a, b) => a + b, 0);
  const counts = [...MEANING.keys()].filter((s) => d.states[s]).map((s) =>
    `<span class="count" data-state="${esc(s)}"><span class="swatch ${cls(s)}"></span>${d.states[s]} ${esc(s)}</span>`).join("")
    + (d.again ? `<span class="count again" data-again="${d.again}" title="partitions that ran and also have a pending run a key sent again opened (airflow-partitions discard removes them)">${d.again} with keys after they ran</span>` : "")
    + (d.late ? `<span class="count late" data-late="${d.late}" title="partitions without a successful run although their period ended longer ago than expected_within">${d.late} late</span>` : "")
    + (d.members_problems || []).map((p) => `<span class="count broken-members" data-members-broken="${esc(p.variable)}" title="${esc(p.problem)}">members Variable ${esc(p.variable)} broken</span>`).join("");
  return `<tr data-dag-row="${esc(d.dag_id)}"${d.attention ? ` data-attention="${esc(d.attention)}"` : ""}>
    <td><a href="${esc(href)}" data-dag="${esc(d.dag_id)}">${esc(d.dag_id)}</a>${d.is_paused ? ' <span class="muted">(paused)</span>' : ""}<div class="muted">${esc(d.schedule)}</div></td>
    <td><div class="counts">${d.warming ? `<span class="muted" data-warming="1">${esc(WARMING)}</span>` : total ? `<span class="total">${plural(total, "partition")}</span>${counts}` : '<span class="muted">no partition yet</span>'}</div></td>
    <td class="range">${d.first ? `<span>${esc(d.first)}</span>${d.last !== d.first ? ` – <span>${esc(d.last)}</span>` : ""}` : ""}</td>
    <td>${stripHtml(d)}</td>
    <td><a href="${esc(AIRFLOW)}/dags/${esc(enc(d.dag_id))}" target="_top">in Airflow</a></td></tr>`;
}

/** The Dag's partitions over time, a segment per bucket (month) in its worst state; months without one left blank. */
function stripHtml(d) {
  if (!d.strip.length) return "";
  const segments = [];
  const months = /^\d{4}-\d{2}$/;
  const [first, last] = [d.strip[0][0], d.strip[d.strip.length - 1][0]];
  // Months without a partition stand blank between those with one, over twenty years at most.
  const fill = months.test(first) && months.test(last) && monthsBetween(first, last) <= 240;
  let previous = null;
  for (const [bucket, state, n] of d.strip) {
    if (fill && previous && months.test(previous) && months.test(bucket)) {
      for (let m = nextMonth(previous); m < bucket; m = nextMonth(m)) segments.push('<span class="gap"></span>');
    }
    const query = new URLSearchParams({ start: bucket, end: bucket });
    segments.push(`<a class="segment ${cls(state)}" data-dag="${esc(d.dag_id)}" data-query="${esc(query)}" data-bucket="${esc(bucket)}" data-state="${esc(state)}" data-count="${n}"
      href="${esc(ROOT)}/dags/${esc(enc(d.dag_id))}?${esc(query)}" title="${esc(`${bucket}: ${plural(n, "partition")}, the worst ${state}`)}"></a>`);
    previous = bucket;
  }
  return `<div class="strip-bar" aria-label="${esc(d.dag_id)}'s partitions over time">${segments.join("")}</div>`;
}

function monthsBetween(first, last) {
  const [y0, m0] = first.split("-").map(Number), [y1, m1] = last.split("-").map(Number);
  return (y1 - y0) * 12 + m1 - m0;
}

function nextMonth(month) {
  const [y, m] = month.split("-").map(Number);
  return m === 12 ? `${y + 1}-01` : `${y}-${String(m + 1).padStart(2, "0")}`;
}

// -- one Dag: the overview of all its selected partitions, the grid of one page -----------------

async function showDag(dagId, query) {
  delete document.body.dataset.rendered;
  $("crumb").textContent = "/ " + dagId;
  $("dag-title").textContent = dagId;
  $("dag-link").href = `${AIRFLOW}/dags/${enc(dagId)}`;
  const form = $("range");
  form.start.value = query.get("start") || "";
  form.end.value = query.get("end") || "";
  const params = new URLSearchParams();
  for (const name of ["start", "end", "offset"]) if (query.get(name)) params.set(name, query.get(name));
  for (const state of query.getAll("state")) params.append("state", state);
  const started = performance.now();
  const answer = await routed(`/dags/${enc(dagId)}${String(params) ? "?" + params : ""}`);
  warmingAgain(answer.warming);
  if (answer.warming) {  // nothing of it is known yet: the note, and the page asked again
    for (const id of ["dag-assets", "dag-summary", "legend", "overview", "grid", "refusals"]) $(id).innerHTML = "";
    $("paging").hidden = $("actions").hidden = true;
    $("dag-summary").innerHTML = `<span data-warming="1">${esc(answer.detail)}</span>`;
    return;
  }
  view = { answer, query, byKey: new Map(answer.partitions.map((p) => [p.partition_key, p])) };
  const [first, last] = answer.range || [];
  form.start.placeholder = first || "first key";
  form.end.placeholder = last || "last key";
  const zoomed = !!(query.get("start") || query.get("end"));
  $("zoom-out").hidden = !zoomed;
  $("whole").hidden = !zoomed;
  $("dag-assets").innerHTML = answer.assets.length
    ? "Upstream assets: " + answer.assets.map(([name]) =>
      `<a href="${esc(ROOT)}/assets/${esc(enc(name))}" data-asset="${esc(name)}">${esc(name)}</a>`).join(", ")
    : "No upstream assets: partitioned by its own timetable.";
  renderSummary(answer);
  renderLegend(answer, query.getAll("state"));
  $("overview").innerHTML = overviewHtml(answer.overview, answer);
  $("grid").innerHTML = answer.grid.map(blockHtml).join("") ||
    `<p>${answer.total_entries ? "" : "No partition in this selection."}</p>`;
  renderPaging(answer);
  $("refusals").innerHTML = refusalsHtml(answer.refusals, answer.refusals_total, false);
  $("detail").hidden = true;
  forgetChoice();
  document.body.dataset.rendered = (performance.now() - started).toFixed(0);  // for the benchmark
  const key = query.get("key");
  if (key && view.byKey.has(key)) showDetail(key);
}

function renderMembersBroken(problems) {
  const banner = $("members-broken");
  banner.hidden = !problems.length;
  banner.innerHTML = problems.map((p) => `<p><strong>Members Variable ${esc(p.variable)} broken${p.since ? ` since ${esc(p.since)}` : ""}</strong>: ${esc(p.problem)}
    Keys for its rollups are refused and their pending runs wait. <span class="muted">Fix: ${esc(p.fix)}.</span></p>`).join("");
}

function renderSummary(answer) {
  renderMembersBroken(answer.members_problems || []);
  const { first, last, total_entries: total, range } = answer;
  const parts = [];
  parts.push(total ? `${plural(total, "partition")}${first ? `, keys ${esc(first)}${last !== first ? ` – ${esc(last)}` : ""}` : ""}` : "No partition");
  if (range && range[0] && (range[0] !== first || range[1] !== last)) parts.push(`of the Dag's ${esc(range[0])} – ${esc(range[1])}`);
  const notes = [];
  if (answer.starved) notes.push(`${plural(answer.starved, "pending run")} beyond the 500 the scheduler evaluates per loop (${answer.pending_total} pending in the deployment)`);
  if (answer.again) notes.push(`${plural(answer.again, "partition")} that ran also ${answer.again === 1 ? "has" : "have"} a pending run a key sent again opened, shown beside ${answer.again === 1 ? "its run" : "their runs"} (\`airflow-partitions discard ${answer.dag_id}\` removes them)`);
  if (answer.late) notes.push(`${plural(answer.late, "partition")} late: no successful run although ${answer.late === 1 ? "its" : "their"} period ended longer ago than expected_within`);
  if (answer.blocked_ahead) notes.push(`${plural(answer.blocked_ahead, "pending run")} ahead of its oldest hold only keys that will never count`);
  const policies = [...new Set((answer.rerun_policies || []).map(([, policy]) => policy))];
  const rerun = policies.length ? ` A key sent again after its period ran: ${policies.map(esc).join(", ")} (its rollup's rerun policy).` : "";
  $("dag-summary").innerHTML = parts.join(" ") + "." + rerun + (notes.length ? ` <strong>${notes.map(esc).join("; ")}.</strong>` : "");
}

function renderLegend(answer, wanted) {
  const counts = answer.states;
  $("legend").innerHTML = [...MEANING.keys()].map((state) => {
    const n = counts[state] || 0;
    const swatch = `<span class="swatch ${cls(state)}"></span>`;
    if (state === "not opened") return `<li title="${esc(MEANING.get(state))}">${swatch}not opened</li>`;
    const pressed = wanted.includes(state);
    return `<li><button type="button" class="chip${n ? "" : " none"}" data-filter="${esc(state)}" aria-pressed="${pressed}"
      title="${esc(MEANING.get(state))}: click to show only these">${swatch}${esc(state)}<span class="n">${n}</span></button>${chooser(state, n)}</li>`;
  }).join("") + `<li class="late-key" data-late="${answer.late || 0}" title="${esc(LATE)}"><span class="swatch late-mark"></span>late<span class="n">${answer.late || 0}</span></li>`
    + (wanted.length ? `<li><button type="button" class="chip" data-filter="">every state</button></li>` : "");
}

function tip(cell) {
  if (cell.zoom) return `${cell.label}: ${plural(Number(cell.count), "partition")}, the worst ${cell.state}. Zoom in`;
  if (cell.state === "closed") return `${cell.label}: no period of this Dag's calendar (a day off)`;
  if (!cell.key) return `${cell.label}: not yet opened`;
  const partition = view.byKey && view.byKey.get(cell.key);
  const again = againText(partition);
  const late = partition && partition.late_since ? ` · late since ${when(partition.late_since)}` : "";
  return `${cell.key}: ${cell.state}${cell.count ? " " + cell.count : ""}${again ? " · " + again : ""}${late}`;
}

/** One cell, one element: a button for a partition or a bucket to zoom into, else a span. */
function cellHtml(cell, small) {
  if (cell === null) return '<span class="blank"></span>';
  const body = small ? "" : `${esc(cell.label)}${cell.count ? `<small>${esc(cell.count)}</small>` : ""}`;
  const partition = cell.key && view.byKey ? view.byKey.get(cell.key) : null;
  const marks = (partition?.pending_again ? " again" : "") + (partition?.late_since ? " late" : "");
  const common = `class="cell ${cls(cell.state)}${marks}" data-state="${esc(cell.state)}" title="${esc(tip(cell))}"`;
  if (cell.key) return `<button type="button" ${common} data-key="${esc(cell.key)}">${body}</button>`;
  if (cell.zoom) return `<button type="button" ${common} data-zoom="${esc(cell.zoom[0])}" data-zoom-end="${esc(cell.zoom[1])}">${body}</button>`;
  return `<span ${common}>${body}</span>`;
}

const WEEKDAYS = ["Mo", "Tu", "We", "Th", "Fr", "Sa", "Su"];

function blockHtml(block) {
  let body;
  let title = block.title;
  if (block.kind === "month") {
    body = `<div class="month">${WEEKDAYS.map((d) => `<span class="dow">${d}</span>`).join("")}${block.weeks.flat().map((c) => cellHtml(c)).join("")}</div>`;
  } else if (block.kind === "day" || block.kind === "hour") {
    const columns = block.kind === "day" ? block.cells.length : Math.min(block.cells.length, 15);
    body = `<div class="strip" style="--n:${columns}">${block.cells.map((c) => cellHtml(c)).join("")}</div>`;
    if (block.kind === "hour") title = `${block.title}: minutes`;
    else if (block.cells.some((c) => c && c.zoom)) title = `${block.title}: minute keys by hour (click an hour to zoom in)`;
  } else if (block.kind === "rows") {
    [title, body] = rowsHtml(block);
  } else if (block.kind === "periods") {
    body = periodsHtml(block);
  } else {
    body = `<div class="list">${block.cells.map((c) => cellHtml(c)).join("")}</div>`;
  }
  return `<div class="block ${esc(block.kind)}-block" data-kind="${esc(block.kind)}" data-title="${esc(block.title)}"><h4>${esc(title)}</h4>${body}</div>`;
}

// Axis labels: the server's (layout.time_axis), every one drawn, each fitted to its own span.
const AXIS_FONT_SIZE = 10;
let measure = null;
function textWidth(text) {
  if (measure === null) {
    measure = document.createElement("canvas").getContext("2d");
    measure.font = `${AXIS_FONT_SIZE}px ${getComputedStyle(document.body).fontFamily}`;
  }
  return measure.measureText(text).width + 4;          // the tick's padding and edge
}

/**
 * The two label rows over a grid of *n* columns at *pitch* px: *axis* ([column, label]: the month
 * where it changes) as ticks, each in the longest spelling that fits before the next ("2026-12",
 * else "12"), none overlapping another; then *heads* (each column's day, hour or period), one per column.
 */
function axisRowsHtml(axis, heads, pitch, n) {
  const ticks = axis.map(([column, label], i) => {
    const last = i === axis.length - 1;
    const room = ((last ? n : axis[i + 1][0]) - column) * pitch - 2 + (last ? 40 : 0);  // the last may stand out
    const spellings = [label, label.split(/[-T]/).pop(), label.slice(-2)];
    const text = spellings.find((t) => textWidth(t) <= room) ?? spellings[2];
    return `<span class="tick" style="left:${column * pitch}px;max-width:${room}px" title="${esc(label)}">${esc(text)}</span>`;
  }).join("");
  const row = heads.some(Boolean) ? `<span></span>${heads.map((h) => `<span class="colhead">${esc(h)}</span>`).join("")}` : "";
  return `${axis.length ? `<span></span><div class="axis">${ticks}</div>` : ""}${row}`;
}

const ROW_CELL = 14, GAP = 2;

/** A block of composite keys: one row per first dimension, small cells, the month and each column's day above. */
function rowsHtml(block) {
  const n = block.columns.length;
  const parts = block.columns.map((c) => c.split("|").pop());
  const span = parts.length ? `${parts[0]}${parts.length > 1 ? ` – ${parts[parts.length - 1]}` : ""}` : "";
  const title = `${block.title}: ${plural(block.rows.length, "row")}, ${span}`;
  const rows = block.rows.map((row) =>
    `<span class="rowtitle">${esc(row.title)}</span>${row.cells.map((c) => cellHtml(c, true)).join("")}`).join("");
  return [title, `<div class="rows" style="--n:${n};--c:${ROW_CELL}px;--g:${GAP}px">${axisRowsHtml(block.axis, block.heads, ROW_CELL + GAP, n)}${rows}</div>`];
}

/** A block of periods of a year: a row per year, a column per period (Q1 …), its number over each of many. */
function periodsHtml(block) {
  const n = block.columns.length;
  const wide = n <= 13;
  const head = wide
    ? `<span></span>${block.columns.map((c) => `<span class="colhead">${esc(c)}</span>`).join("")}`
    : axisRowsHtml([], block.heads, 0, n);
  const rows = block.rows.map((row) =>
    `<span class="rowtitle">${esc(row.title)}</span>${row.cells.map((c) => cellHtml(c, !wide)).join("")}`).join("");
  return `<div class="periods${wide ? " wide" : ""}" style="--n:${n}">${head}${rows}</div>`;
}

/** The heatmap of every selected partition: a row per key prefix, a cell per bucket in its worst state. */
function overviewHtml(overview, answer) {
  if (!overview || !overview.rows.length) return "";
  const { columns } = overview;
  // Worth drawing when it shows more than the grid does: partitions beyond the page, key prefixes, a long range.
  if (answer.total_entries <= answer.partitions.length && overview.rows.length < 2 && columns.length <= 12) return "";
  const place = new Map(columns.map((c, i) => [c, i]));
  const size = columns.length <= 24 ? 28 : columns.length <= 40 ? 22 : ROW_CELL;
  const rows = overview.rows.map((row) => {
    const cells = new Array(columns.length).fill('<span class="blank"></span>');
    for (const c of row.cells) cells[place.get(c.label)] = cellHtml(c, true);
    return `<span class="rowtitle">${esc(row.title || "all")}</span>${cells.join("")}`;
  }).join("");
  return `<div class="block overview-block" data-kind="overview" data-unit="${esc(overview.unit)}"><h4>All ${plural(answer.total_entries, "partition")} of the selection by ${esc(overview.unit)}: the worst state of each (click one to zoom in)</h4>
    <div class="rows" style="--n:${columns.length};--c:${size}px;--g:${GAP}px">${axisRowsHtml(overview.axis, overview.heads, size + GAP, columns.length)}${rows}</div></div>`;
}

function renderPaging(answer) {
  const { offset, limit, total_entries: total } = answer;
  $("paging").hidden = total <= limit && offset === 0;
  $("page-info").textContent = total === 0 ? "no partitions" :
    `partitions ${Math.min(offset + 1, total)}–${Math.min(offset + limit, total)} of ${total}`;
  $("prev").disabled = offset === 0;
  $("next").disabled = offset + limit >= total;
}

/** The parent of a zoomed range: an hour's day, a day's month, a month's year, else the whole range. */
function zoomedOut(start, end) {
  if (start && start === end && /^\d{4}/.test(start)) {
    for (const n of [10, 7, 4]) if (start.length > n) return start.slice(0, n);
  }
  return "";
}

// -- refused keys: our reason first, the calendar's rule apart from mistakes ------------------

/** The keys refused on arrival, collapsed to their count: one click on it shows them, our reason first. */
function refusalsHtml(refusals, total, withDag) {
  if (!refusals.length) return "";
  const requeued = `<span class="requeued" title="its event was queued again since (airflow-partitions requeue --yes): it feeds a run of the Dag now">re-queued since</span> `;
  const item = (r) => `<li data-key="${esc(r.partition_key ?? "")}"${r.requeued ? ' data-requeued="1"' : ""}>
    ${r.requeued ? requeued : ""}<code>${esc(r.partition_key ?? "(a key)")}</code>${r.asset && !withDag ? ` from <a href="${esc(ROOT)}/assets/${esc(enc(r.asset))}" data-asset="${esc(r.asset)}">${esc(r.asset)}</a>` : ""}${withDag && r.dag_id ? ` into <a href="${esc(ROOT)}/dags/${esc(enc(r.dag_id))}" data-dag="${esc(r.dag_id)}">${esc(r.dag_id)}</a>` : ""}:
    <span class="reason">${esc(r.reason || r.message)}</span> <span class="muted">${esc(when(r.when))}</span>
    <details><summary>Airflow's message</summary><pre>${esc(r.message)}</pre></details></li>`;
  const mistakes = refusals.filter((r) => !r.expected);
  const expected = refusals.filter((r) => r.expected && !r.other_member);
  const others = refusals.filter((r) => r.other_member);
  const again = refusals.filter((r) => r.requeued).length;
  const kinds = [[mistakes, "mistake"], [expected, "by the calendar's rule"], [others, "for other members"]]
    .filter(([list]) => list.length).map(([list, kind]) => kind === "mistake" ? plural(list.length, kind) : `${list.length} ${kind}`);
  const latest = total > refusals.length ? ` (the latest ${refusals.length}: ` : ": ";
  return `<details class="refusals"><summary><strong>${plural(total, "key")} refused on arrival</strong>${latest}${kinds.join(", ")}${again ? `; ${again} re-queued since` : ""}${total > refusals.length ? ")" : ""}</summary>
    ${mistakes.length ? `<section class="refused mistakes"><h4>${plural(mistakes.length, "mistake")}: a key the mapper cannot read, or a mapper that does not fit the keys</h4><ul>${mistakes.map(item).join("")}</ul></section>` : ""}
    ${expected.length ? `<section class="refused expected"><h4>${plural(expected.length, "key")} refused by the calendar's rule, as expected (nothing to fix)</h4><ul>${expected.map(item).join("")}</ul></section>` : ""}
    ${others.length ? `<section class="refused expected other-members"><h4>${plural(others.length, "key")} for other members: members this Dag's window does not list, such as another region's store (nothing to fix)</h4><ul>${others.map(item).join("")}</ul></section>` : ""}
    ${total > refusals.length ? `<p class="muted">The latest ${refusals.length} of ${total} refused keys (Airflow's audit log: failed to map partition_key).</p>` : ""}</details>`;
}

// -- the detail of one partition: its state, what it ran with, its runs, what each asset gave --

const keysHtml = (keys) => keys.length
  ? `<ul class="keys">${keys.map((k) => `<li>${Array.isArray(k) ? `${esc(k[0])}: ${esc(k[1])}` : esc(k)}</li>`).join("")}</ul>`
  : '<p class="muted">none</p>';

/** A list of keys, paged through the detail endpoint when the answer holds only its first ones. */
function pagerHtml(list, keys, total, pageable) {
  const more = total > keys.length;
  const pages = !more ? "" : pageable
    ? `<p class="pages"><button type="button" data-page="-1" disabled>Earlier keys</button>
       <span class="page-of">1–${keys.length} of ${total}</span>
       <button type="button" data-page="1">Next keys</button></p>`
    : `<p class="muted">… and ${total - keys.length} more</p>`;
  return `<div class="pager" data-list="${esc(list)}" data-offset="0" data-shown="${keys.length}" data-total="${total}">${keysHtml(keys)}${pages}</div>`;
}

function ranWithText(ran) {
  return ran.counted >= ran.awaited ? `ran with all ${ran.awaited} of ${ran.awaited} upstream keys`
    : `ran with ${ran.counted} of ${ran.awaited} upstream keys`;
}

function showDetail(key) {
  const p = view.byKey.get(key);
  const dagId = view.answer.dag_id;
  const pending = PENDING.has(p.state);
  const single = view.answer.assets.length === 1;
  const html = [`<button type="button" class="close" data-close title="Close">×</button><h2>${esc(p.partition_key)}</h2>
    <p><span class="state ${cls(p.state)}">${esc(p.state)}</span> ${esc(MEANING.get(p.state) || "")}${p.pending_again ? ` · <span class="again">${esc(againText(p))}</span>` : ""}</p>`];
  const past = p.history && p.history.length ? p.history : p.runs.map(([run_id, state]) => ({ run_id, state, ran_with: null }));
  if (p.ran_with && !pending) {
    // What its runs ran with between them: a rerun for late keys completes its period.
    const ran = p.ran_with;
    const subject = past.length > 1 ? `Its ${past.length} runs` : "Its run";
    const together = past.length > 1 ? " between them" : "";
    if (ran.counted >= ran.awaited) html.push(`<p class="ran-with complete">${subject} ${ranWithText(ran)}${together}.</p>`);
    else html.push(`<div class="ran-with incomplete"><p>${subject} <strong>${ranWithText(ran)}</strong>${together}; ${plural(ran.missing_total, "key")} missing:</p>
      ${pagerHtml("missing", ran.missing, ran.missing_total, true)}</div>`);
  }
  if (p.ran_with_kept === false) html.push(`<p class="muted">What its runs ran with is no longer kept: \`airflow-partitions clean\` removed the keys Airflow had logged for them (their states stand).</p>`);
  if (p.pending_again) {
    html.push(`<p class="again-note">Keys that came for this period after it ran (sent again, or late) opened a pending run beside its runs on ${esc(when(p.opened_at))}${p.queue_position ? ` (place ${p.queue_position} of ${view.answer.pending_total} in the scheduler's queue)` : ""}: Airflow holds it (its rollup's rerun policy is HOLD) until its wait policy is met again${p.fires_at ? `, or its completion deadline fires it from ${esc(when(p.fires_at))}` : ""}. What ran stays as shown; <code>airflow-partitions discard ${esc(dagId)} --key ${esc(shellQuoted(p.partition_key))}</code> removes the pending run.</p>`);
  } else if (p.opened_at) {
    html.push(`<p>Pending since ${esc(when(p.opened_at))}${p.queue_position ? `, place ${p.queue_position} of ${view.answer.pending_total} pending in the scheduler's queue${p.queue_position > 500 ? " (beyond the 500 it evaluates per loop: not reached this loop)" : ""}` : ""}.</p>`);
  }
  if (p.fires_at && !p.pending_again) html.push(`<p>Its completion deadline lets it fire from ${esc(when(p.fires_at))}${p.state === "past deadline" ? ": it fires once its keys settle" : ""}.</p>`);
  if (p.late_since) html.push(`<p class="late-note">Late since ${esc(when(p.late_since))}: it has no successful run, and its period ended longer ago than its expected_within.</p>`);
  if (p.state === "overdue") html.push(`<p class="overdue-note">Its period ended${p.closes_at ? ` at ${esc(when(p.closes_at))}` : ""} with keys missing, and no completion deadline will fire it: it waits for keys that may never come (send them, or backfill).</p>`);
  else if (p.closes_at && pending) html.push(`<p>Its period ends at ${esc(when(p.closes_at))}.</p>`);
  const runs = past.map((run, i) => {
    const short = run.ran_with && run.ran_with.counted < run.ran_with.awaited;
    const ran = run.ran_with ? ` <span class="${short ? "short" : "muted"}">${i ? "this rerun " : ""}${ranWithText(run.ran_with)}</span>`
      : run.ran_with_kept === false ? ' <span class="muted">what it ran with is no longer kept</span>' : "";
    return `<li><a class="run" href="${esc(AIRFLOW)}/dags/${esc(enc(dagId))}/runs/${esc(enc(run.run_id))}" target="_top">${esc(run.run_id)}</a>
      <span class="state ${cls(run.state)}">${esc(run.state)}</span>${ran}</li>`;
  }).join("");
  html.push(`<h3>${past.length > 1 ? `Dag runs: ${past.length}, oldest first (a rerun for late keys after the first)` : "Dag runs"}</h3>
    ${runs ? `<ol class="runs">${runs}</ol><p class="muted">The asset events that fed a run are on its page in Airflow.</p>` : '<p class="muted">none yet</p>'}`);
  for (const a of p.progress) {
    html.push(`<h3>${p.pending_again ? "The pending run beside it: upstream asset" : "Upstream asset"} ${esc(a.asset)}</h3>
      <p>${a.expected_total ? `${a.counted} of ${a.expected_total} awaited keys counted` : "any one key is enough"}; ${a.received_total} received.</p>
      ${a.expected_total ? `<h4>Missing (${a.missing_total})</h4>${pagerHtml("missing", a.missing, a.missing_total, single)}` : ""}
      ${a.never_counting.length ? `<h4>Will never count (${a.never_counting.length})</h4>${pagerHtml("never counting", a.never_counting, a.never_counting.length, single)}` : ""}
      <h4>Received (${a.received_total})</h4>${pagerHtml("received", a.received, a.received_total, single)}`);
  }
  const detail = $("detail");
  detail.innerHTML = html.join("");
  detail.dataset.key = key;
  detail.hidden = false;
  document.querySelectorAll(".cell.selected").forEach((c) => c.classList.remove("selected"));
  document.querySelector(`.cell[data-key="${CSS.escape(key)}"]`)?.classList.add("selected");
  const query = new URLSearchParams(location.search);
  query.set("key", key);
  history.replaceState(null, "", `${location.pathname}?${query}`);
}

async function turnPage(button) {
  const pager = button.closest(".pager");
  const total = Number(pager.dataset.total);
  const offset = Math.max(0, Math.min(Number(pager.dataset.offset) + Number(button.dataset.page) * PAGE, total - 1));
  const key = $("detail").dataset.key;
  const params = new URLSearchParams({ list: pager.dataset.list, offset, limit: PAGE });
  const answer = await api(`/dags/${enc(view.answer.dag_id)}/partitions/${enc(key)}?${params}`);
  if ($("detail").dataset.key !== key) return;
  pager.dataset.offset = offset;
  pager.querySelector(".keys, p.muted").outerHTML = keysHtml(answer.keys);
  pager.querySelector(".page-of").textContent = `${offset + 1}–${offset + answer.keys.length} of ${answer.total_entries}`;
  pager.querySelector('[data-page="-1"]').disabled = offset === 0;
  pager.querySelector('[data-page="1"]').disabled = offset + answer.keys.length >= answer.total_entries;
}

// -- one asset: its keys by local day of the zone its consumer reads them in --------------------

async function showAsset(name) {
  $("crumb").textContent = "/ asset " + name;
  $("asset-title").textContent = name;
  const answer = await routed(`/assets/${enc(name)}`);
  $("asset-link").href = `${AIRFLOW}/assets/${enc(answer.asset_id)}`;
  const { zone, dag_id: reader } = answer.coverage;
  const gaps = answer.coverage.series.reduce((n, s) => n + s.days.filter((d) => d.gap).reduce((m, d) => m + d.days, 0), 0);
  $("asset-summary").textContent = `${answer.uri}: ${answer.keys.length} partition keys with events` +
    `${gaps ? `, ${gaps} ${gaps === 1 ? "day" : "days"} without a key (gaps, marked)` : ", no day without a key"}` +
    `${answer.unkeyed_events ? `; ${answer.unkeyed_events} events without a partition key` : ""}.`;
  $("asset-zone").innerHTML = reader
    ? `Days are local days in <strong>${esc(zone)}</strong>, as <a href="${esc(ROOT)}/dags/${esc(enc(reader))}" data-dag="${esc(reader)}">${esc(reader)}</a> reads them.`
    : `Days are days in <strong>${esc(zone)}</strong> (no partitioned Dag you may read cuts this asset's keys in a zone of its own).`;
  $("asset-zone").dataset.zone = zone;
  $("coverage").innerHTML = answer.coverage.series.map((series) => `
    ${series.title ? `<h3>${esc(series.title)}</h3>` : ""}
    <table class="coverage"><thead><tr><th>Day (${esc(zone)})</th><th>Events</th><th>Keys</th></tr></thead><tbody>${series.days.map((d) =>
      `<tr class="${d.closed ? "closed" : d.gap ? "gap" : d.missing_hours.length ? "partial" : ""}" data-day="${esc(d.day)}"><td>${esc(d.day)}${d.days > 1 ? ` – ${esc(d.until)}` : ""}</td><td>${d.events}</td>
       <td>${d.closed && !d.keys.length ? '<span class="muted">closed: no period</span>' : d.gap ? `<strong>gap: no key${d.days > 1 ? ` (${d.days} days)` : ""}</strong>` : d.keys.map((k) => `<code data-key="${esc(k)}">${esc(k)}</code>`).join(" ")}
       ${d.strip && d.strip.length ? `<div class="bars">${d.strip.map((c) => `<span class="bar ${c.state}" title="${esc(c.key)}: ${esc(c.state)}">${esc(c.label)}</span>`).join("")}</div>` : ""}
       ${d.missing_hours.length ? `<br><strong>missing${d.strip && d.strip.length ? "" : " hours"}: ${esc(d.missing_hours.join(", "))}</strong>` : ""}</td></tr>`).join("")}</tbody></table>`).join("") +
    (answer.coverage.other.length ? `<h3>Other keys</h3>${keysHtml(answer.coverage.other)}` : "") ||
    "<p>No partition key has an event yet.</p>";
  $("asset-refusals").innerHTML = refusalsHtml(answer.refusals, answer.refusals.length, true);
}

// -- one listener for every click: cells, zoom, filters, paging, links ------------------------

function plainClick(event) { return !event.ctrlKey && !event.metaKey && !event.shiftKey && event.button === 0; }

document.addEventListener("click", (event) => {
  const target = event.target;
  const cell = target.closest(".cell[data-key]");
  if (cell) {
    choose(cell.dataset.key, event);  // actions.js: the partitions an action takes
    return showDetail(cell.dataset.key);
  }
  const zoom = target.closest(".cell[data-zoom]");
  if (zoom) return requery({ start: zoom.dataset.zoom, end: zoom.dataset.zoomEnd }).catch(showError);
  const filter = target.closest("button[data-filter]");
  if (filter) {
    const wanted = view.query.getAll("state");
    const state = filter.dataset.filter;
    return requery({ state: state === "" ? [] : wanted.includes(state) ? wanted.filter((s) => s !== state) : [...wanted, state] });
  }
  const page = target.closest(".pager button[data-page]");
  if (page) return turnPage(page).catch(showError);
  if (target.closest("[data-close]")) { $("detail").hidden = true; return; }
  const link = target.closest("a[data-dag], a[data-asset]");
  if (link && plainClick(event)) {
    event.preventDefault();
    if (link.dataset.dag) go("/dags/" + enc(link.dataset.dag), link.dataset.query ? new URLSearchParams(link.dataset.query) : null);
    else go("/assets/" + enc(link.dataset.asset));
  }
});
$("dag-filters").addEventListener("change", () => {
  const wanted = [...document.querySelectorAll("#dag-filters input:checked")].map((i) => ["state", i.value]);
  go("/", new URLSearchParams(wanted));
});
$("home").addEventListener("click", (event) => { if (plainClick(event)) { event.preventDefault(); go("/"); } });
$("range").addEventListener("submit", (event) => {
  event.preventDefault();
  requery({ start: $("range").start.value.trim(), end: $("range").end.value.trim() }).catch(showError);
});
$("prev").addEventListener("click", () => requery({ offset: Math.max(0, view.answer.offset - view.answer.limit) || null }));
$("next").addEventListener("click", () => requery({ offset: view.answer.offset + view.answer.limit }));
$("zoom-out").addEventListener("click", () => {
  const start = view.query.get("start"), end = view.query.get("end");
  const parent = zoomedOut(start, end);
  requery({ start: parent, end: parent });
});
$("whole").addEventListener("click", () => requery({ start: null, end: null }));
const ARROWS = { ArrowLeft: [-1, 0], ArrowRight: [1, 0], ArrowUp: [0, -1], ArrowDown: [0, 1] };
document.addEventListener("keydown", (event) => {
  if (event.key === "Escape" && !$("detail").hidden) { $("detail").hidden = true; return; }
  // Arrows move between the cells of a block (Tab and Enter do the rest: cells are buttons).
  const cell = event.target.closest && event.target.closest("button.cell");
  const [dx, dy] = ARROWS[event.key] || [0, 0];
  if (!cell || !(dx || dy)) return;
  const cells = [...cell.closest(".block").querySelectorAll("button.cell")];
  let next = dx ? cells[cells.indexOf(cell) + dx] : null;
  if (dy) {
    const here = cell.getBoundingClientRect();
    let best = Infinity;
    for (const other of cells) {
      const box = other.getBoundingClientRect();
      const rows = (box.top - here.top) * dy;        // rows away in the arrow's direction
      if (rows < here.height / 2) continue;
      const distance = rows * 1000 + Math.abs(box.left - here.left);
      if (distance < best) [best, next] = [distance, other];
    }
  }
  if (next) { event.preventDefault(); next.focus(); }
});
window.addEventListener("popstate", route);
// Once every script of the page ran (actions.js draws the legend's "select" and the action bar).
document.addEventListener("DOMContentLoaded", route);
