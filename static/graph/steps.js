// The backward stepper's model: plain data in, plain data out; graph.js draws what this computes.
// A call's position `pos` runs from 0 (nothing revealed) to steps.length (every step revealed).

import { contributions, nodeName } from "./chain.js";
import { add, flat, isSummary, sub } from "./tensors.js";

// --- One backward call, stepped ------------------------------------------------------------

// The optimizer's steps and zero_grad() calls after backward call `index`, before the next one.
export function eventsAfter(graph, index) {
  return (graph?.optimizer_steps ?? []).filter((e) => e.after_call === index);
}

// Position `pos` of a call: its backward steps, then what the optimizer did after it.
export function stepView(graph, callIndex, pos) {
  const call = graph.backward[callIndex];
  const steps = call.steps;
  const events = eventsAfter(graph, callIndex);
  const total = steps.length + events.length;
  pos = Math.max(0, Math.min(pos, total));
  const back = Math.min(pos, steps.length); // how far backward itself has gone
  const nodeGrads = new Map(call.roots.map((id) => [id, null]));
  const flow = [];
  for (const [i, step] of steps.slice(0, back).entries()) {
    nodeGrads.set(
      step.node,
      step.grad_outputs.length === 1 ? step.grad_outputs[0] : step.grad_outputs,
    );
    for (const g of step.grad_inputs) {
      if (g.target && pos <= steps.length)
        flow.push({ source: g.target, target: step.node, grad: g.grad, active: i === pos - 1 });
    }
  }
  const done = events.slice(0, pos - back);
  return {
    call,
    pos,
    total,
    active: pos > 0 && pos <= steps.length ? steps[pos - 1] : null,
    next: pos < steps.length ? steps[pos] : null,
    event: done.at(-1) ?? null,
    events: done,
    nodeGrads,
    flow,
    received: contributions(steps, back), // what each node has been sent so far, path by path
    leaves: afterEvents(leafGrads(graph, call, back), done),
    done: pos === total,
  };
}

// The nodes whose value each call sends in its leaf_values.
const timeTrue = (node) => node?.kind === "leaf" || node?.kind === "const";

// A node's value at this position: a leaf or a constant tensor as this call's forward used it
// (a loop changes either in place), a leaf as the last step() done since left it; any other
// node as it was made (each iteration makes its own).
export function valueAt(sv, node) {
  if (!sv || !timeTrue(node)) return node?.value;
  for (const event of [...sv.events].reverse()) {
    const param = event.kind === "step" && event.params.find((p) => p.node === node.id);
    if (param) return param.after;
  }
  const value = sv.call.leaf_values?.[node.id];
  return value === undefined ? node.value : value;
}

// The graph as of this position: the same nodes, each leaf holding valueAt's value. The chain
// rule, the inspector, the labels and the hover read it, so they agree with the stepper.
export function graphAt(graph, sv) {
  if (!graph || !sv) return graph;
  let changed = false;
  const nodes = graph.nodes.map((n) => {
    const value = valueAt(sv, n);
    if (value === n.value) return n;
    changed = true;
    return { ...n, value };
  });
  return changed ? { ...graph, nodes } : graph;
}

// Every value a leaf or constant takes across the traced calls and steps (the layout sizes
// its box for all).
export function valuesSeen(graph, node) {
  if (!timeTrue(node)) return [];
  const values = (graph.backward ?? []).map((c) => c.leaf_values?.[node.id]);
  for (const e of graph.optimizer_steps ?? [])
    values.push(e.params.find((p) => p.node === node.id)?.after);
  return values.filter((v) => v !== undefined && v !== null);
}

// A loop: two or more backward calls whose steps run the same ops in the same order. The page
// then draws one iteration (one call's own nodes) and a slider goes from one to the next.
export function isLoop(graph) {
  const calls = graph?.backward ?? [];
  const shape = (c) => c.steps.map((s) => s.op).join();
  return (
    calls.length > 1 &&
    calls.every((c) => c.kind === "backward" && c.steps.length && shape(c) === shape(calls[0]))
  );
}

// The nodes of one iteration: what its backward call walked, and the constants feeding them.
export function iterationNodes(graph, callIndex) {
  const call = graph.backward[callIndex];
  const ids = new Set([...call.roots, ...call.steps.map((s) => s.node)]);
  const consts = new Set(graph.nodes.filter((n) => n.kind === "const").map((n) => n.id));
  for (const e of graph.edges) if (ids.has(e.target) && consts.has(e.source)) ids.add(e.source);
  return ids;
}

// zero_grad() clears each .grad it names (to None, or to zeros with set_to_none=False).
function afterEvents(leaves, events) {
  for (const event of events.filter((e) => e.kind === "zero_grad")) {
    for (const param of event.params) {
      const leaf = leaves.find((l) => l.id === param.node);
      if (leaf)
        Object.assign(leaf, {
          now: event.set_to_none === false ? param.after : null,
          cleared: true,
        });
    }
  }
  return leaves;
}

