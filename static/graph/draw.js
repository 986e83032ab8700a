// renderGraph(el, laid, overlay): the laid-out graph as one Plotly figure.
//
// Two layers, because Plotly redraws a whole trace list or shape list whenever one item changes:
//  - static traces, built once per layout: boxes as filled polygons in data units (they zoom with
//    the graph and never overlap, as dagre placed them), edges as lines ending in arrow markers,
//    the labels, and invisible markers that carry hover and click;
//  - a handful of layout shapes and annotations for the backward step: the active node, the edges
//    the gradient has flowed along (one path), the gradients on the active edges, leaf gradients.
// So a step costs a few shapes, not a redraw of 300 labels. Plotly is the global from /vendor.
//
// Text is sized in data units, like the boxes: it grows as the learner zooms in, and
// presentation mode opens the graph at a larger zoom, so a projector shows it large.

import { nodeName } from "./chain.js";
import { FONT } from "./layout.js";
import { fmt, shapeText } from "./tensors.js";

export const COLORS = {
  leaf: { fill: "#d3f9d8", line: "#2b8a3e" },
  op: { fill: "#dbe4ff", line: "#3b5bdb" },
  const: { fill: "#f1f3f5", line: "#868e96" },
  output: { fill: "#ffe8cc", line: "#e8590c" },
  module: { fill: "#f3d9fa", line: "#9c36b5" },
  active: "#f59f00",
  nonfinite: "#e03131",
  selected: "#1f2328",
  edge: { data: "#868e96", detached: "#e03131", no_grad: "#e03131" },
  flow: "#f08c00",
};
const DASH = { data: "solid", detached: "dash", no_grad: "dot" };
const cache = new WeakMap();

const escape = (s) => String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

// How much of each label fits at this zoom (px per data unit).
export function labelMode(scale) {
  if (scale >= 0.7) return "full";
  return scale >= 0.3 ? "short" : "none";
}

// Zoom limits (px per data unit): text at FONT px per unit reads from the back of a room at
// the presentation's minimum, and from a desk at the ordinary one.
const ZOOM = { normal: { min: 0.8, max: 1.6 }, present: { min: 1.3, max: 2.6 } };
const zoomOf = () => ZOOM[document.body.classList.contains("present") ? "present" : "normal"];

// The range that shows the whole graph, or, when that would make labels unreadable, a readable
// window on the output end, where backward starts. `fitAll` shows all of it, however small.
export function initialRange(
  laid,
  widthPx,
  heightPx,
  { fitAll = false, focus: around = null } = {},
) {
  const zoom = zoomOf();
  const fit = Math.min(widthPx / laid.width, heightPx / laid.height, zoom.max);
  const scale = fitAll ? Math.min(fit, zoom.max) : Math.max(fit, zoom.min);
  const outputs = laid.nodes.filter((n) => n.node?.is_output);
  let focus =
    scale > fit && outputs.length
      ? outputs[outputs.length - 1]
      : { x: laid.width / 2, y: laid.height / 2 };
  if (around && scale > fit) focus = around;
  const halfW = widthPx / scale / 2;
  const halfH = heightPx / scale / 2;
  const clamp = (c, half, size) =>
    2 * half >= size ? size / 2 : Math.min(Math.max(c, half), size - half);
  const cx = clamp(focus.x, halfW, laid.width);
  const cy = clamp(focus.y, halfH, laid.height);
  return { x: [cx - halfW, cx + halfW], y: [cy + halfH, cy - halfH] };
}

// The range zoomed by `factor` about its centre, within the zoom limits.
export function zoomRange(range, widthPx, factor) {
  const zoom = zoomOf();
  const [x0, x1] = range.x;
  const scale = Math.min(Math.max((widthPx / (x1 - x0)) * factor, 0.05), zoom.max * 3);
  const f = widthPx / (x1 - x0) / scale;
  const cx = (x0 + x1) / 2;
  const cy = (range.y[0] + range.y[1]) / 2;
  const hw = ((x1 - x0) * f) / 2;
  const hh = (Math.abs(range.y[0] - range.y[1]) * f) / 2;
  return { x: [cx - hw, cx + hw], y: [cy + hh, cy - hh] };
}

