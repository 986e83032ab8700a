// The descent lab: optimizers racing down a loss surface. This module wires things up:
// read state (the URL) → fetch the grid and the race → render; the drawing is in descent/render.js.

import { ApiError, markStale, postJSON, renderFailure } from "./api.js";
import { readState, writeState } from "./urlstate.js";
import { COLORS, RULES, fmt, moveCursor, renderCharts, renderSurface, stepValues } from "./descent/render.js";

const page = JSON.parse(document.getElementById("page-data").textContent);
const $ = (id) => document.getElementById(id);
const SURFACES = Object.fromEntries(page.surfaces.map((s) => [s.name, s]));
const PRESETS = Object.fromEntries(page.presets.map((p) => [p.id, p]));
const OPTIMIZERS = ["sgd", "momentum", "nesterov", "adam", "adamw", "rmsprop", "adagrad"];
const SCHEDULERS = ["", "step", "multistep", "exponential", "cosine", "plateau", "onecycle", "warmup"];
const CLIPS = ["", "norm", "value"];
const DEFAULT_PRESET = "rosenbrock";
const CUSTOM_RANGE = [-3, 3];

// Every view is a link: this table is the whole of the page's state in the URL.
const FIELDS = [
  { name: "preset", type: String, default: "" },
  { name: "surface", type: String, default: "rosenbrock" },
  { name: "param", type: String, default: "" },
  { name: "expr", type: String, default: "", compress: true },
  { name: "start", type: String, default: "" },
  { name: "steps", type: Number, default: 200 },
  { name: "noise", type: Number, default: 0 },
  { name: "sweep", type: Boolean, default: false },
  { name: "runs", type: String, default: "", compress: true },
  { name: "view", type: String, default: "2d" },
  { name: "basins", type: Boolean, default: false },
  { name: "speed", type: Number, default: 1 },
  { name: "k", type: Number, default: 0 },
];

const state = {
  preset: "", surface: "rosenbrock", param: "", expr: "", start: "", steps: 200, noise: 0,
  sweep: false, runs: "", view: "2d", basins: false, speed: 1, k: 0,
  grid: null, gridKey: "", race: null, basinsMap: null, timer: null, busy: false, clicks: false,
};

function t(key, params = {}) {
  const text = page.strings[key] ?? key;
  return text.replace(/\{(\w+)\}/g, (m, name) => (name in params ? String(params[name]) : m));
}

// --- The form ---------------------------------------------------------------------------------

function applyPreset(id) {
  const preset = PRESETS[id];
  if (!preset) return;
  const surface = SURFACES[preset.surface];
  Object.assign(state, {
    preset: id, surface: preset.surface, expr: "", noise: preset.noise ?? 0, sweep: false,
    steps: preset.steps, start: preset.start.join(","), runs: JSON.stringify(preset.runs), k: 0,
    param: preset.params ? String(Object.values(preset.params)[0]) : "",
  });
  if (!surface) state.param = "";
}

function surfaceBody() {
  if (state.surface === "custom") return { surface: { expr: state.expr } };
  const surface = SURFACES[state.surface];
  const names = Object.keys(surface.params);
  const value = Number(state.param);
  const params = names.length && state.param !== "" && Number.isFinite(value) ? { [names[0]]: value } : {};
  return { surface: state.surface, params };
}

function ranges() {
  const surface = SURFACES[state.surface];
  return surface ? { x_range: surface.x_range, y_range: surface.y_range }
    : { x_range: CUSTOM_RANGE, y_range: CUSTOM_RANGE };
}

function startPoint() {
  const parts = state.start.split(",").map(Number);
  if (parts.length === 2 && parts.every(Number.isFinite)) return parts;
  return SURFACES[state.surface]?.start ?? [1, 1];
}

function runsList() {
  try {
    const runs = JSON.parse(state.runs || "[]");
    if (Array.isArray(runs) && runs.length) return runs;
  } catch { /* a hand-edited link: fall back to one plain run */ }
  return [{ optimizer: "adam", lr: 0.05 }];
}

