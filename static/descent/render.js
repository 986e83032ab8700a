// Renderers for the descent lab: plain data in (the API's grid and runs), Plotly out.
// Each plot is drawn once with Plotly.react; stepping through a race only restyles the moving
// parts (travelled paths, heads, their labels).
//
// A path must stay visible on any surface and over any other path: the surface is drawn in
// light greys, each path in its optimizer's colour over a white casing, the future faintly,
// the head as its optimizer's marker with the run's label beside it; the minima are marked. A
// diverged run ends in a ✕ where it left the plot; the previous race, when kept for comparison,
// lies faded under this one.

import { fmtNumber, num } from "../page.js";
import { labelOf, styles } from "./style.js";

export const fmt = (v) => fmtNumber(v, 4);

// Presentation mode: text and markers a projector shows from the back of the room.
const SCALE = document.body.classList.contains("present") ? 1.5 : 1;
const FONT = { family: "system-ui, sans-serif", size: 11 * SCALE };
const SURFACE_SCALE = [
  [0, "#ffffff"],
  [0.4, "#e9ecef"],
  [1, "#8d959c"],
];
const BASIN_COLORS = ["#56B4E9", "#E69F00", "#009E73", "#CC79A7", "#0072B2", "#D55E00"];
// scatter3d knows fewer marker shapes: the nearest one each.
const SYMBOL_3D = {
  circle: "circle",
  square: "square",
  diamond: "diamond",
  "triangle-up": "cross",
  "triangle-down": "x",
  pentagon: "circle-open",
  star: "square-open",
  hexagon: "diamond-open",
};
// Traces per run: future, casing, path, head, where it left the plot / path, head.
const PER_RUN = { "2d": 5, "3d": 2 };
const LINE = 3 * SCALE; // a path's width: 4.5 px on a projector
const layouts = new WeakMap(); // el → where its runs' traces start, and its view

function base(title) {
  return {
    margin: { l: 48, r: 8, t: title ? 24 : 8, b: 32 },
    font: FONT,
    showlegend: false,
    title: title ? { text: title, font: { size: 12 * SCALE }, x: 0.02 } : undefined,
    uirevision: "keep",
  };
}

const xsOf = (run) => run.points.map((p) => num(p[0]));
const ysOf = (run) => run.points.map((p) => num(p[1]));

