// Repeated blocks inside one module call, rolled up: the page's layout (layout.js) draws each
// run this finds as one box until opened. Pure functions over the API's graph.

import { shapeText } from "./tensors.js";

// Inside each module call, consecutive sibling blocks whose class and ops match, shapes and all
// (an nn.Sequential of identical layers, a ModuleList run in a loop; Linear, Tanh, Linear, Tanh
// repeats as a pair), are one box "model.0–3 ×4" until opened. A block outside such a run is
// searched for runs inside it. A run with something else drawn between its blocks stays open.
export function blockRuns(graph, calls) {
  const classes = graph.modules ?? {};
  const inCall = new Map(); // each call's box: its module, its number, its nodes
  for (const n of graph.nodes) {
    const call = calls.get(n.id);
    // A parameter every call shares keeps its own box.
    if (!call || call.shared || !n.module?.includes(".")) continue;
    const key = `${call.module}:${call.call}`;
    if (!inCall.has(key)) inCall.set(key, { module: call.module, call: call.call, nodes: [] });
    inCall.get(key).nodes.push(n);
  }
  const closed = between(graph);
  const runs = new Map();
  for (const { module: top, call, nodes } of inCall.values()) {
    const visit = (path, members) => {
      const kids = new Map();
      for (const n of members) {
        if (n.module === path) continue;
        const kid = `${path}.${n.module.slice(path.length + 1).split(".")[0]}`;
        if (!kids.has(kid)) kids.set(kid, []);
        kids.get(kid).push(n);
      }
      const first = (ns) => Math.min(...ns.map((n) => n.made ?? Infinity));
      const order = [...kids.entries()].sort((a, b) => first(a[1]) - first(b[1]));
      // What a block is: its class, and each node's place in it, class, op and shape.
      const sigs = order.map(
        ([kid, ns]) =>
          classes[kid] &&
          [
            classes[kid],
            ...ns
              .map((n) =>
                [
                  n.module.slice(kid.length),
                  classes[n.module],
                  n.kind,
                  n.op,
                  shapeText(n.shape),
                ].join("|"),
              )
              .sort(),
          ].join("\n"),
      );
      // The run that covers the most blocks (the later one of two: Linear, Tanh pairs after a
      // first Linear, rather than Tanh, Linear), then the runs either side of it.
      const place = (lo, hi) => {
        let best = null;
        for (let i = lo; i < hi; i += 1) {
          const { period, times } = repeats(sigs.slice(0, hi), i);
          const ids = order.slice(i, i + period * times).flatMap(([, ns]) => ns.map((n) => n.id));
          if (times > 1 && period * times >= (best?.size ?? 0) && closed(ids))
            best = { i, size: period * times, times, ids };
        }
        if (!best) return order.slice(lo, hi).forEach(([kid, ns]) => visit(kid, ns));
        const last = order[best.i + best.size - 1][0].split(".").at(-1);
        const label = `${order[best.i][0]}–${last} ×${best.times}`;
        const module = `${order[best.i][0]}–${last}#${call}`;
        for (const id of best.ids) runs.set(id, { module, box: `module:${module}`, label });
        place(lo, best.i);
        place(best.i + best.size, hi);
      };
      place(0, order.length);
    };
    visit(top, nodes);
  }
  return runs;
}

// The longest run from sigs[i] of one group of `period` signatures repeated `times` times.
function repeats(sigs, i) {
  let best = { period: 1, times: 1 };
  for (let period = 1; i + 2 * period <= sigs.length; period += 1) {
    const group = sigs.slice(i, i + period);
    if (group.some((s) => !s)) break;
    let times = 1;
    while (group.every((s, k) => sigs[i + times * period + k] === s)) times += 1;
    if (times > 1 && period * times > best.period * best.times) best = { period, times };
  }
  return best;
}

// closed(ids): whether no other node lies on a path between two of ids (a box drawn for them
// would have edges out to that node and back in).
function between(graph) {
  const next = new Map();
  const prev = new Map();
  for (const e of graph.edges) {
    if (!next.has(e.source)) next.set(e.source, []);
    if (!prev.has(e.target)) prev.set(e.target, []);
    next.get(e.source).push(e.target);
    prev.get(e.target).push(e.source);
  }
  const outside = (ids, links) => {
    const seen = new Set();
    const todo = [...ids].flatMap((id) => links.get(id) ?? []);
    while (todo.length) {
      const id = todo.pop();
      if (seen.has(id) || ids.has(id)) continue;
      seen.add(id);
      todo.push(...(links.get(id) ?? []));
    }
    return seen;
  };
  return (list) => {
    const ids = new Set(list);
    const after = outside(ids, next);
    return ![...outside(ids, prev)].some((id) => after.has(id));
  };
}
