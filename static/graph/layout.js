// From the API's graph to positioned boxes: hide clutter, fold module calls, lay out with dagre.
// Pure functions over plain data; `dagre` is the vendored global.

import { nodeName, opShort } from "./chain.js";
import { blockRuns } from "./blocks.js";
import { valuesSeen } from "./steps.js";
import { flat, fmt, isSummary, shapeText } from "./tensors.js";

// Ops that only reshape or re-view a tensor: bookkeeping a learner can hide.
const VIEW_OPS = new Set([
  "ViewBackward0",
  "ReshapeAliasBackward0",
  "UnsafeViewBackward0",
  "TBackward0",
  "TransposeBackward0",
  "PermuteBackward0",
  "ExpandBackward0",
  "SqueezeBackward0",
  "SqueezeBackward1",
  "SqueezeBackward2",
  "UnsqueezeBackward0",
  "AsStridedBackward0",
  "AliasBackward0",
  "CloneBackward0",
]);

export const moduleKey = (node) => (node.module ? node.module.split(".")[0] : null);

// The nodes and edges to draw: each visible API node, or one box per folded module call.
// `only`: the nodes of the one iteration drawn (a loop); the others are left out altogether.
// `rollUp`: a module called several times in what is drawn is one box, ×N, until opened.
export function buildView(
  graph,
  { simple = false, expanded = new Set(), only = null, rollUp = false } = {},
) {
  if (only)
    graph = {
      ...graph,
      nodes: graph.nodes.filter((n) => only.has(n.id)),
      edges: graph.edges.filter((e) => only.has(e.source) && only.has(e.target)),
    };
  const byId = new Map(graph.nodes.map((n) => [n.id, n]));
  const hidden = (n) => simple && (n.kind === "const" || (n.kind === "op" && VIEW_OPS.has(n.op)));
  const calls = moduleCalls(graph, byId, rollUp);
  const runs = blockRuns(graph, calls);
  // The box a node is drawn in: its own, its folded module call's, or its run of blocks'.
  const boxOf = (id) => {
    const call = calls.get(id);
    if (call && !expanded.has(call.module)) return call.box;
    const run = runs.get(id);
    return run && !expanded.has(run.module) ? run.box : id;
  };
  const folded = (id) => (calls.get(id)?.box === boxOf(id) ? calls.get(id) : runs.get(id));
  const inputs = new Map();
  for (const e of graph.edges) {
    if (!inputs.has(e.target)) inputs.set(e.target, []);
    inputs.get(e.target).push(e);
  }
  // A hidden node passes its own inputs through to its consumers.
  const shown = new Map();
  const visibleSources = (id, kind) => {
    const n = byId.get(id);
    if (!n) return [];
    if (!hidden(n)) return [{ id, kind }];
    if (n.kind === "const") return [];
    const key = id + kind;
    if (!shown.has(key)) {
      shown.set(key, []);
      shown.set(
        key,
        (inputs.get(id) ?? []).flatMap((e) =>
          visibleSources(e.source, e.kind === "data" ? kind : e.kind),
        ),
      );
    }
    return shown.get(key);
  };
  const nodes = new Map();
  for (const n of graph.nodes) {
    if (hidden(n)) continue;
    const id = boxOf(n.id);
    if (id === n.id)
      nodes.set(id, { id, kind: n.kind, members: [n.id], node: n, seen: valuesSeen(graph, n) });
    else if (nodes.has(id)) nodes.get(id).members.push(n.id);
    else
      nodes.set(id, {
        id,
        kind: "module",
        module: folded(n.id).module,
        label: folded(n.id).label,
        members: [n.id],
        node: null,
      });
  }
  const edges = new Map();
  for (const e of graph.edges) {
    const target = byId.get(e.target);
    if (!target || hidden(target)) continue;
    for (const s of visibleSources(e.source, e.kind)) {
      const source = boxOf(s.id);
      const t = boxOf(target.id);
      if (source === t) continue;
      const key = `${source}>${t}>${s.kind}`;
      if (!edges.has(key)) edges.set(key, { source, target: t, kind: s.kind, members: [] });
      edges.get(key).members.push([s.id, e.target]);
    }
  }
  return {
    nodes: [...nodes.values()],
    edges: [...edges.values()],
    boxOf,
    hidden: (id) => hidden(byId.get(id)),
  };
}