function showForm() {
  $("preset").value = state.preset;
  $("surface").value = state.surface;
  const surface = SURFACES[state.surface];
  const names = surface ? Object.keys(surface.params) : [];
  $("param-label").hidden = !names.length;
  if (names.length) {
    $("param-name").textContent = names[0];
    $("param").value = state.param || surface.params[names[0]];
  }
  $("formula").textContent = surface ? `f(x, y) = ${surface.formula}` : "";
  $("expr-box").hidden = state.surface !== "custom";
  $("expr").value = state.expr;
  const [x, y] = startPoint();
  $("start-x").value = x;
  $("start-y").value = y;
  $("steps").value = state.steps;
  $("noise").value = state.noise;
  $("sweep").checked = state.sweep;
  $("speed").value = String(state.speed);
  for (const radio of document.querySelectorAll('input[name="view"]')) radio.checked = radio.value === state.view;
  $("basins").setAttribute("aria-pressed", String(state.basins));
  const story = state.preset ? `descent.preset.${state.preset}.story` : "";
  $("story").hidden = !story;
  $("story").textContent = story ? t(story) : "";
  renderRunEditor(runsList());
}

const options = (items, value, label = (v) => v) =>
  items.map((v) => `<option value="${v}"${v === value ? " selected" : ""}>${label(v)}</option>`).join("");

// One row per run: optimizer, lr, y's own lr, torch keyword arguments, scheduler, clip, label.
function renderRunEditor(runs) {
  const box = $("runs");
  box.replaceChildren();
  runs.forEach((run, r) => {
    const { optimizer, lr, lr_y: lrY, scheduler, clip, label, ...rest } = run;
    const { kind: sKind = "", ...sArgs } = scheduler ?? {};
    const row = document.createElement("div");
    row.className = "run-row";
    row.dataset.run = r;
    row.innerHTML = `
      <span class="swatch" style="background:${COLORS[r % COLORS.length]}"></span>
      <select class="optimizer" aria-label="${t("descent.run.optimizer")}">${options(OPTIMIZERS, optimizer)}</select>
      <label>lr <input class="lr" type="number" step="any" size="6"></label>
      <label>${t("descent.run.lr_y")} <input class="lr_y" type="number" step="any" size="6"></label>
      <label>${t("descent.run.options")} <input class="options" size="16" placeholder="weight_decay=0.01"></label>
      <select class="scheduler" aria-label="${t("descent.run.scheduler")}">${options(SCHEDULERS, sKind, (v) => v || t("descent.run.scheduler.none"))}</select>
      <input class="scheduler-args" size="14" placeholder="step_size=100" aria-label="${t("descent.run.scheduler")}">
      <select class="clip" aria-label="${t("descent.run.clip")}">${options(CLIPS, clip?.kind ?? "", (v) => v || t("descent.run.clip.none"))}</select>
      <input class="clip-max" type="number" step="any" size="4" aria-label="${t("descent.run.clip.max")}">
      <input class="label" size="14" placeholder="${t("descent.run.label")}" aria-label="${t("descent.run.label")}">
      <button type="button" class="remove icon" aria-label="${t("descent.run.remove")}">✕</button>`;
    row.querySelector(".lr").value = lr ?? "";
    row.querySelector(".lr_y").value = lrY ?? "";
    row.querySelector(".options").value = pairs(rest);
    row.querySelector(".scheduler-args").value = pairs(sArgs);
    row.querySelector(".clip-max").value = clip?.max ?? "";
    row.querySelector(".label").value = label ?? "";  // user text: a value, never innerHTML
    box.append(row);
  });
}

const pairs = (obj) => Object.entries(obj).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(", ");

function parsePairs(text) {
  const out = {};
  for (const part of text.split(/,(?![^[]*\])/)) {
    const [key, ...value] = part.split("=");
    if (!key.trim()) continue;
    const raw = value.join("=").trim();
    try { out[key.trim()] = JSON.parse(raw); } catch { out[key.trim()] = raw; }
  }
  return out;
}

