// Renderers for the descent lab: plain data in (the API's grid and runs), Plotly out.
// Each plot is drawn once with Plotly.react; scrubbing only restyles the moving parts.

export const COLORS = ["#d9480f", "#1971c2", "#2f9e44", "#9c36b5", "#f08c00", "#0c8599",
  "#e64980", "#5c940d", "#364fc7", "#c92a2a", "#495057", "#862e9c"];

// Each optimizer's update rule, as torch.optim documents it (g: the gradient, θ: x and y).
export const RULES = {
  sgd: "θ ← θ − lr·g",
  momentum: "b ← μ·b + g;  θ ← θ − lr·b   (μ = 0.9)",
  nesterov: "b ← μ·b + g;  θ ← θ − lr·(g + μ·b)",
  adam: "m ← β₁m + (1−β₁)g;  v ← β₂v + (1−β₂)g²;  θ ← θ − lr·m̂ / (√v̂ + ε)",
  adamw: "θ ← θ − lr·λ·θ;  then Adam's step (decay decoupled from g)",
  rmsprop: "v ← αv + (1−α)g²;  θ ← θ − lr·g / (√v + ε)",
  adagrad: "s ← s + g²;  θ ← θ − lr·g / (√s + ε)",
};

// JSON spells inf and NaN as strings; Number() reads them back.
export const num = (v) => (typeof v === "number" ? v : Number(v));

export function fmt(v) {
  const x = num(v);
  if (!Number.isFinite(x)) return String(x);
  if (x === 0) return "0";
  const a = Math.abs(x);
  return a >= 1e4 || a < 1e-3 ? x.toExponential(2) : x.toPrecision(4).replace(/\.?0+$/, "");
}

const FONT = { family: "system-ui, sans-serif", size: 11 };

function base(title) {
  return {
    margin: { l: 48, r: 8, t: title ? 24 : 8, b: 32 }, font: FONT, showlegend: false,
    title: title ? { text: title, font: { size: 12 }, x: 0.02 } : undefined,
    uirevision: "keep",
  };
}

// The surface with every run's path: full path faint, travelled path bold, a marker at step k.
export function renderSurface(el, grid, runs, { view, frame, basins = null, strings = {} }) {
  const z = grid.z.map((row) => row.map(num));
  const traces = [];
  if (view === "3d") {
    traces.push({ type: "surface", x: grid.x, y: grid.y, z, colorscale: "Viridis", opacity: 0.85,
      showscale: false, hoverinfo: "x+y+z" });
  } else {
    traces.push({ type: "contour", x: grid.x, y: grid.y, z: logish(z), colorscale: "Viridis",
      showscale: false, contours: { coloring: "heatmap" }, ncontours: 30, hoverinfo: "x+y",
      line: { width: 0.5, color: "rgba(255,255,255,0.35)" } });
    if (basins) {
      // One square per start, coloured by the minimum it reached (none: left clear).
      const xs = [], ys = [], colors = [];
      basins.basin.forEach((row, i) => row.forEach((b, j) => {
        if (b < 0) return;
        xs.push(basins.x[j]); ys.push(basins.y[i]); colors.push(COLORS[b % COLORS.length]);
      }));
      const size = Math.max(4, (el.clientWidth || 600) / (basins.x.length + 4));
      traces.push({ type: "scatter", mode: "markers", x: xs, y: ys, hoverinfo: "skip",
        marker: { symbol: "square", size, color: colors, opacity: 0.35, line: { width: 0 } } });
    }
  }
  runs.forEach((run, r) => {
    const color = COLORS[r % COLORS.length];
    const xs = run.points.map((p) => num(p[0]));
    const ys = run.points.map((p) => num(p[1]));
    const k = Math.min(frame, xs.length - 1);
    if (view === "3d") {
      const zs = run.loss.map(num);
      traces.push({ type: "scatter3d", mode: "lines", x: xs.slice(0, k + 1), y: ys.slice(0, k + 1),
        z: zs.slice(0, k + 1), line: { color, width: 5 }, name: run.label });
      traces.push({ type: "scatter3d", mode: "markers", x: [xs[k]], y: [ys[k]], z: [zs[k]],
        marker: { color, size: 5 }, name: run.label });
    } else {
      traces.push({ type: "scatter", mode: "lines", x: xs, y: ys, hoverinfo: "skip",
        line: { color, width: 1, dash: "dot" }, opacity: 0.5, name: run.label });
      traces.push({ type: "scatter", mode: "lines", x: xs.slice(0, k + 1), y: ys.slice(0, k + 1),
        line: { color, width: 2.5 }, hoverinfo: "skip", name: run.label });
      traces.push({ type: "scatter", mode: "markers", x: [xs[k]], y: [ys[k]], name: run.label,
        marker: { color, size: 10, line: { color: "#fff", width: 1.5 } } });
    }
  });
  const layout = { ...base(""), margin: { l: 40, r: 8, t: 8, b: 32 } };
  if (view === "3d") {
    layout.scene = { xaxis: { title: "x" }, yaxis: { title: "y" }, zaxis: { title: strings.loss || "loss" } };
  } else {
    layout.xaxis = { title: "x", range: [grid.x[0], grid.x[grid.x.length - 1]] };
    layout.yaxis = { title: "y", range: [grid.y[0], grid.y[grid.y.length - 1]] };
  }
  return Plotly.react(el, traces, layout, { responsive: true, displaylogo: false });
}

// A contour of log(1 + f - min) shows the valley floor of Rosenbrock and the like.
function logish(z) {
  let lo = Infinity;
  for (const row of z) for (const v of row) if (Number.isFinite(v) && v < lo) lo = v;
  return z.map((row) => row.map((v) => (Number.isFinite(v) ? Math.log1p(v - lo) : null)));
}

// A log axis over many decades in a 200 px chart: at most five labels, so they do not overlap.
const LOG_AXIS = { type: "log", exponentformat: "power", nticks: 5 };

// Loss (log scale), lr, and gradient norm before (solid) and after (dashed) clipping.
export function renderCharts(els, runs, frame, strings) {
  const steps = (n) => Array.from({ length: n }, (_, i) => i);
  const line = (r, y, extra = {}) => ({ type: "scatter", mode: "lines", x: steps(y.length),
    y: y.map(num), line: { color: COLORS[r % COLORS.length], width: 1.5, ...extra }, name: runs[r].label });
  const cursor = (k) => [{ type: "line", xref: "x", yref: "paper", x0: k, x1: k, y0: 0, y1: 1,
    line: { color: "#868e96", width: 1 } }];
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
      ...(clipped ? [line(r, run.grad_norm_clipped, { dash: "dash" })] : [])]),
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
    state: k > 0 ? state.join("; ") : "–",
  };
}