// Each call of a top-level module: its ops that connect to one another. A model called in a
// loop six times is six boxes, not one; its parameters fold in only when it was called once.
function moduleCalls(graph, byId, rollUp) {
  const parent = new Map();
  const find = (id) => {
    while (parent.get(id) !== id) id = parent.get(id);
    return id;
  };
  const inCall = (n) => n && moduleKey(n) && n.kind !== "leaf";
  for (const n of graph.nodes) if (inCall(n)) parent.set(n.id, n.id);
  for (const e of graph.edges) {
    const [a, b] = [byId.get(e.source), byId.get(e.target)];
    if (inCall(a) && inCall(b) && moduleKey(a) === moduleKey(b)) parent.set(find(a.id), find(b.id));
  }
  const components = new Map();
  for (const id of parent.keys()) {
    const module = moduleKey(byId.get(id));
    if (!components.has(module)) components.set(module, []);
    const roots = components.get(module);
    if (!roots.includes(find(id))) roots.push(find(id));
  }
  // Numbered as the program called them: by the first tensor each call made (the walk meets
  // them from the loss back, so its order is backward's, not the program's).
  const first = new Map();
  for (const id of parent.keys()) {
    const made = byId.get(id).made ?? Infinity;
    const root = find(id);
    first.set(root, Math.min(first.get(root) ?? Infinity, made));
  }
  for (const roots of components.values()) roots.sort((a, b) => first.get(a) - first.get(b));
  const calls = new Map();
  for (const id of parent.keys()) {
    const module = moduleKey(byId.get(id));
    const roots = components.get(module);
    const i = roots.indexOf(find(id));
    if (rollUp && roots.length > 1)
      calls.set(id, {
        module,
        call: i,
        box: `module:${module}:all`,
        label: `${module} ×${roots.length}`,
      });
    else
      calls.set(id, {
        module,
        call: i,
        box: `module:${module}:${i}`,
        label: roots.length > 1 ? `${module} #${i + 1}` : module,
      });
  }
  for (const n of graph.nodes) {
    const roots = components.get(moduleKey(n));
    if (n.kind === "leaf" && roots?.length === 1)
      calls.set(n.id, {
        module: moduleKey(n),
        call: 0,
        box: `module:${moduleKey(n)}:0`,
        label: moduleKey(n),
      });
    else if (n.kind === "leaf" && roots && rollUp)
      calls.set(n.id, { ...calls.get(roots[0]), shared: true }); // into the ×N box
  }
  return calls;
}

// A value in a box: a number or a short vector as numbers ({eq: true}); a matrix or a long vector
// as its shape, [2×3] (the inspector shows its numbers as a table).
function valueText(n) {
  const v = n.value;
  if (v === null || v === undefined) return null;
  const shape = n.shape ?? (isSummary(v) ? v.shape : null);
  const few = !isSummary(v) && (shape?.length ?? 0) <= 1 && flat(v).length <= 3;
  return few ? { text: fmt(v, 3), eq: true } : { text: `[${shapeText(shape) || "?"}]`, eq: false };
}

// The text in a box: the learner's name and value, and the op that made it.
export function labelLines(vnode) {
  if (vnode.kind === "module") return [vnode.label, `▸ ${vnode.members.length}`];
  const n = vnode.node;
  const value = valueText(n);
  const named = (name) => (value === null ? name : `${name}${value.eq ? " = " : " "}${value.text}`);
  if (n.kind === "const") return [n.name ? named(n.name) : (value?.text ?? "?")];
  const lines = [n.name ? named(n.name) : n.kind === "op" ? opShort(n.op) : named(nodeName(n))];
  if (n.kind === "op" && n.name) lines.push(opShort(n.op));
  else if (n.kind === "op" && value !== null) lines.push(value.text);
  return lines;
}

export const FONT = 11; // px at zoom 1: the label font, which scales with the zoom
const HUB = 4; // fan-out past which a node's later edges skip the layout (see layoutView)
const CHAR = 7; // px per character at the 11px label font, at zoom 1
const LINE = 15;

export function layoutView(view, rankdir = "LR") {
  const g = new dagre.graphlib.Graph({ multigraph: true });
  // ranksep leaves room under a leaf for the "grad …" note the stepper adds.
  g.setGraph({ rankdir, nodesep: 24, ranksep: 36, edgesep: 8, marginx: 12, marginy: 12 });
  g.setDefaultEdgeLabel(() => ({}));
  for (const v of view.nodes) {
    const lines = labelLines(v);
    // wide enough for every value the stepper shows in it (a parameter across a loop's steps)
    const all = [
      lines,
      ...(v.seen ?? []).map((value) => labelLines({ ...v, node: { ...v.node, value } })),
    ];
    const width = Math.max(44, ...all.flat().map((l) => l.length * CHAR + 18));
    const height = lines.length * LINE + 14;
    g.setNode(v.id, { width, height });
  }
  // A tensor that feeds many ops (a weight reused by every step of a loop) would send dagre one
  // long edge through every rank it skips: tens of thousands of dummy nodes, a minute of layout.
  // Lay it out beside its first consumer only, and draw its other edges straight afterwards.
  const fanOut = new Map();
  for (const e of view.edges) fanOut.set(e.source, (fanOut.get(e.source) ?? 0) + 1);
  const placed = new Set();
  const straight = new Set();
  view.edges.forEach((e, i) => {
    if (fanOut.get(e.source) > HUB && placed.has(e.source)) {
      straight.add(i);
      return;
    }
    placed.add(e.source);
    g.setEdge(e.source, e.target, {}, `e${i}`);
  });
  dagre.layout(g);
  const nodes = view.nodes.map((v) => {
    const p = g.node(v.id);
    return { ...v, x: p.x, y: p.y, w: p.width, h: p.height, lines: labelLines(v) };
  });
  const edges = view.edges.map((e, i) => ({
    ...e,
    points: straight.has(i)
      ? straightLine(g.node(e.source), g.node(e.target), rankdir)
      : g.edge(e.source, e.target, `e${i}`).points,
  }));
  const { width, height } = g.graph();
  return { nodes, edges, width, height, rankdir };
}

// From the side of one box to the facing side of the other, in the flow's direction.
function straightLine(s, t, rankdir) {
  if (rankdir === "TB") {
    return [
      { x: s.x, y: s.y + s.height / 2 },
      { x: t.x, y: t.y - t.height / 2 },
    ];
  }
  return [
    { x: s.x + s.width / 2, y: s.y },
    { x: t.x - t.width / 2, y: t.y },
  ];
}
