// The Partitions view's actions: choose partitions, see what a backfill (or a discard of stray
// runs) takes, confirm, and the commands' routes do it under the user's own Airflow permissions.
// A click chooses a partition (and shows its detail), ctrl- or cmd-click adds or takes one out,
// shift-click chooses the range from the last one; "select" beside a state in the legend chooses
// every partition of that state (of the range shown). The plan comes from GET …/backfill (the
// dry run of `airflow-partitions backfill`), the write from POST …/backfill with a JSON body:
// the same routes the command line's --api-url calls. Loaded after partitions.js (its view, api).
"use strict";

// The states a chosen key may be in: every state and a period never opened (the plan says what each takes).
const EVERY_STATE = [...MEANING.keys()].filter((s) => s !== "not opened").concat("missing");
const PLANNED = 50;       // partitions the plan lists before asking to confirm (the count covers all)
let chosen = { keys: new Set(), states: new Set(), anchor: null };

/** The "select" button beside a state of the legend: every partition of *state* (*n* of them). */
function chooser(state, n) {
  return n ? `<button type="button" class="choose" data-choose="${esc(state)}" aria-pressed="${chosen.states.has(state)}"
    title="select every ${esc(state)} partition of the range shown (${n}), to backfill or discard">select</button>` : "";
}

/** Forget what was chosen (a new page of partitions is drawn). */
function forgetChoice() {
  chosen = { keys: new Set(), states: new Set(), anchor: null };
  renderChoice();
}

/** Choose partition *key*: alone (a click), in or out (ctrl or cmd), or the range from the last one (shift). */
function choose(key, event) {
  chosen.states.clear();
  if (event.shiftKey && chosen.anchor) {
    const keys = [...document.querySelectorAll("#grid .cell[data-key]")].map((c) => c.dataset.key);
    const [a, b] = [keys.indexOf(chosen.anchor), keys.indexOf(key)].sort((x, y) => x - y);
    if (a >= 0) for (const k of keys.slice(a, b + 1)) chosen.keys.add(k);
  } else if (event.ctrlKey || event.metaKey) {
    if (chosen.keys.has(key)) chosen.keys.delete(key); else chosen.keys.add(key);
    chosen.anchor = key;
  } else {
    chosen.keys = new Set([key]);
    chosen.anchor = key;
  }
  renderChoice();
}

function chooseState(state) {
  const again = chosen.states.has(state) && chosen.states.size === 1;
  chosen = { keys: new Set(), states: again ? new Set() : new Set([state]), anchor: null };
  renderChoice();
}

/** How many partitions are chosen: the keys, or every partition of the chosen states. */
function chosenCount() {
  if (chosen.keys.size) return chosen.keys.size;
  return [...chosen.states].reduce((n, s) => n + (view.answer.states[s] || 0), 0);
}

/** The chosen partitions of the page with a stray pending run (one a key sent again opened beside their runs). */
function strayKeys() {
  const partitions = chosen.keys.size ? [...chosen.keys].map((k) => view.byKey.get(k)).filter(Boolean)
    : view.answer.partitions.filter((p) => chosen.states.has(p.state));
  return partitions.filter((p) => p.pending_again).map((p) => p.partition_key);
}

/** What the routes are asked: the keys chosen (any state), or the states chosen over the range shown. */
function choice() {
  if (chosen.keys.size) return { key: [...chosen.keys], state: EVERY_STATE };
  const found = { state: [...chosen.states] };
  for (const name of ["start", "end"]) if (view.query.get(name)) found[name] = view.query.get(name);
  return found;
}

function renderChoice() {
  if (!view) return;
  document.querySelectorAll("#grid .cell.chosen").forEach((c) => c.classList.remove("chosen"));
  for (const key of chosen.keys) document.querySelector(`#grid .cell[data-key="${CSS.escape(key)}"]`)?.classList.add("chosen");
  document.querySelectorAll("#legend [data-choose]").forEach((b) => b.setAttribute("aria-pressed", chosen.states.has(b.dataset.choose)));
  const n = chosenCount(), strays = strayKeys().length;
  const actions = view.answer.actions || {};
  const may = (name) => actions[name] ? actions[name].allowed : false;
  $("actions").hidden = !n;
  $("chosen-count").textContent = `${plural(n, "partition")} selected`;
  const backfill = $("backfill"), discard = $("discard");
  backfill.textContent = `Backfill ${n}`;
  backfill.disabled = !may("backfill");
  backfill.title = may("backfill") ? "see what a backfill of them takes, then confirm" : actions.backfill?.why || "";
  discard.textContent = `Discard ${plural(strays, "stray run")}`;
  discard.disabled = !strays || !may("discard");
  discard.title = !may("discard") ? actions.discard?.why || "" : strays ? "see the pending runs it removes, then confirm" : "none of them has a pending run beside its runs";
  $("actions-why").textContent = ["backfill", "discard"].map((a) => actions[a] && !actions[a].allowed ? actions[a].why : "").filter(Boolean).join("; ");
}

// -- the plan first, then the user's confirmation -----------------------------------------

async function planBackfill() {
  const params = new URLSearchParams({ limit: PLANNED });
  for (const [name, value] of Object.entries(choice())) for (const v of [].concat(value)) params.append(name, v);
  const plan = await api(`/dags/${enc(view.answer.dag_id)}/backfill?${params}`);
  const dialog = $("plan");
  dialog.dataset.action = "backfill";
  $("plan-body").innerHTML = planHtml(plan) + `<p class="pace"><label>At most <input id="max-active" type="number" min="1" max="1000" value="4"></label>
    queued or running at once, <label><select id="order"><option value="oldest">oldest</option><option value="newest">newest</option></select> first</label></p>`;
  $("confirm").textContent = "Start the backfill";
  $("confirm").disabled = !plan.partitions.some((p) => p.steps.some((s) => s.action === "re-run" || s.action === "run"));
  dialog.showModal();
}

