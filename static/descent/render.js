// Renderers for the descent lab: plain data in (the API's grid and runs), Plotly out.
// Each plot is drawn once with Plotly.react; stepping through a race only restyles the moving
// parts (travelled paths, heads, their labels).
//
// A path must stay visible on any surface and over any other path: the surface is drawn in
// light greys, each path in its optimizer's colour over a white casing, the future faintly,
// the head as its optimizer's marker with the run's label beside it; the minima are marked.

import { fmtNumber, num } from "../page.js";
import { styles } from "./style.js";

export const fmt = (v) => fmtNumber(v, 4);

// Presentation mode: text and markers a projector shows from the back of the room.
const SCALE = document.body.classList.contains("present") ? 1.5 : 1;
const FONT = { family: "system-ui, sans-serif", size: 11 * SCALE };
const SURFACE_SCALE = [[0, "#ffffff"], [0.4, "#e9ecef"], [1, "#8d959c"]];
const BASIN_COLORS = ["#56B4E9", "#E69F00", "#009E73", "#CC79A7", "#0072B2", "#D55E00"];
// scatter3d knows fewer marker shapes: the nearest one each.
const SYMBOL_3D = { circle: "circle", square: "square", diamond: "diamond", "triangle-up": "cross",
                    "triangle-down": "x", pentagon: "circle-open", star: "square-open", hexagon: "diamond-open" };
const PER_RUN = { "2d": 4, "3d": 2 };  // traces per run: future, casing, path, head / path, head
const layouts = new WeakMap();         // el → where its runs' traces start, and its view

function base(title) {
  return {
    margin: { l: 48, r: 8, t: title ? 24 : 8, b: 32 }, font: FONT, showlegend: false,
    title: title ? { text: title, font: { size: 12 * SCALE }, x: 0.02 } : undefined,
    uirevision: "keep",
  };
}

const xsOf = (run) => run.points.map((p) => num(p[0]));
const ysOf = (run) => run.points.map((p) => num(p[1]));

// The surface with every run's path, the minima, and each run at step `frame`.
export function renderSurface(el, grid, runs, { view, frame, basins = null, minima = [], strings = {} }) {
  const z = grid.z.map((row) => row.map(num));
  const traces = [];
  const style = styles(runs);
  if (view === "3d") {
    traces.push({ type: "surface", x: grid.x, y: grid.y, z, colorscale: SURFACE_SCALE, opacity: 0.9,
      showscale: false, hoverinfo: "x+y+z" });
    if (minima.length) {
      traces.push({ type: "scatter3d", mode: "markers", x: minima.map((m) => m[0]), y: minima.map((m) => m[1]),
        z: minima.map((m) => nearest(grid, z, m)), name: strings.minimum, hovertemplate: `${strings.minimum} (%{x}, %{y})<extra></extra>`,
        marker: { symbol: "x", size: 6, color: "#1f2328" } });
    }
  } else {
    traces.push({ type: "contour", x: grid.x, y: grid.y, z: logish(z), colorscale: SURFACE_SCALE,
      showscale: false, contours: { coloring: "heatmap" }, ncontours: 30, hoverinfo: "x+y",
      line: { width: 0.6, color: "rgba(73,80,87,0.35)" } });
    if (basins) traces.push(basinTrace(el, basins));
    if (minima.length) {
      traces.push({ type: "scatter", mode: "markers", x: minima.map((m) => m[0]), y: minima.map((m) => m[1]),
        name: strings.minimum, hovertemplate: `${strings.minimum} (%{x}, %{y})<extra></extra>`,
        marker: { symbol: "x", size: 15 * SCALE, color: "#1f2328", line: { color: "#ffffff", width: 1.5 } } });
    }
  }
  layouts.set(el, { first: traces.length, view });
  runs.forEach((run, r) => {
    const { color, symbol, dash } = style[r];
    const xs = xsOf(run);
    const ys = ysOf(run);
    if (view === "3d") {
      traces.push({ type: "scatter3d", mode: "lines", x: [], y: [], z: [], line: { color, width: 6, dash }, name: run.label });
      traces.push({ type: "scatter3d", mode: "markers", x: [], y: [], z: [], name: run.label,
        marker: { color, size: 6, symbol: SYMBOL_3D[symbol] ?? "circle", line: { color: "#fff", width: 1 } } });
    } else {
      traces.push({ type: "scatter", mode: "lines", x: xs, y: ys, hoverinfo: "skip", name: run.label,
        line: { color, width: 1.2, dash: "dot" }, opacity: 0.55 });
      traces.push({ type: "scatter", mode: "lines", x: [], y: [], hoverinfo: "skip", line: { color: "#ffffff", width: 6.5 },
        opacity: 0.9 });
      traces.push({ type: "scatter", mode: "lines", x: [], y: [], hoverinfo: "skip", name: run.label, line: { color, width: 3, dash } });
      traces.push({ type: "scatter", mode: "markers", x: [], y: [], name: run.label,
        hovertemplate: `${escapeHtml(run.label)} (%{x:.4g}, %{y:.4g})<extra></extra>`,
        marker: { color, size: 15 * SCALE, symbol, line: { color: "#ffffff", width: 2 } } });
    }
  });
  const layout = { ...base(""), margin: { l: 40, r: 8, t: 8, b: 32 } };
  if (view === "3d") {
    layout.scene = { xaxis: { title: "x" }, yaxis: { title: "y" }, zaxis: { title: strings.loss || "loss" } };
  } else {
    layout.xaxis = { title: "x", range: [grid.x[0], grid.x[grid.x.length - 1]] };
    layout.yaxis = { title: "y", range: [grid.y[0], grid.y[grid.y.length - 1]] };
  }
  return Plotly.react(el, traces, layout, { responsive: true, displaylogo: false })
    .then(() => showFrameOnSurface(el, runs, frame));
}