function readRunEditor() {
  return [...$("runs").querySelectorAll(".run-row")].map((row) => {
    const value = (cls) => row.querySelector(cls).value.trim();
    const run = { optimizer: value(".optimizer"), ...parsePairs(value(".options")) };
    if (value(".lr") !== "") run.lr = Number(value(".lr"));
    if (value(".lr_y") !== "") run.lr_y = Number(value(".lr_y"));
    if (value(".scheduler")) run.scheduler = { kind: value(".scheduler"), ...parsePairs(value(".scheduler-args")) };
    if (value(".clip")) run.clip = { kind: value(".clip"), max: Number(value(".clip-max") || 1) };
    if (value(".label")) run.label = value(".label");
    return run;
  });
}

function readForm() {
  state.surface = $("surface").value;
  state.param = $("param-label").hidden ? "" : $("param").value;
  state.expr = $("expr").value;
  state.start = `${Number($("start-x").value)},${Number($("start-y").value)}`;
  state.steps = Math.max(1, Math.min(5000, Math.round(Number($("steps").value) || 200)));
  state.noise = Math.max(0, Number($("noise").value) || 0);
  state.sweep = $("sweep").checked;
  state.runs = JSON.stringify(readRunEditor());
}

// --- Fetch and render -------------------------------------------------------------------------

async function race({ keepFrame = false } = {}) {
  pause();
  state.busy = true;
  // Disabling the focused button drops focus to <body>: give it back when the race is done, so a
  // keyboard user keeps their place (and their focus ring).
  const refocus = document.activeElement === $("race");
  $("race").disabled = true;
  $("race").textContent = t("descent.racing");
  showError(null);
  try {
    // Nothing is kept until every answer is in: a failure leaves the last race whole.
    const surface = surfaceBody();
    const key = JSON.stringify(surface);
    const fresh = key !== state.gridKey;
    const grid = fresh ? await postJSON("/api/surface", { ...surface, ...ranges(), resolution: 100 }) : state.grid;
    const result = await postJSON("/api/descent", { ...surface, start: startPoint(), steps: state.steps,
      runs: runsList(), noise: state.noise, sweep: state.sweep });
    let basinsMap = fresh ? null : state.basinsMap;
    if (state.basins && !basinsMap) basinsMap = await fetchBasins();
    Object.assign(state, { grid, gridKey: key, race: result, basinsMap });
    if (!keepFrame) state.k = 0;
    state.k = Math.min(state.k, lastFrame());
    await render();
    markStale($("result"), null);
    document.body.dataset.races = String(Number(document.body.dataset.races ?? 0) + 1);
  } catch (err) {
    showError(err, () => race({ keepFrame }));
    // What is drawn is the last race that arrived, not the one the form now asks for.
    markStale($("result"), state.race ? t("net.stale") : null);
  } finally {
    state.busy = false;
    $("race").disabled = false;
    $("race").textContent = t("descent.race");
    if (refocus && document.activeElement === document.body) $("race").focus();
    save();
  }
}

function fetchBasins() {
  const run = runsList()[0];
  return postJSON("/api/basins", { ...surfaceBody(), ...ranges(), resolution: 40,
    steps: Math.min(state.steps, 300), run: { optimizer: run.optimizer, lr: run.lr } });
}

async function showBasins() {
  showError(null);
  try {
    if (state.basins && !state.basinsMap) state.basinsMap = await fetchBasins();
    if (state.race) await render();
  } catch (err) {
    showError(err, showBasins);
  }
  save();
}

const lastFrame = () => Math.max(0, ...(state.race?.runs ?? []).map((run) => run.points.length - 1));
const charts = () => ({ loss: $("chart-loss"), lr: $("chart-lr"), grad: $("chart-grad") });
const chartStrings = () => ({ loss: t("descent.chart.loss"), lr: t("descent.chart.lr"), grad: t("descent.chart.grad_norm") });

async function render() {
  const runs = state.race.runs;
  await renderSurface($("plot"), state.grid, runs, { view: state.view, frame: state.k,
    basins: state.basins ? state.basinsMap : null, strings: { loss: t("descent.col.loss") } });
  // Plotly gives the element its .on once it has drawn there: the first race may have failed.
  if (!state.clicks) state.clicks = Boolean($("plot").on?.("plotly_click", onPlotClick));
  await renderCharts(charts(), runs, state.k, chartStrings());
  renderLegend(runs);
  renderRules(runs);
  $("scrub").max = String(lastFrame());
  showFrame();
}