/** A plan as the dry run prints it: each partition's state and steps, the runs, the keys a feed must send. */
function planHtml(plan) {
  const steps = (p) => p.steps.map((s) => `<li data-action="${esc(s.action)}">${esc(stepText(plan.dag_id, p.partition_key, s))}</li>`).join("");
  const rows = plan.partitions.map((p) => `<tr data-key="${esc(p.partition_key)}"><td><code>${esc(p.partition_key)}</code></td>
    <td><span class="state ${cls(p.state)}">${esc(p.state)}</span></td><td><ul>${steps(p) || "<li>nothing</li>"}</ul></td></tr>`).join("");
  const runs = new Set(plan.partitions.flatMap((p) => p.steps.filter((s) => s.action === "re-run" || s.action === "run").map((s) => `${s.dag_id} ${s.partition_key}`)));
  const feeds = plan.feeds.map((f) => `<li>${plural(f.keys.length, "key")} of <code>${esc(f.asset)}</code> a feed must send (POST /api/v2/assets/events, one event each)</li>`).join("");
  const more = plan.total > plan.partitions.length ? `<p class="muted">The first ${plan.partitions.length} of ${plan.total}; the backfill takes every one.</p>` : "";
  return `<h2>Backfill of ${esc(plan.dag_id)}: ${plural(plan.total, "partition")}</h2>
    <table class="plan"><thead><tr><th>Partition</th><th>State</th><th>What it takes</th></tr></thead><tbody>${rows}</tbody></table>${more}
    <p><strong>${plural(runs.size, "Dag run")}</strong> to start${plan.total > plan.partitions.length ? " among these" : ""}.</p>${feeds ? `<ul>${feeds}</ul>` : ""}`;
}

function stepText(dagId, key, s) {
  const where = s.dag_id === dagId && s.partition_key === key ? "" : `${s.dag_id} ${s.partition_key}: `;
  const what = s.action === "re-run" ? `re-run ${s.run_id}` : s.action === "send" ? `send ${plural(s.keys.length, "key")} of ${s.asset}` : s.action;
  return `${where}${what}${s.why ? ` (${s.why})` : ""}`;
}

async function planDiscard() {
  const keys = strayKeys();
  const params = new URLSearchParams(keys.map((k) => ["key", k]));
  const stray = await api(`/dags/${enc(view.answer.dag_id)}/discard?${params}`);
  const dialog = $("plan");
  dialog.dataset.action = "discard";
  dialog.dataset.keys = JSON.stringify(keys);
  $("plan-body").innerHTML = `<h2>Discard ${plural(stray.runs.length, "stray pending run")} of ${esc(stray.dag_id)}</h2>
    <table class="plan"><thead><tr><th>Partition</th><th>Keys it holds</th><th>Since</th></tr></thead><tbody>${stray.runs.map((r) =>
      `<tr data-key="${esc(r.partition_key)}"><td><code>${esc(r.partition_key)}</code></td><td>${r.received.map(esc).join(", ")}</td><td>${esc(when(r.opened_at))}</td></tr>`).join("")}</tbody></table>
    <p class="muted">Their Dag runs and the asset events stay; the keys they hold are removed with them (audit-logged).</p>`;
  $("confirm").textContent = "Discard them";
  $("confirm").disabled = !stray.runs.length;
  dialog.showModal();
}

/** POST *body* (JSON) to the view's API *path*, as the signed-in user; its answer, or an error as api() raises. */
async function write(path, body) {
  const response = await fetch(ROOT + "/api" + path, {
    method: "POST", credentials: "same-origin", body: JSON.stringify(body),
    headers: { Accept: "application/json", "Content-Type": "application/json" },
  });
  return answerOf(response);
}

async function confirmed() {
  const dialog = $("plan");
  const dagId = view.answer.dag_id;
  $("confirm").disabled = true;
  let said;
  if (dialog.dataset.action === "backfill") {
    const done = await write(`/dags/${enc(dagId)}/backfill`, { ...choice(), max_active: Number($("max-active").value), order: $("order").value, limit: PLANNED });
    const b = done.backfill;
    const started = b ? b.runs.filter((r) => r.state && r.state !== "not started").length : 0;
    said = b ? `${b.name}: ${plural(b.runs.length, "Dag run")} of ${dagId}'s backfill, at most ${b.max_active} queued or running at once; ${started} started, the rest as they finish`
      : "Nothing to start: no partition chosen takes a run.";
    if (done.could_not.length) said += `; ${plural(done.could_not.length, "step")} it cannot take (keys a feed must send, or what a backfill cannot do)`;
  } else {
    const done = await write(`/dags/${enc(dagId)}/discard`, { key: JSON.parse(dialog.dataset.keys) });
    said = `Discarded ${plural(done.runs.length, "stray pending run")} of ${dagId} (audit-logged).`;
  }
  dialog.close();
  $("action-result").textContent = said + ".";
  await route();
}

$("backfill").addEventListener("click", () => planBackfill().catch(showError));
$("discard").addEventListener("click", () => planDiscard().catch(showError));
$("clear-choice").addEventListener("click", forgetChoice);
$("confirm").addEventListener("click", (event) => { event.preventDefault(); confirmed().catch((error) => { $("plan").close(); showError(error); }); });
$("legend").addEventListener("click", (event) => {
  const button = event.target.closest("[data-choose]");
  if (button) chooseState(button.dataset.choose);
});