// The surface with every run's path (its future faintly, unless `future` is false), the minima,
// each run at step `frame`, and the `overlay` traces over them all (2D).
export function renderSurface(
  el,
  grid,
  runs,
  {
    view,
    frame,
    basins = null,
    minima = [],
    strings = {},
    previous = [],
    future = true,
    overlay = [],
  },
) {
  const { z, shaded } = surfaceValues(grid);
  const traces = [];
  const style = styles(runs);
  if (view === "3d") {
    traces.push({
      type: "surface",
      x: grid.x,
      y: grid.y,
      z,
      colorscale: SURFACE_SCALE,
      opacity: 0.9,
      showscale: false,
      hoverinfo: "x+y+z",
    });
    if (minima.length) {
      traces.push({
        type: "scatter3d",
        mode: "markers",
        x: minima.map((m) => m[0]),
        y: minima.map((m) => m[1]),
        z: minima.map((m) => nearest(grid, z, m)),
        name: strings.minimum,
        hovertemplate: `${strings.minimum} (%{x}, %{y})<extra></extra>`,
        marker: { symbol: "x", size: 6, color: "#1f2328" },
      });
    }
  } else {
    traces.push({
      type: "contour",
      x: grid.x,
      y: grid.y,
      z: shaded,
      colorscale: SURFACE_SCALE,
      showscale: false,
      contours: { coloring: "heatmap" },
      ncontours: 30,
      hoverinfo: "x+y",
      line: { width: 0.6, color: "rgba(73,80,87,0.35)" },
    });
    if (basins) traces.push(basinTrace(el, basins));
    if (minima.length) {
      traces.push({
        type: "scatter",
        mode: "markers",
        x: minima.map((m) => m[0]),
        y: minima.map((m) => m[1]),
        name: strings.minimum,
        hovertemplate: `${strings.minimum} (%{x}, %{y})<extra></extra>`,
        marker: {
          symbol: "x",
          size: 15 * SCALE,
          color: "#1f2328",
          line: { color: "#ffffff", width: 1.5 },
        },
      });
    }
  }
  if (view !== "3d") traces.push(...previousTraces(previous, runs.length, strings.before));
  layouts.set(el, { first: traces.length, view, strings, runs: runs.length });
  const box = {
    x: [grid.x[0], grid.x[grid.x.length - 1]],
    y: [grid.y[0], grid.y[grid.y.length - 1]],
  };
  runs.forEach((run, r) => {
    const { color, symbol, dash } = style[r];
    const [xs, ys] = onPlot(run, exitPoint(run, box), run.points.length);
    if (view === "3d") {
      traces.push({
        type: "scatter3d",
        mode: "lines",
        x: [],
        y: [],
        z: [],
        line: { color, width: 6, dash },
        name: run.label,
      });
      traces.push({
        type: "scatter3d",
        mode: "markers",
        x: [],
        y: [],
        z: [],
        name: run.label,
        marker: {
          color,
          size: 6,
          symbol: SYMBOL_3D[symbol] ?? "circle",
          line: { color: "#fff", width: 1 },
        },
      });
    } else {
      traces.push({
        type: "scatter",
        mode: "lines",
        x: xs,
        y: ys,
        hoverinfo: "skip",
        name: run.label,
        line: { color, width: 1.2, dash: "dot" },
        opacity: 0.55,
        visible: future,
      });
      traces.push({
        type: "scatter",
        mode: "lines",
        x: [],
        y: [],
        hoverinfo: "skip",
        line: { color: "#ffffff", width: LINE + 3.5 },
        opacity: 0.9,
      });
      traces.push({
        type: "scatter",
        mode: "lines",
        x: [],
        y: [],
        hoverinfo: "skip",
        name: run.label,
        line: { color, width: LINE, dash },
      });
      traces.push({
        type: "scatter",
        mode: "markers",
        x: [],
        y: [],
        name: run.label,
        hovertemplate: `${escapeHtml(run.label)} (%{x:.4g}, %{y:.4g})<extra></extra>`,
        marker: { color, size: 15 * SCALE, symbol, line: { color: "#ffffff", width: 2 } },
      });
      traces.push({
        type: "scatter",
        mode: "markers",
        x: [],
        y: [],
        name: run.label,
        hoverinfo: "skip",
        marker: { color, size: 22 * SCALE, symbol: "x-thin", line: { color, width: 4 * SCALE } },
        cliponaxis: false,
      });
    }
  });
  if (view !== "3d") traces.push(...overlay);
  const layout = { ...base(""), margin: { l: 40, r: 8, t: 8, b: 32 } };
  if (view === "3d") {
    layout.scene = {
      xaxis: { title: "x" },
      yaxis: { title: "y" },
      zaxis: { title: strings.loss || "loss" },
    };
  } else {
    layout.xaxis = { title: "x", range: [grid.x[0], grid.x[grid.x.length - 1]] };
    layout.yaxis = { title: "y", range: [grid.y[0], grid.y[grid.y.length - 1]] };
  }
  return Plotly.react(el, traces, layout, { responsive: true, displaylogo: false }).then(() =>
    showFrameOnSurface(el, runs, frame),
  );
}

// Each run's path to come, faint, shown or hidden (while a class predicts it) without drawing
// the plot again.
export function showFuture(el, shown) {
  const at = layouts.get(el);
  if (!at || at.view === "3d" || !el.data) return Promise.resolve();
  const indices = Array.from({ length: at.runs }, (_, r) => at.first + r * PER_RUN["2d"]);
  return Plotly.restyle(el, { visible: shown }, indices);
}

