// The training lab: five lessons, each a form → POST /api/training/<lesson> → Plotly charts.
// The training loop streams: one server-sent event per chunk of steps (api.js postEvents).
// This module wires things up: read state → fetch → render. All state is in the URL hash.

import { ApiError, markStale, postEvents, postJSON, renderFailure } from "./api.js";
import { readState, writeState } from "./urlstate.js";

const page = JSON.parse(document.getElementById("page-data").textContent);
const $ = (id) => document.getElementById(id);
const LESSONS = ["flow", "train", "accumulation", "precision", "nan"];

// Every view is a link: this table is the whole of the page's state in the URL.
const FIELDS = [
  { name: "lesson", type: String, default: "flow" },
  { name: "flow.depth", type: Number, default: 20 },
  { name: "flow.width", type: Number, default: 64 },
  { name: "flow.activation", type: String, default: "sigmoid" },
  { name: "flow.init", type: String, default: "default" },
  { name: "flow.batchnorm", type: Boolean, default: false },
  { name: "flow.residual", type: Boolean, default: false },
  { name: "flow.steps", type: Number, default: 20 },
  { name: "flow.lr", type: Number, default: 0.1 },
  { name: "train.dataset", type: String, default: "moons" },
  { name: "train.points", type: Number, default: 1000 },
  { name: "train.noise", type: Number, default: 0.1 },
  { name: "train.depth", type: Number, default: 2 },
  { name: "train.width", type: Number, default: 64 },
  { name: "train.activation", type: String, default: "relu" },
  { name: "train.optimizer", type: String, default: "adam" },
  { name: "train.lr", type: Number, default: 0.01 },
  { name: "train.weight_decay", type: Number, default: 0 },
  { name: "train.scheduler", type: String, default: "none" },
  { name: "train.batch_size", type: Number, default: 100 },
  { name: "train.accumulation", type: Number, default: 1 },
  { name: "train.clip", type: String, default: "none" },
  { name: "train.max_norm", type: Number, default: 1 },
  { name: "train.steps", type: Number, default: 300 },
  { name: "accumulation.micro_batches", type: Number, default: 4 },
  { name: "accumulation.micro_batch", type: Number, default: 32 },
  { name: "precision.steps", type: Number, default: 40 },
  { name: "precision.width", type: Number, default: 256 },
  { name: "precision.batch", type: Number, default: 512 },
  { name: "precision.device", type: String, default: "auto" },
  { name: "nan.cause", type: String, default: "lr" },
  { name: "nan.fix", type: String, default: "none" },
  { name: "nan.steps", type: Number, default: 100 },
];

const state = { values: {}, running: null };

function t(key, params = {}) {
  const text = page.strings[key] ?? key;
  return text.replace(/\{(\w+)\}/g, (m, name) => (name in params ? String(params[name]) : m));
}

// JSON has no NaN or infinity: the server spells them "NaN", "Infinity"; Plotly wants null.
const num = (v) => (typeof v === "string" ? Number(v) : v);
const finite = (values) => values.map((v) => (Number.isFinite(num(v)) ? num(v) : null));
const fmt = (v) => {
  const n = num(v);
  if (!Number.isFinite(n)) return String(n);
  return n !== 0 && (Math.abs(n) < 1e-3 || Math.abs(n) >= 1e4) ? n.toExponential(2) : n.toPrecision(3);
};

// --- State: URL ↔ form fields -----------------------------------------------------------------

function fieldsOf(lesson) {
  return FIELDS.filter((f) => f.name.startsWith(lesson + "."));
}

function fillForms() {
  for (const field of FIELDS) {
    const input = document.querySelector(`[name="${field.name}"]`);
    if (!input) continue;
    if (field.type === Boolean) input.checked = Boolean(state.values[field.name]);
    else input.value = String(state.values[field.name]);
  }
  for (const button of document.querySelectorAll("[data-fix]")) {
    button.setAttribute("aria-pressed", String(button.dataset.fix === state.values["nan.fix"]));
  }
}

function readForm(lesson) {
  for (const field of fieldsOf(lesson)) {
    const input = document.querySelector(`[name="${field.name}"]`);
    if (!input) continue;
    if (field.type === Boolean) state.values[field.name] = input.checked;
    else if (field.type === Number) state.values[field.name] = Number(input.value);
    else state.values[field.name] = input.value;
  }
}

function requestOf(lesson) {
  const body = {};
  for (const field of fieldsOf(lesson)) body[field.name.slice(lesson.length + 1)] = state.values[field.name];
  return body;
}

function showLesson(lesson) {
  for (const id of LESSONS) {
    $("panel-" + id).hidden = id !== lesson;
    $("tab-" + id).setAttribute("aria-selected", String(id === lesson));
  }
}