export function renderGraph(el, laid, overlay) {
  const {
    active = new Set(),
    leafGrads = new Map(),
    flow = [],
    nonfinite = null,
    selected = null,
    mode = "full",
    range,
    revision,
    hover = {},
    now = null,
  } = overlay;
  let traces = cache.get(el);
  if (!traces || traces.laid !== laid || traces.mode !== mode) {
    traces = { laid, mode, data: staticTraces(laid, mode, hover) };
    cache.set(el, traces);
  }
  // Text as big as the boxes it sits in at this zoom: a new trace object, the same arrays.
  const scale = (el.clientWidth || 600) / Math.abs(range.x[1] - range.x[0]);
  const size = Math.min(48, FONT * scale);
  const labels = traces.data[traces.data.length - 1];
  // `now`: the boxes as of the step on screen (a parameter's value moves with each step()).
  const text = now
    ? {
        text: now.nodes.map((v) => labelText(v, mode)),
        hovertext: now.nodes.map((v) => now.hover[v.id] ?? ""),
      }
    : {};
  const data = [
    ...traces.data.slice(0, -1),
    { ...labels, ...text, textfont: { ...labels.textfont, size } },
  ];
  const noteSize = Math.max(9, Math.min(36, FONT * scale * 0.95));
  const byId = new Map(laid.nodes.map((v) => [v.id, v]));
  const edgeOf = (f) => laid.edges.find((e) => e.source === f.source && e.target === f.target);
  const outline = (v, color, width) => ({
    type: v.kind === "leaf" ? "circle" : "rect",
    xref: "x",
    yref: "y",
    layer: "above",
    x0: v.x - v.w / 2 - 3,
    x1: v.x + v.w / 2 + 3,
    y0: v.y - v.h / 2 - 3,
    y1: v.y + v.h / 2 + 3,
    line: { color, width },
    fillcolor: "rgba(0,0,0,0)",
  });
  const path = (edges, width) => ({
    type: "path",
    xref: "x",
    yref: "y",
    layer: "above",
    line: { color: COLORS.flow, width },
    path: edges
      .map((e) =>
        e.points.map((p, i) => `${i ? "L" : "M"}${p.x.toFixed(1)},${p.y.toFixed(1)}`).join(""),
      )
      .join(""),
  });
  const flowing = flow.map((f) => ({ ...f, edge: edgeOf(f) })).filter((f) => f.edge);
  const shapes = [];
  if (flowing.length)
    shapes.push(
      path(
        flowing.map((f) => f.edge),
        4,
      ),
    );
  if (flowing.some((f) => f.active))
    shapes.push(
      path(
        flowing.filter((f) => f.active).map((f) => f.edge),
        6,
      ),
    );
  if (byId.has(nonfinite)) shapes.push(outline(byId.get(nonfinite), COLORS.nonfinite, 4));
  for (const id of active) if (byId.has(id)) shapes.push(outline(byId.get(id), COLORS.active, 5));
  if (byId.has(selected)) shapes.push(outline(byId.get(selected), COLORS.selected, 2));
  const note = (x, y, text, color, bg) => ({
    x,
    y,
    xref: "x",
    yref: "y",
    text: escape(text),
    showarrow: false,
    font: { size: noteSize, color },
    bgcolor: bg,
    bordercolor: COLORS.flow,
    borderpad: 2,
  });
  const annotations = flowing
    .filter((f) => f.active)
    .map((f) => {
      const points = f.edge.points;
      const a = points[Math.floor((points.length - 1) / 2)];
      const b = points[Math.ceil((points.length - 1) / 2)];
      return note((a.x + b.x) / 2, (a.y + b.y) / 2, fmt(f.grad, 3), "#7a3e00", "#fff3bf");
    });
  for (const [id, grad] of leafGrads) {
    const v = byId.get(id);
    if (v)
      annotations.push(
        note(
          v.x,
          v.y + v.h / 2 + (9 * noteSize) / FONT / scale,
          `grad ${fmt(grad, 1)}`,
          "#1b5e20",
          "#ebfbee",
        ),
      );
  }
  const layout = {
    margin: { l: 0, r: 0, t: 0, b: 0 },
    showlegend: false,
    dragmode: "pan",
    hovermode: "closest",
    plot_bgcolor: "#ffffff",
    paper_bgcolor: "#ffffff",
    uirevision: revision,
    xaxis: { visible: false, range: range.x, zeroline: false },
    yaxis: { visible: false, range: range.y, zeroline: false, scaleanchor: "x" },
    shapes,
    annotations,
  };
  const config = {
    scrollZoom: true,
    displaylogo: false,
    responsive: true,
    modeBarButtonsToRemove: ["select2d", "lasso2d", "autoScale2d"],
    toImageButtonOptions: { filename: "gradient-lab-graph", scale: 2 },
  };
  return Plotly.react(el, data, layout, config);
}

function styleKey(v) {
  if (v.kind === "module") return "module";
  const kind = v.node.is_output ? "output" : v.node.kind;
  return v.node.origin?.startsWith("backward") ? `${kind} dot` : kind;
}