// Step k on the surface: each travelled path, each head, each head's label, and where a diverged
// run left the plot once it has.
export function showFrameOnSurface(el, runs, frame) {
  const at = layouts.get(el);
  if (!at || !el.data) return Promise.resolve();
  const three = at.view === "3d";
  const update = { x: [], y: [], z: [] };
  const indices = [];
  const heads = [];
  const style = styles(runs);
  const box = three ? null : { x: el.layout.xaxis.range, y: el.layout.yaxis.range };
  runs.forEach((run, r) => {
    const k = Math.min(frame, run.points.length - 1);
    const exit = three ? null : exitPoint(run, box);
    const gone = exit && k >= exit.k;
    const [xs, ys] = three
      ? [xsOf(run).slice(0, k + 1), ysOf(run).slice(0, k + 1)]
      : onPlot(run, exit, k + 1);
    const zs = run.loss.slice(0, k + 1).map(num);
    const i = at.first + r * PER_RUN[at.view];
    const parts = three
      ? [
          [i, xs, ys, zs],
          [i + 1, [xs[k]], [ys[k]], [zs[k]]],
        ]
      : [
          [i + 1, xs, ys],
          [i + 2, xs, ys],
          [i + 3, [xs[k]], [ys[k]]],
          [i + 4, gone ? [exit.x] : [], gone ? [exit.y] : []],
        ];
    for (const [index, x, y, z] of parts) {
      indices.push(index);
      update.x.push(x);
      update.y.push(y);
      update.z.push(z ?? null);
    }
    // A run the learner did not name is named by its optimizer, as the menu names it.
    const name = run.label === run.optimizer ? labelOf(run.optimizer) : run.label;
    const text = gone ? `${name}: ${at.strings.diverged(run.diverged_at)}` : name;
    const [hx, hy] = gone ? [exit.x, exit.y] : [xs[k], ys[k]];
    if (Number.isFinite(hx) && Number.isFinite(hy))
      heads.push({ r, x: hx, y: hy, z: three ? zs[k] : null, text, gone });
  });
  if (!three) delete update.z;
  const labels = three
    ? heads.map((head) => label3d(head, style[head.r]))
    : placeLabels(el, heads).map((head) => label(head, style[head.r]));
  const layout = three ? { "scene.annotations": labels } : { annotations: labels };
  return Plotly.update(el, update, layout, indices);
}

// The first n points of a run's path, cut where it left the plot (its exit, when it has one): past
// it the path would cross the plot again as long lines between points far outside.
function onPlot(run, exit, n) {
  const xs = xsOf(run).slice(0, n);
  const ys = ysOf(run).slice(0, n);
  if (!exit || n <= exit.k) return [xs, ys];
  return [
    [...xs.slice(0, exit.k), exit.x],
    [...ys.slice(0, exit.k), exit.y],
  ];
}

// Where a diverged run left the plot: the edge its path crossed, and the step it crossed at
// (or its last finite point, where it blew up inside). Null for a run that did not diverge.
export function exitPoint(run, box) {
  if (run.diverged_at === null || run.diverged_at === undefined) return null;
  const xs = xsOf(run);
  const ys = ysOf(run);
  const inside = (k) =>
    Number.isFinite(xs[k]) &&
    Number.isFinite(ys[k]) &&
    xs[k] >= box.x[0] &&
    xs[k] <= box.x[1] &&
    ys[k] >= box.y[0] &&
    ys[k] <= box.y[1];
  let k = 0;
  while (k + 1 < xs.length && inside(k + 1)) k += 1;
  const next = k + 1;
  if (next >= xs.length || !Number.isFinite(xs[next]) || !Number.isFinite(ys[next]))
    return { k, x: xs[k], y: ys[k] };
  // The segment from k to k + 1 leaves the box: the first edge it meets, by the fraction along it.
  const t = Math.min(
    ...[0, 1].flatMap((axis) => {
      const [from, to] = axis ? [ys[k], ys[next]] : [xs[k], xs[next]];
      const [lo, hi] = axis ? box.y : box.x;
      const d = to - from;
      return [lo, hi]
        .map((edge) => (d ? (edge - from) / d : Infinity))
        .filter((f) => f >= 0 && f <= 1);
    }),
    1,
  );
  return { k: next, x: xs[k] + t * (xs[next] - xs[k]), y: ys[k] + t * (ys[next] - ys[k]) };
}

// Labels beside the heads, stacked so that none covers another: each side of the plot (a head in
// its left part labels to the right) keeps its labels at least one label's height apart,
// in pixels, from the top down, and inside the plot.
export function placeLabels(el, heads) {
  const full = el._fullLayout;
  const height = 24 * SCALE;
  const plotHeight = full?._size?.h ?? 400;
  const plotWidth = full?._size?.w ?? 600;
  const placed = heads.map((head) => {
    const px = full ? full.xaxis.l2p(head.x) : 0;
    const py = full ? full.yaxis.l2p(head.y) : 0;
    return { ...head, px, py, side: px < plotWidth * 0.6 ? 1 : -1 };
  });
  for (const side of [1, -1]) {
    const column = placed.filter((head) => head.side === side).sort((a, b) => a.py - b.py);
    let y = -Infinity;
    for (const head of column) {
      head.ly = Math.max(head.py - 28 * SCALE, y + height, height / 2);
      y = head.ly;
    }
    // Pushed past the bottom: the column moves up as a whole, as far as the top allows.
    const over = y - (plotHeight - height / 2);
    if (over > 0) for (const head of column) head.ly = Math.max(height / 2, head.ly - over);
  }
  return placed.map((head) => ({ ...head, ax: head.side * 44 * SCALE, ay: head.ly - head.py }));
}