// --- Running a lesson ------------------------------------------------------------------------

async function run(lesson) {
  readForm(lesson);
  await writeState(FIELDS, state.values);
  const panel = $("panel-" + lesson);
  const results = panel.querySelector(".results");
  showError(panel, null);
  panel.classList.add("busy");
  try {
    if (lesson === "train") {
      await train(requestOf("train"), results);
    } else {
      RENDER[lesson](panel, await postJSON(`/api/training/${lesson}`, requestOf(lesson)));
      drawn(results);
    }
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    showError(panel, err, () => { if (!state.running) run(lesson); });
    // What is drawn is an earlier run's (a training run that broke off says so in train()).
    if (lesson !== "train" && results.dataset.drawn) markStale(results, t("net.stale"));
  } finally {
    panel.classList.remove("busy");
    // A counter the browser tests wait on: one more each time a lesson has been drawn.
    document.body.dataset.runs = String(Number(document.body.dataset.runs ?? 0) + 1);
  }
}

// The figures now answer the latest request.
function drawn(results) {
  markStale(results, null);
  results.dataset.drawn = "1";
}

function showError(panel, err, retry) {
  const box = panel.querySelector(".error");
  if (err?.retry) return renderFailure(box, err, t, retry);
  box.hidden = !err;
  box.replaceChildren();
  if (!err) return;
  const message = document.createElement("p");
  message.textContent = err.message;
  box.append(message);
  if (err.hint) {
    const hint = document.createElement("p");
    hint.className = "muted";
    hint.textContent = err.hint;
    box.append(hint);
  }
}

// The loop streams one event per chunk of steps; each is drawn as it arrives.
async function train(body, results) {
  const controller = new AbortController();
  state.running = controller;
  $("stop").disabled = false;
  const run = { loss: [], grad_norm: [], clipped_norm: [], lr: [], data: null };
  let last = null;
  setProgress(0, body.steps, "training.progress.start");
  try {
    for await (const chunk of postEvents("/api/training/run", body, { signal: controller.signal })) {
      for (const key of ["loss", "grad_norm", "clipped_norm", "lr"]) run[key].push(...chunk[key]);
      run.data = chunk.data ?? run.data;
      last = chunk;
      const done = chunk.start + chunk.loss.length;
      renderTraining(run, chunk);
      drawn(results);
      const key = chunk.diverged ? "training.progress.diverged" : "training.progress.step";
      setProgress(done, chunk.total, key, { accuracy: (100 * chunk.accuracy).toFixed(1) });
    }
    // A stream that ends early without saying why was cut off, not finished.
    if (!last?.diverged && run.loss.length < (last?.total ?? body.steps)) {
      throw new ApiError({ type: "interrupted", message: `the stream ended after ${run.loss.length} steps` }, 0);
    }
  } catch (err) {
    if (err.name === "AbortError") {
      $("progress-text").textContent = t("training.progress.stopped", { step: run.loss.length });
      return;
    }
    const total = last?.total ?? body.steps;
    if (last) {
      $("progress-text").textContent = t("training.progress.broke_off", { step: run.loss.length, total });
      markStale(results, t("training.partial", { step: run.loss.length, total }));
    } else {
      $("progress-text").textContent = t("training.progress.not_started");
      if (results.dataset.drawn) markStale(results, t("net.stale"));
    }
    throw err;
  } finally {
    state.running = null;
    $("stop").disabled = true;
    document.body.dataset.trained = String(run.loss.length);
  }
}

function setProgress(done, total, key, params = {}) {
  $("progress").max = total;
  $("progress").value = done;
  $("progress-text").textContent = t(key, { step: done, total, ...params });
}

// --- Renderers: plain data in, Plotly.react out ----------------------------------------------

const CONFIG = { displaylogo: false, responsive: true };
const AXIS = { automargin: true, gridcolor: "#eef1f4", zeroline: false, exponentformat: "power" };

function plot(el, data, layout) {
  return Plotly.react(el, data, {
    margin: { t: 36, r: 12, b: 40, l: 56 }, font: { size: 12 }, legend: { orientation: "h", y: -0.25 },
    ...layout, xaxis: { ...AXIS, ...layout.xaxis }, yaxis: { ...AXIS, ...layout.yaxis },
  }, CONFIG);
}