function renderLegend(runs) {
  const body = $("legend").querySelector("tbody");
  body.replaceChildren();
  runs.forEach((run, r) => {
    const row = document.createElement("tr");
    row.dataset.run = r;
    const name = document.createElement("td");
    const swatch = document.createElement("span");
    swatch.className = "swatch";
    swatch.style.background = COLORS[r % COLORS.length];
    const label = document.createElement("strong");
    label.textContent = run.label;
    const settings = document.createElement("div");
    settings.className = "muted settings";
    const notes = [Object.entries(run.settings).map(([k, v]) => `${k}=${Array.isArray(v) ? v.join("/") : v}`).join(" ")];
    if (run.sweep) notes.push(t("descent.swept", { lr: fmt(run.sweep.picked) }));
    if (run.diverged_at !== null) notes.push(t("descent.diverged", { k: run.diverged_at }));
    settings.textContent = notes.join(" · ");
    name.append(swatch, label, settings);
    row.append(name);
    for (const cls of ["point", "loss", "lr", "grad", "state"]) {
      const cell = document.createElement("td");
      cell.className = cls;
      row.append(cell);
    }
    body.append(row);
  });
}

function renderRules(runs) {
  const list = $("rules");
  list.replaceChildren();
  for (const name of [...new Set(runs.map((run) => run.optimizer))]) {
    const dt = document.createElement("dt");
    dt.textContent = name;
    const dd = document.createElement("dd");
    dd.textContent = RULES[name] ?? "";
    list.append(dt, dd);
  }
}

// Step k everywhere at once: markers, travelled paths, chart cursors, legend numbers.
function showFrame() {
  const runs = state.race?.runs ?? [];
  const plot = $("plot");
  const perRun = state.view === "3d" ? 2 : 3;
  const first = plot.data ? plot.data.length - runs.length * perRun : 0;
  const update = { x: [], y: [], z: [] };
  const indices = [];
  runs.forEach((run, r) => {
    const k = Math.min(state.k, run.points.length - 1);
    const xs = run.points.slice(0, k + 1).map((p) => Number(p[0]));
    const ys = run.points.slice(0, k + 1).map((p) => Number(p[1]));
    const zs = run.loss.slice(0, k + 1).map(Number);
    const at = first + r * perRun + (perRun - 2);
    update.x.push(xs, [xs[k]]);
    update.y.push(ys, [ys[k]]);
    update.z.push(zs, [zs[k]]);
    indices.push(at, at + 1);
  });
  if (state.view !== "3d") delete update.z;
  if (plot.data && indices.length) Plotly.restyle(plot, update, indices);
  moveCursor(charts(), state.k);
  for (const row of $("legend").querySelectorAll("tbody tr")) {
    const run = runs[Number(row.dataset.run)];
    row.classList.toggle("diverged", run.diverged_at !== null && state.k >= run.diverged_at);
    const values = stepValues(run, state.k);
    for (const [cls, text] of Object.entries(values)) row.querySelector(`.${cls}`).textContent = text;
  }
  $("scrub").value = String(state.k);
  $("position").textContent = t("descent.position", { k: state.k, n: lastFrame() });
  document.body.dataset.frame = String(state.k);
}

function showError(err, retry) {
  const box = $("error");
  if (err?.retry) return renderFailure(box, err, t, retry);
  box.hidden = !err;
  box.replaceChildren();
  if (!err) return;
  const message = document.createElement("p");
  message.className = "error-message";
  message.textContent = err instanceof ApiError && err.line ? `${err.message} (line ${err.line})` : err.message;
  box.append(message);
  if (err.hint) {
    const hint = document.createElement("p");
    hint.textContent = err.hint;
    box.append(hint);
  }
}

// --- Playback ---------------------------------------------------------------------------------

function setFrame(k) {
  state.k = Math.max(0, Math.min(lastFrame(), k));
  showFrame();
}