// The run's name beside its head (or its ✕), in its colour, where placeLabels put it.
function label(head, style) {
  return {
    x: head.x,
    y: head.y,
    xref: "x",
    yref: "y",
    text: escapeHtml(head.text),
    showarrow: true,
    arrowhead: 0,
    arrowwidth: 1.5,
    arrowcolor: style.color,
    ax: head.ax,
    ay: head.ay,
    xanchor: head.side > 0 ? "left" : "right",
    yanchor: "middle",
    font: { color: head.gone ? "#c92a2a" : "#1f2328", size: 12 * SCALE },
    bgcolor: "rgba(255,255,255,0.9)",
    bordercolor: style.color,
    borderwidth: 2,
    borderpad: 2,
  };
}

// On the 3-D surface, labels fan out by run so that none hides another.
function label3d(head, style) {
  const side = head.r % 2 ? -1 : 1;
  return {
    x: head.x,
    y: head.y,
    z: head.z,
    text: escapeHtml(head.text),
    showarrow: true,
    arrowhead: 0,
    arrowwidth: 1.5,
    arrowcolor: style.color,
    ax: side * 42 * SCALE,
    ay: (-26 - 20 * Math.floor(head.r / 2)) * SCALE,
    xanchor: side > 0 ? "left" : "right",
    font: { color: "#1f2328", size: 12 * SCALE },
    bgcolor: "rgba(255,255,255,0.88)",
    bordercolor: style.color,
    borderwidth: 2,
    borderpad: 2,
  };
}

// The previous race's paths, faded, for comparison with the one that replaced it: one slot per
// run, empty when there is none, so that a redraw keeps its traces where they were (Plotly then
// redraws only what changed, not the contour under them).
function previousTraces(previous, slots, before) {
  const style = styles(previous);
  return Array.from({ length: Math.max(slots, previous.length) }, (_, r) => {
    const run = previous[r];
    return {
      type: "scatter",
      mode: "lines",
      x: run ? xsOf(run) : [],
      y: run ? ysOf(run) : [],
      hoverinfo: "skip",
      name: run ? `${run.label} (${before})` : "",
      opacity: 0.3,
      line: {
        color: run ? style[r].color : "#000000",
        width: LINE * 0.8,
        dash: run ? style[r].dash : "solid",
      },
    };
  });
}

const escapeHtml = (s) =>
  String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

// One square per start, coloured by the minimum it reached (none: left clear).
function basinTrace(el, basins) {
  const xs = [],
    ys = [],
    colors = [];
  basins.basin.forEach((row, i) =>
    row.forEach((b, j) => {
      if (b < 0) return;
      xs.push(basins.x[j]);
      ys.push(basins.y[i]);
      colors.push(BASIN_COLORS[b % BASIN_COLORS.length]);
    }),
  );
  const size = Math.max(4, (el.clientWidth || 600) / (basins.x.length + 4));
  return {
    type: "scatter",
    mode: "markers",
    x: xs,
    y: ys,
    hoverinfo: "skip",
    marker: { symbol: "square", size, color: colors, opacity: 0.3, line: { width: 0 } },
  };
}

// The grid's value nearest a point: where a minimum's marker sits on the 3-D surface.
function nearest(grid, z, [x, y]) {
  const index = (axis, v) =>
    axis.reduce(
      (best, a, i) => (Math.abs(num(a) - v) < Math.abs(num(axis[best]) - v) ? i : best),
      0,
    );
  return z[index(grid.y, y)][index(grid.x, x)];
}

// The grid's values and their shading, made once per grid: a race again on the same surface hands
// Plotly.react the same arrays, so it keeps the contour it drew instead of tracing it again.
const surfaceCache = new WeakMap();
function surfaceValues(grid) {
  if (!surfaceCache.has(grid)) {
    const z = grid.z.map((row) => row.map(num));
    surfaceCache.set(grid, { z, shaded: logish(z) });
  }
  return surfaceCache.get(grid);
}