// Step k on the surface: each travelled path, each head, and each head's label.
export function showFrameOnSurface(el, runs, frame) {
  const at = layouts.get(el);
  if (!at || !el.data) return Promise.resolve();
  const three = at.view === "3d";
  const update = { x: [], y: [], z: [] };
  const indices = [];
  const labels = [];
  const style = styles(runs);
  runs.forEach((run, r) => {
    const k = Math.min(frame, run.points.length - 1);
    const xs = xsOf(run).slice(0, k + 1);
    const ys = ysOf(run).slice(0, k + 1);
    const zs = run.loss.slice(0, k + 1).map(num);
    const i = at.first + r * PER_RUN[at.view];
    const parts = three ? [[i, xs, ys, zs], [i + 1, [xs[k]], [ys[k]], [zs[k]]]]
      : [[i + 1, xs, ys], [i + 2, xs, ys], [i + 3, [xs[k]], [ys[k]]]];
    for (const [index, x, y, z] of parts) {
      indices.push(index);
      update.x.push(x);
      update.y.push(y);
      update.z.push(z ?? null);
    }
    if (Number.isFinite(xs[k]) && Number.isFinite(ys[k])) labels.push(label(run, style[r], r, xs[k], ys[k], three ? zs[k] : null));
  });
  if (!three) delete update.z;
  const layout = three ? { "scene.annotations": labels } : { annotations: labels };
  return Plotly.update(el, update, layout, indices);
}

// The run's name beside its head, in its colour; runs at one point fan out so none hides another.
function label(run, style, r, x, y, z) {
  const side = r % 2 ? -1 : 1;
  const note = { x, y, text: escapeHtml(run.label), showarrow: true, arrowhead: 0, arrowwidth: 1.5,
    arrowcolor: style.color, ax: side * 42 * SCALE, ay: (-26 - 20 * Math.floor(r / 2)) * SCALE, xanchor: side > 0 ? "left" : "right",
    font: { color: "#1f2328", size: 12 * SCALE }, bgcolor: "rgba(255,255,255,0.88)",
    bordercolor: style.color, borderwidth: 2, borderpad: 2 };
  if (z !== null) Object.assign(note, { z, xref: undefined, yref: undefined });
  else Object.assign(note, { xref: "x", yref: "y" });
  return note;
}

const escapeHtml = (s) => String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

// One square per start, coloured by the minimum it reached (none: left clear).
function basinTrace(el, basins) {
  const xs = [], ys = [], colors = [];
  basins.basin.forEach((row, i) => row.forEach((b, j) => {
    if (b < 0) return;
    xs.push(basins.x[j]); ys.push(basins.y[i]); colors.push(BASIN_COLORS[b % BASIN_COLORS.length]);
  }));
  const size = Math.max(4, (el.clientWidth || 600) / (basins.x.length + 4));
  return { type: "scatter", mode: "markers", x: xs, y: ys, hoverinfo: "skip",
    marker: { symbol: "square", size, color: colors, opacity: 0.3, line: { width: 0 } } };
}