// The outline of a box or, for a leaf, an ellipse, as a closed polygon.
function outlineOf(v) {
  const [hw, hh] = [v.w / 2, v.h / 2];
  if (v.kind === "leaf") {
    return [...Array(25)].map((_, i) => [
      v.x + hw * Math.cos((i * Math.PI) / 12),
      v.y + hh * Math.sin((i * Math.PI) / 12),
    ]);
  }
  return [
    [v.x - hw, v.y - hh],
    [v.x + hw, v.y - hh],
    [v.x + hw, v.y + hh],
    [v.x - hw, v.y + hh],
    [v.x - hw, v.y - hh],
  ];
}

function staticTraces(laid, mode, hover) {
  const boxes = new Map();
  for (const v of laid.nodes) {
    const key = styleKey(v);
    if (!boxes.has(key)) boxes.set(key, { x: [], y: [] });
    const box = boxes.get(key);
    for (const [x, y] of outlineOf(v)) {
      box.x.push(x);
      box.y.push(y);
    }
    box.x.push(null);
    box.y.push(null);
  }
  const boxTraces = [...boxes].map(([key, { x, y }]) => {
    const [kind, dash] = key.split(" ");
    return {
      type: "scatter",
      mode: "lines",
      x,
      y,
      fill: "toself",
      fillcolor: COLORS[kind].fill,
      line: { color: COLORS[kind].line, width: 1.5, dash: dash ?? "solid" },
      hoverinfo: "skip",
    };
  });
  const edgeTraces = Object.keys(DASH).map((kind) =>
    edgeTrace(
      laid.edges.filter((e) => e.kind === kind),
      kind,
    ),
  );
  const labels = {
    type: "scatter",
    mode: "markers+text",
    x: laid.nodes.map((v) => v.x),
    y: laid.nodes.map((v) => v.y),
    text: laid.nodes.map((v) => labelText(v, mode)),
    textfont: { size: FONT, color: "#1f2328" },
    textposition: "middle center",
    marker: {
      size: laid.nodes.map((v) => Math.max(12, Math.min(v.w, v.h) * 0.8)),
      symbol: "square",
      opacity: 0,
    },
    customdata: laid.nodes.map((v) => v.id),
    hovertext: laid.nodes.map((v) => hover[v.id] ?? ""),
    hoverinfo: "text",
    hoverlabel: { align: "left" },
  };
  return [...edgeTraces, ...boxTraces, labels];
}

export function labelText(v, mode) {
  if (mode === "none") return "";
  const [first, ...rest] = v.lines;
  if (mode === "short") return escape(first.split(" = ")[0]);
  return [`<b>${escape(first)}</b>`, ...rest.map(escape)].join("<br>");
}

function edgeTrace(edges, kind) {
  const x = [];
  const y = [];
  const size = [];
  for (const e of edges) {
    e.points.forEach((p, i) => {
      x.push(p.x);
      y.push(p.y);
      size.push(i === e.points.length - 1 ? 10 : 0);
    });
    x.push(null);
    y.push(null);
    size.push(0);
  }
  return {
    type: "scatter",
    mode: "lines+markers",
    x,
    y,
    hoverinfo: "skip",
    line: { color: COLORS.edge[kind], width: 1.5, dash: DASH[kind] },
    marker: {
      symbol: "arrow",
      angleref: "previous",
      size,
      color: COLORS.edge[kind],
      line: { width: 0 },
    },
  };
}

export function centreOf(nodes) {
  if (!nodes.length) return null;
  const xs = nodes.map((v) => v.x);
  const ys = nodes.map((v) => v.y);
  return { x: (Math.min(...xs) + Math.max(...xs)) / 2, y: (Math.min(...ys) + Math.max(...ys)) / 2 };
}

// A range as wide as `range` with node v in it, or null when v is already in view.
export function rangeShowing(range, v) {
  const { x, y } = range;
  const [top, bottom] = [Math.min(...y), Math.max(...y)];
  if (!v || (v.x >= x[0] && v.x <= x[1] && v.y >= top && v.y <= bottom)) return null;
  const halfW = (x[1] - x[0]) / 2;
  const halfH = (bottom - top) / 2;
  return { x: [v.x - halfW, v.x + halfW], y: [v.y + halfH, v.y - halfH] };
}

// Each node's hover text (`t`: the page's strings).
export function hoverTexts(laid, t) {
  const out = {};
  const esc = (s) => String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;");
  for (const v of laid.nodes) {
    if (v.kind === "module") {
      out[v.id] = esc(t("graph.module.hover", { module: v.label, count: v.members.length }));
      continue;
    }
    const n = v.node;
    // No gradient here: it changes with each step, and the inspector shows what is known.
    const lines = [
      `<b>${esc(nodeName(n))}</b>${n.op ? " · " + esc(n.op) : ""}`,
      `${t("graph.inspect.value")}: ${esc(fmt(n.value, 6))}`,
    ];
    if (n.shape?.length) lines.push(`${t("graph.inspect.shape")}: ${esc(shapeText(n.shape))}`);
    out[v.id] = lines.join("<br>");
  }
  return out;
}