function renderFlow(panel, flow) {
  const norms = finite(flow.norms);
  plot($("flow-bars"), [{ type: "bar", x: flow.layers, y: norms, marker: { color: "#3b5bdb" },
    hovertemplate: "%{x}: %{y:.3e}<extra></extra>" }],
  { title: { text: t("training.flow.bars") }, yaxis: { type: "log", title: { text: "‖∂L/∂W‖" } } });
  const z = flow.heatmap.map((row) => finite(row).map((v) => (v > 0 ? Math.log10(v) : null)));
  plot($("flow-heatmap"), [{ type: "heatmap", z, y: flow.layers, colorscale: "Viridis",
    colorbar: { title: { text: "log₁₀" } }, hovertemplate: "%{y}, step %{x}: 10^%{z:.1f}<extra></extra>" }],
  { title: { text: t("training.flow.heatmap") }, xaxis: { title: { text: t("training.axis.step") } } });
  const max = Math.max(...norms.filter((v) => v !== null));
  const verdict = num(flow.ratio) < 1e-3 ? "vanishing" : max > 1e3 ? "exploding" : "healthy";
  panel.querySelector(".summary").textContent = t("training.flow.summary", { ratio: fmt(flow.ratio), max: fmt(max) })
    + " " + t("training.flow.verdict." + verdict);
  panel.querySelector(".summary").dataset.verdict = verdict;
}

function renderTraining(run, chunk) {
  const steps = run.loss.map((_, i) => i);
  const line = (y, name, color, extra = {}) => ({ type: "scatter", mode: "lines", x: steps, y: finite(y), name, line: { color, width: 1.5 }, ...extra });
  plot($("train-loss"), [line(run.loss, t("training.train.loss"), "#d9480f")],
    { title: { text: t("training.train.loss") }, yaxis: { type: "log" }, showlegend: false });
  plot($("train-norm"), [line(run.grad_norm, t("training.train.before"), "#868e96"),
    line(run.clipped_norm, t("training.train.after"), "#3b5bdb", { line: { color: "#3b5bdb", width: 1.5, dash: "dot" } })],
  { title: { text: t("training.train.norm") }, yaxis: { type: "log" } });
  // From zero, so a constant lr is a flat line at its height, not the middle of an empty axis.
  const top = Math.max(...finite(run.lr).filter((v) => v !== null)) * 1.15;
  plot($("train-lr"), [line(run.lr, "lr", "#2b8a3e")], { title: { text: t("training.train.lr") },
    xaxis: { title: { text: t("training.axis.step") } }, yaxis: { range: [0, top] }, showlegend: false });
  const { x, y, grid_x, grid_y } = run.data;
  const points = (label, color) => ({
    type: "scatter", mode: "markers", name: t("training.train.class", { label }),
    x: x.filter((_, i) => y[i] === label).map((p) => p[0]), y: x.filter((_, i) => y[i] === label).map((p) => p[1]),
    marker: { size: 4, color, line: { width: 0.5, color: "#fff" } }, hoverinfo: "skip",
  });
  plot($("train-boundary"), [
    { type: "heatmap", x: grid_x, y: grid_y, z: chunk.boundary, zmin: 0, zmax: 1, showscale: false, hoverinfo: "skip",
      colorscale: [[0, "#a5d8ff"], [0.5, "#f8f9fa"], [1, "#ffc9c9"]] },
    points(0, "#1c7ed6"), points(1, "#e03131"),
  ], { title: { text: t("training.train.boundary") }, yaxis: { scaleanchor: "x" } });
}

function renderAccumulation(panel, acc) {
  const bar = (key, color) => ({ type: "bar", name: t("training.accumulation." + key), x: acc.layers, y: finite(acc[key]), marker: { color } });
  plot($("accumulation-bars"), [bar("big_batch", "#868e96"), bar("accumulated", "#3b5bdb"), bar("undivided", "#e03131")],
    { title: { text: t("training.accumulation.bars") }, barmode: "group", yaxis: { title: { text: "‖∂L/∂W‖" } } });
  panel.querySelector(".summary").textContent = t("training.accumulation.summary", {
    diff: fmt(acc.max_difference), undivided: fmt(acc.max_difference_undivided), ratio: num(acc.ratio_undivided).toFixed(2),
  });
}