// A contour of log(1 + f - min) shows the valley floor of Rosenbrock and the like.
function logish(z) {
  let lo = Infinity;
  for (const row of z) for (const v of row) if (Number.isFinite(v) && v < lo) lo = v;
  return z.map((row) => row.map((v) => (Number.isFinite(v) ? Math.log1p(v - lo) : null)));
}

// A log axis over many decades in a 200 px chart: at most five labels, so they do not overlap.
const LOG_AXIS = { type: "log", exponentformat: "power", nticks: 5 };

// Loss, lr, and gradient norm before and after (thin, dotted) clipping; each run in its colour
// and dash. An axis is a log one only where every value on it is above zero (a typed surface's
// loss may be negative), and each title says which scale its axis has.
export function renderCharts(els, runs, frame, strings) {
  const style = styles(runs);
  const steps = (n) => Array.from({ length: n }, (_, i) => i);
  const line = (r, y, extra = {}) => ({
    type: "scatter",
    mode: "lines",
    x: steps(y.length),
    y: y.map(num),
    line: { color: style[r].color, width: 2 * SCALE, dash: style[r].dash, ...extra },
    name: runs[r].label,
  });
  const cursor = (k) => [
    {
      type: "line",
      xref: "x",
      yref: "paper",
      x0: k,
      x1: k,
      y0: 0,
      y1: 1,
      line: { color: "#495057", width: 1 },
    },
  ];
  const config = { responsive: true, displaylogo: false, displayModeBar: false };
  const clipped = runs.some((run) =>
    run.grad_norm_clipped.some((v, i) => num(v) !== num(run.grad_norm[i])),
  );
  const positive = (lists) => lists.every((values) => values.every((v) => !(num(v) <= 0)));
  const lossLog = positive(runs.map((run) => run.loss));
  const gradLog = positive(runs.flatMap((run) => [run.grad_norm, run.grad_norm_clipped]));
  const titles = chartTitles(strings, { lossLog, gradLog, clipped });
  return Promise.all([
    Plotly.react(
      els.loss,
      runs.map((run, r) => line(r, run.loss)),
      {
        ...base(titles.loss),
        yaxis: lossLog ? LOG_AXIS : { type: "linear" },
        shapes: cursor(frame),
      },
      config,
    ),
    Plotly.react(
      els.lr,
      runs.map((run, r) => line(r, run.lr)),
      { ...base(titles.lr), yaxis: { type: "linear" }, shapes: cursor(frame) },
      config,
    ),
    Plotly.react(
      els.grad,
      runs.flatMap((run, r) => [
        line(r, run.grad_norm),
        ...(clipped ? [line(r, run.grad_norm_clipped, { dash: "dot", width: 1.5 })] : []),
      ]),
      {
        ...base(titles.grad),
        yaxis: gradLog ? LOG_AXIS : { type: "linear" },
        shapes: cursor(frame),
      },
      config,
    ),
  ]);
}

// Each chart's title from its axis's real scale, and the dotted lines only where there are any.
export function chartTitles(strings, { lossLog, gradLog, clipped }) {
  const scaled = (name, log) => (log ? `${name} (${strings.log})` : name);
  const grad = scaled(strings.grad, gradLog);
  return {
    loss: scaled(strings.loss, lossLog),
    lr: strings.lr,
    grad: clipped ? `${grad} · ${strings.clipped}` : grad,
  };
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
  const state = Object.entries(run.state).map(
    ([key, rows]) => `${key} [${(rows[Math.max(0, k - 1)] || []).map(fmt).join(", ")}]`,
  );
  return {
    point: `(${run.points[k].map(fmt).join(", ")})`,
    loss: fmt(run.loss[k]),
    lr: s >= 0 ? fmt(run.lr[s]) + (run.lr_y ? ` / ${fmt(run.lr_y[s])}` : "") : "–",
    grad:
      s >= 0 && k < run.grad_norm.length
        ? fmt(run.grad_norm[k]) +
          (num(run.grad_norm_clipped[k]) !== num(run.grad_norm[k])
            ? ` → ${fmt(run.grad_norm_clipped[k])}`
            : "")
        : "–",
    state: k > 0 && state.length ? state.join("; ") : "–",
  };
}
