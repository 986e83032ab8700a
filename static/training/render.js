// The training lab's renderers: each lesson's result, plain data in, Plotly.react out; the
// summary under it in the page's language. Plotly is the global from /vendor.

import { fmtNumber, num, t } from "../page.js";
import { renderLandscape } from "./landscape.js";

const $ = (id) => document.getElementById(id);

// JSON has no NaN or infinity: the server spells them "NaN", "Infinity"; Plotly wants null.
const finite = (values) => values.map((v) => (Number.isFinite(num(v)) ? num(v) : null));
const fmt = (v) => fmtNumber(v, 3);

const CONFIG = { displaylogo: false, responsive: true };
// Presentation mode: chart text a projector shows from the back of the room.
const FONT_PX = document.body.classList.contains("present") ? 18 : 12;
const TITLE_PX = FONT_PX * 1.4; // Plotly's title size for the layout's font
const AXIS = { automargin: true, gridcolor: "#eef1f4", zeroline: false, exponentformat: "power" };

function plot(el, data, layout) {
  const title = layout.title && wrapped(layout.title.text, el.clientWidth);
  const lines = title ? title.split("<br>").length : 1;
  return Plotly.react(el, data, {
    margin: { t: 3 * FONT_PX + (lines - 1) * TITLE_PX * 1.3, r: 12, b: 40, l: 56 },
    font: { size: FONT_PX }, legend: { orientation: "h", y: -0.25 },
    ...layout, ...(title && { title: { ...layout.title, text: title } }),
    xaxis: { ...AXIS, ...layout.xaxis }, yaxis: { ...AXIS, ...layout.yaxis },
  }, CONFIG);
}

// Plotly never wraps a title: break it into lines that fit the chart (a phone's is narrow),
// between words, or anywhere in Chinese. A CJK character is about 1em wide, others about 0.55em.
function wrapped(text, width) {
  const room = Math.max(width - 24, 8 * TITLE_PX);
  const em = (s) => [...s].reduce((sum, c) => sum + (/[\u2e80-\uffef]/.test(c) ? 1 : 0.55), 0);
  const pieces = text.match(/[\u2e80-\uffef]|[^\s\u2e80-\uffef]+\s*|\s+/g) || [text];
  const lines = [""];
  for (const piece of pieces) {
    const last = lines.length - 1;
    if (lines[last] && em(lines[last] + piece.trimEnd()) * TITLE_PX > room) lines.push(piece.trimStart());
    else lines[last] += piece;
  }
  return lines.map((line) => line.trim()).join("<br>");
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

export function renderTraining(run, chunk) {
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
  const perStep = (seconds, losses) => `${(1000 * seconds / losses.length).toFixed(2)} ms`;
  const cells = {
    seconds_fp32: `${result.seconds_fp32.toFixed(3)} s`, seconds_amp: `${result.seconds_amp.toFixed(3)} s`,
    step_fp32: perStep(result.seconds_fp32, result.loss_fp32), step_amp: perStep(result.seconds_amp, result.loss_amp),
    memory_fp32: result.memory_fp32 === null ? t("training.precision.no_memory") : `${(result.memory_fp32 / 2 ** 20).toFixed(1)} MiB`,
    memory_amp: result.memory_amp === null ? t("training.precision.no_memory") : `${(result.memory_amp / 2 ** 20).toFixed(1)} MiB`,
  };
  for (const td of table.querySelectorAll("td[data-key]")) td.textContent = cells[td.dataset.key];
  // Speed per step, since a run that ran out of its time budget did fewer steps.
  const speedup = (result.seconds_fp32 / result.loss_fp32.length) / (result.seconds_amp / result.loss_amp.length);
  const stopped = [["float32", result.loss_fp32], [`autocast ${result.dtype}`, result.loss_amp]]
    .filter(([, losses]) => losses.length < result.steps)
    .map(([run, losses]) => " " + t("training.precision.stopped", { run, done: losses.length, steps: result.steps }));
  panel.querySelector(".summary").textContent = t("training.precision.summary." + result.device, {
    dtype: result.dtype, diff: fmt(result.max_loss_difference), speedup: speedup.toFixed(2),
  }) + stopped.join("");
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

export const RENDER = { flow: renderFlow, accumulation: renderAccumulation, precision: renderPrecision, nan: renderNan, landscape: renderLandscape };