// Each leaf's .grad as the steps fill it in: what it held before the call, plus what has arrived.
// The "before" is read back from the call's final leaf_grads: right across a zero_grad() too.
function leafGrads(graph, call, pos) {
  const leaves = graph.nodes.filter((n) => n.kind === "leaf");
  const accumulates = call.kind === "backward";
  const arrivals = new Map(leaves.map((n) => [n.id, []]));
  for (const [i, step] of call.steps.entries()) {
    if (step.op === "AccumulateGrad" && arrivals.has(step.node)) {
      arrivals.get(step.node).push({ index: i, grad: step.grad_outputs[0] });
    }
  }
  if (![...arrivals.values()].some((a) => a.length)) {
    // No AccumulateGrad steps recorded: a leaf's gradient arrives with its consumer's step.
    for (const [i, step] of call.steps.entries()) {
      for (const g of step.grad_inputs) {
        if (arrivals.has(g.target)) arrivals.get(g.target).push({ index: i, grad: g.grad });
      }
    }
  }
  return leaves.map((leaf) => {
    const final = lookup(call.leaf_grads, leaf);
    const all = arrivals.get(leaf.id);
    const seen = all.filter((a) => a.index < pos);
    const sum = (list) =>
      list.reduce((acc, a) => (acc === undefined ? a.grad : add(acc, a.grad)), undefined);
    let before = accumulates && final !== undefined && all.length ? sub(final, sum(all)) : null;
    // Zero means .grad was None before the call; NaN means inf − inf, so we cannot know.
    if (before !== null && flat(before).every((x) => Math.abs(x) < 1e-12 || !Number.isFinite(x)))
      before = null;
    let now;
    if (pos >= call.steps.length || !accumulates) now = final;
    else if (!seen.length) now = before ?? (all.length ? null : final);
    else now = before === null ? sum(seen) : add(before, sum(seen));
    return {
      id: leaf.id,
      name: nodeName(leaf),
      shape: leaf.shape,
      before,
      arrived: seen.map((a) => a.grad),
      now: now ?? null,
      received: accumulates ? null : (sum(seen) ?? null),
      touched: all.length > 0,
    };
  });
}

function lookup(grads, leaf) {
  if (!grads) return undefined;
  if (leaf.id in grads) return grads[leaf.id];
  if (leaf.name && leaf.name in grads) return grads[leaf.name];
  return undefined;
}

// What the learner may know of a node's gradient at this step: nothing before backward reaches
// it, the paths so far while only some have, its value once every path has (or its step ran).
export function knownGrad(node, sv) {
  if (!sv) return { value: node.grad };
  const leaf = sv.leaves.find((l) => l.id === node.id);
  if (leaf?.cleared && leaf.now === null) return { cleared: true };
  if (leaf) return leaf.now === null ? { pending: true } : { value: leaf.now };
  const grad = sv.nodeGrads.get(node.id);
  if (grad !== undefined && grad !== null) return { value: grad };
  const parts = sv.received.get(node.id) ?? [];
  const all = contributions(sv.call.steps, sv.call.steps.length).get(node.id) ?? [];
  if (parts.length && parts.length === all.length)
    return { value: parts.map((p) => p.grad).reduce((a, b) => add(a, b)) };
  return parts.length ? { partial: parts.map((p) => p.grad) } : { pending: true };
}

// --- Predict, then reveal --------------------------------------------------------------------

// What the learner is asked for before `step` is revealed: the gradient each input receives,
// or, for AccumulateGrad, the leaf's .grad after it.
export function questions(graph, call, step, leafAfter) {
  const byId = new Map(graph.nodes.map((n) => [n.id, n]));
  const root = nodeName(byId.get(call.roots[0]));
  if (step.op === "AccumulateGrad") {
    return [
      {
        label: `${nodeName(byId.get(step.node))}.grad`,
        expected: leafAfter ?? step.grad_outputs[0],
      },
    ];
  }
  return step.grad_inputs
    .filter((g) => g.target && byId.get(g.target)?.kind !== "const" && !isSummary(g.grad))
    .map((g) => ({ label: `∂${root}/∂${nodeName(byId.get(g.target))}`, expected: g.grad }));
}

// "14", "[1, 2]" or "1, 2" against the expected value, 1e-4 relative (absolute below 1).
export function matches(answer, expected) {
  const got = String(answer)
    .replace(/[[\]()]/g, " ")
    .split(/[\s,]+/)
    .filter(Boolean)
    .map(Number);
  const want = flat(expected).map(Number);
  if (!got.length || got.length !== want.length || got.some(Number.isNaN)) return false;
  return want.every((w, i) => Math.abs(got[i] - w) <= 1e-4 * Math.max(1, Math.abs(w)));
}