// The grid's value nearest a point: where a minimum's marker sits on the 3-D surface.
function nearest(grid, z, [x, y]) {
  const index = (axis, v) => axis.reduce((best, a, i) => (Math.abs(num(a) - v) < Math.abs(num(axis[best]) - v) ? i : best), 0);
  return z[index(grid.y, y)][index(grid.x, x)];
}

// A contour of log(1 + f - min) shows the valley floor of Rosenbrock and the like.
function logish(z) {
  let lo = Infinity;
  for (const row of z) for (const v of row) if (Number.isFinite(v) && v < lo) lo = v;
  return z.map((row) => row.map((v) => (Number.isFinite(v) ? Math.log1p(v - lo) : null)));
}

// A log axis over many decades in a 200 px chart: at most five labels, so they do not overlap.
const LOG_AXIS = { type: "log", exponentformat: "power", nticks: 5 };

// Loss (log scale), lr, and gradient norm before and after (thin, dotted) clipping; each run in
// its optimizer's colour and its dash.
export function renderCharts(els, runs, frame, strings) {
  const style = styles(runs);
  const steps = (n) => Array.from({ length: n }, (_, i) => i);
  const line = (r, y, extra = {}) => ({ type: "scatter", mode: "lines", x: steps(y.length),
    y: y.map(num), line: { color: style[r].color, width: 2, dash: style[r].dash, ...extra }, name: runs[r].label });
  const cursor = (k) => [{ type: "line", xref: "x", yref: "paper", x0: k, x1: k, y0: 0, y1: 1,
    line: { color: "#495057", width: 1 } }];
  const config = { responsive: true, displaylogo: false, displayModeBar: false };
  const clipped = runs.some((run) => run.grad_norm_clipped.some((v, i) => num(v) !== num(run.grad_norm[i])));
  // A log axis hides a loss at or below zero (the saddle, the cliff): those get a linear one.
  const positive = runs.every((run) => run.loss.every((v) => !(num(v) <= 0)));
  return Promise.all([
    Plotly.react(els.loss, runs.map((run, r) => line(r, run.loss)),
      { ...base(strings.loss), yaxis: positive ? LOG_AXIS : {}, shapes: cursor(frame) }, config),
    Plotly.react(els.lr, runs.map((run, r) => line(r, run.lr)),
      { ...base(strings.lr), shapes: cursor(frame) }, config),
    Plotly.react(els.grad, runs.flatMap((run, r) => [line(r, run.grad_norm),
      ...(clipped ? [line(r, run.grad_norm_clipped, { dash: "dot", width: 1.5 })] : [])]),
    { ...base(strings.grad), yaxis: LOG_AXIS, shapes: cursor(frame) }, config),
  ]);
}

export function moveCursor(els, frame) {
  for (const el of [els.loss, els.lr, els.grad]) {
    if (el.data) Plotly.relayout(el, { "shapes[0].x0": frame, "shapes[0].x1": frame });
  }
}

// Per-run numbers at step k: the point, its loss, the lr and gradient norm of the step taken
// there, and the optimizer's state after it (momentum buffer, Adam's m and v, ...).
export function stepValues(run, frame) {
  const k = Math.min(frame, run.points.length - 1);
  const s = Math.min(k, run.lr.length - 1);
  const state = Object.entries(run.state).map(([key, rows]) =>
    `${key} [${(rows[Math.max(0, k - 1)] || []).map(fmt).join(", ")}]`);
  return {
    point: `(${run.points[k].map(fmt).join(", ")})`,
    loss: fmt(run.loss[k]),
    lr: s >= 0 ? fmt(run.lr[s]) + (run.lr_y ? ` / ${fmt(run.lr_y[s])}` : "") : "–",
    grad: s >= 0 && k < run.grad_norm.length
      ? fmt(run.grad_norm[k]) + (num(run.grad_norm_clipped[k]) !== num(run.grad_norm[k]) ? ` → ${fmt(run.grad_norm_clipped[k])}` : "")
      : "–",
    state: k > 0 && state.length ? state.join("; ") : "–",
  };
}