function play() {
  if (!state.race) return;
  if (state.k >= lastFrame()) setFrame(0);
  $("play").setAttribute("aria-pressed", "true");
  $("play").textContent = t("descent.pause");
  // A whole race takes about 6 s at 1×, however many steps it has and however slow the drawing.
  const k0 = state.k;
  const t0 = performance.now();
  state.timer = setInterval(() => {
    const seconds = (performance.now() - t0) / 1000;
    setFrame(k0 + Math.max(1, Math.round((seconds * state.speed * lastFrame()) / 6)));
    if (state.k >= lastFrame()) { pause(); save(); }
  }, 30);
}

function pause() {
  if (state.timer) clearInterval(state.timer);
  state.timer = null;
  $("play").setAttribute("aria-pressed", "false");
  $("play").textContent = t("descent.play");
}

function save() {
  writeState(FIELDS, state);
}

// --- Wiring -----------------------------------------------------------------------------------

$("preset").addEventListener("change", () => {
  if (!$("preset").value) return;
  applyPreset($("preset").value);
  state.basinsMap = null;
  showForm();
  race();
});
$("surface").addEventListener("change", () => {
  state.preset = "";
  state.surface = $("surface").value;
  state.param = "";
  state.start = "";
  const surface = SURFACES[state.surface];
  if (surface) {
    // Each run takes the lr that suits this surface; a preset's label would now be wrong.
    state.runs = JSON.stringify(runsList().map(({ label, ...run }) =>
      ({ ...run, lr: surface.lr[run.optimizer] ?? run.lr })));
  }
  showForm();
  if (state.surface !== "custom") race();
});
$("race").addEventListener("click", () => { readForm(); state.preset = ""; race(); });
$("add-run").addEventListener("click", () => {
  const runs = readRunEditor();
  const optimizer = OPTIMIZERS[runs.length % OPTIMIZERS.length];
  runs.push({ optimizer, lr: SURFACES[state.surface]?.lr[optimizer] ?? 0.01 });
  renderRunEditor(runs);
});
$("runs").addEventListener("click", (event) => {
  const remove = event.target.closest(".remove");
  if (!remove) return;
  const runs = readRunEditor();
  if (runs.length > 1) runs.splice(Number(remove.closest(".run-row").dataset.run), 1);
  renderRunEditor(runs);
});
$("play").addEventListener("click", () => (state.timer ? pause() : play()));
$("back").addEventListener("click", () => { pause(); setFrame(state.k - 1); save(); });
$("next").addEventListener("click", () => { pause(); setFrame(state.k + 1); save(); });
$("scrub").addEventListener("input", () => { pause(); setFrame(Number($("scrub").value)); });
$("scrub").addEventListener("change", save);
$("speed").addEventListener("change", () => { state.speed = Number($("speed").value); save(); });
for (const radio of document.querySelectorAll('input[name="view"]')) {
  radio.addEventListener("change", async () => { state.view = radio.value; if (state.race) await render(); save(); });
}
$("basins").addEventListener("click", () => {
  state.basins = !state.basins;
  $("basins").setAttribute("aria-pressed", String(state.basins));
  showBasins();
});
$("copy-link").addEventListener("click", async () => {
  const url = await writeState(FIELDS, state);
  await navigator.clipboard?.writeText(new URL(url, location.href).href).catch(() => {});
});
// The start is where the learner clicks on the contour.
function onPlotClick(event) {
  const point = event.points?.[0];
  if (!point || state.view === "3d" || state.busy) return;
  state.start = `${fmt(point.x)},${fmt(point.y)}`;
  state.preset = "";
  state.runs = JSON.stringify(readRunEditor());
  showForm();
  race();
}

async function init() {
  Object.assign(state, await readState(FIELDS));
  // A bare #preset=<id> link (from /lessons) names a story: fill in its surface and runs.
  if (!location.hash) applyPreset(DEFAULT_PRESET);
  else if (state.preset && !state.runs) applyPreset(state.preset);
  showForm();
  await race({ keepFrame: true });
}

window.addEventListener("load", init);