function renderPrecision(panel, result) {
  const steps = result.loss_fp32.map((_, i) => i);
  plot($("precision-loss"), [
    { type: "scatter", mode: "lines", name: "float32", x: steps, y: finite(result.loss_fp32), line: { color: "#868e96", width: 2 } },
    { type: "scatter", mode: "lines", name: `autocast ${result.dtype}`, x: steps, y: finite(result.loss_amp), line: { color: "#d9480f", width: 1.5, dash: "dot" } },
  ], { title: { text: t("training.precision.loss") }, xaxis: { title: { text: t("training.axis.step") } } });
  const table = panel.querySelector("table.figures");
  table.hidden = false;
  $("precision-dtype").textContent = `autocast (${result.dtype}${result.scaler ? " + GradScaler" : ""})`;
  const n = result.loss_fp32.length;
  const cells = {
    seconds_fp32: `${result.seconds_fp32.toFixed(3)} s`, seconds_amp: `${result.seconds_amp.toFixed(3)} s`,
    step_fp32: `${(1000 * result.seconds_fp32 / n).toFixed(2)} ms`, step_amp: `${(1000 * result.seconds_amp / n).toFixed(2)} ms`,
    memory_fp32: result.memory_fp32 === null ? t("training.precision.no_memory") : `${(result.memory_fp32 / 2 ** 20).toFixed(1)} MiB`,
    memory_amp: result.memory_amp === null ? t("training.precision.no_memory") : `${(result.memory_amp / 2 ** 20).toFixed(1)} MiB`,
  };
  for (const td of table.querySelectorAll("td[data-key]")) td.textContent = cells[td.dataset.key];
  panel.querySelector(".summary").textContent = t("training.precision.summary." + result.device, {
    dtype: result.dtype, diff: fmt(result.max_loss_difference), speedup: (result.seconds_fp32 / result.seconds_amp).toFixed(2),
  });
}

function renderNan(panel, hunt) {
  const steps = hunt.loss.map((_, i) => i);
  const at = hunt.first_nonfinite_step;
  const mark = at === null ? [] : [{ type: "line", x0: at, x1: at, yref: "paper", y0: 0, y1: 1, line: { color: "#e03131", dash: "dash" } }];
  const note = at === null ? [] : [{ x: at, yref: "paper", y: 1, text: t("training.nan.mark", { step: at }), showarrow: false, yanchor: "bottom", font: { color: "#e03131" } }];
  const layout = (key) => ({ title: { text: t(key) }, yaxis: { type: "log" }, xaxis: { title: { text: t("training.axis.step") } }, shapes: mark, annotations: note, showlegend: false });
  plot($("nan-loss"), [{ type: "scatter", mode: "lines+markers", x: steps, y: finite(hunt.loss), marker: { size: 3 }, line: { color: "#d9480f" } }], layout("training.nan.loss"));
  plot($("nan-norm"), [{ type: "scatter", mode: "lines+markers", x: steps, y: finite(hunt.grad_norm), marker: { size: 3 }, line: { color: "#3b5bdb" } }], layout("training.nan.norm"));
  const summary = panel.querySelector(".summary");
  summary.dataset.step = at === null ? "" : String(at);
  summary.textContent = at === null
    ? t("training.nan.finite", { steps: hunt.loss.length })
    : t("training.nan.found", { step: at, phase: t("training.nan.phase." + hunt.origin.phase), module: hunt.origin.module, op: hunt.origin.op })
      + " " + t("training.nan.why." + hunt.cause);
  summary.classList.toggle("bad", at !== null);
}

const RENDER = { flow: renderFlow, accumulation: renderAccumulation, precision: renderPrecision, nan: renderNan };

// --- Wiring ------------------------------------------------------------------------------------

for (const form of document.querySelectorAll("form[data-lesson]")) {
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (!state.running) run(form.dataset.lesson);
  });
}
for (const button of document.querySelectorAll("[role=tab]")) {
  button.addEventListener("click", async () => {
    state.values.lesson = button.dataset.lesson;
    showLesson(state.values.lesson);
    await writeState(FIELDS, state.values);
  });
}
for (const button of document.querySelectorAll("[data-preset]")) {
  button.addEventListener("click", () => {
    const preset = { "flow.batchnorm": false, "flow.residual": false, "flow.init": "default" };
    for (const [key, value] of Object.entries(page.choices.flow_presets[button.dataset.preset])) preset["flow." + key] = value;
    Object.assign(state.values, preset);
    fillForms();
    run("flow");
  });
}
for (const button of document.querySelectorAll("[data-fix]")) {
  button.addEventListener("click", () => {
    readForm("nan");
    state.values["nan.fix"] = button.dataset.fix;
    fillForms();
    run("nan");
  });
}
$("stop").addEventListener("click", () => state.running?.abort());

async function start() {
  state.values = await readState(FIELDS);
  if (!LESSONS.includes(state.values.lesson)) state.values.lesson = "flow";
  fillForms();
  showLesson(state.values.lesson);
  await run(state.values.lesson);  // each link opens with its lesson already run
}

// A link pasted into the address bar changes only the hash: open what it says (writeState uses
// replaceState, which fires no hashchange).
window.addEventListener("hashchange", () => {
  state.running?.abort();
  start();
});
start();
