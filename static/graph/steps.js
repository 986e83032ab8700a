// The backward stepper's model: plain data in, plain data out; graph.js draws what this computes.
// A call's position `pos` runs from 0 (nothing revealed) to steps.length (every step revealed).

// --- Numbers as a learner reads them -----------------------------------------------------

export function fmtNumber(x) {
  if (typeof x === "boolean") return x ? "True" : "False";
  if (typeof x === "string") return { NaN: "nan", Infinity: "inf", "-Infinity": "-inf" }[x] ?? x;
  if (typeof x !== "number") return String(x);
  if (Number.isInteger(x) && Math.abs(x) < 1e9) return String(x);
  const text = Math.abs(x) >= 1e-3 && Math.abs(x) < 1e6 ? x.toPrecision(4) : x.toExponential(2);
  return text.replace(/\.?0+(?=e|$)/, "");
}

function isSummary(v) {
  return v !== null && typeof v === "object" && !Array.isArray(v) && v.summary;
}

function flat(v) {
  return Array.isArray(v) ? v.flatMap(flat) : [v];
}

// Compact: a one-element tensor reads as its number; longer ones are cut after `max` numbers.
export function fmt(v, max = 4) {
  if (v === null || v === undefined) return "—";
  if (isSummary(v)) return `mean ${fmtNumber(v.mean)} [${fmtNumber(v.min)}, ${fmtNumber(v.max)}]`;
  if (!Array.isArray(v)) return fmtNumber(v);
  const items = flat(v);
  if (items.length === 1) return fmtNumber(items[0]);
  const shown = items.slice(0, max).map(fmtNumber).join(", ");
  return `[${shown}${items.length > max ? ", …" : ""}]`;
}

// Full: nested brackets kept, for the inspector.
export function fmtFull(v) {
  if (v === null || v === undefined) return "None";
  if (isSummary(v)) {
    return `shape ${JSON.stringify(v.shape)}, ${v.numel} elements\nmin ${fmtNumber(v.min)}  ` +
      `max ${fmtNumber(v.max)}  mean ${fmtNumber(v.mean)}\nfirst: ${v.head.map(fmtNumber).join(", ")}`;
  }
  if (!Array.isArray(v)) return fmtNumber(v);
  const inner = v.map(fmtFull);
  return Array.isArray(v[0]) ? `[${inner.join(",\n ")}]` : `[${inner.join(", ")}]`;
}

export function opShort(op) {
  return op ? op.replace(/Backward\d*$/, "") : "";
}

export function nodeName(node) {
  if (!node) return "?";
  if (node.name) return node.name;
  if (node.kind === "const") return fmt(node.value);
  return node.kind === "leaf" ? `leaf ${node.id}` : opShort(node.op);
}

// --- Elementwise arithmetic on nested lists (null when a side is a summary) --------------

function zipWith(a, b, f) {
  if (a === null || b === null || isSummary(a) || isSummary(b)) return null;
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) return null;
    const out = a.map((x, i) => zipWith(x, b[i], f));
    return out.includes(null) ? null : out;
  }
  if (Array.isArray(a)) return zipWith(a, a.map(() => b), f);
  if (Array.isArray(b)) return zipWith(b.map(() => a), b, f);
  return f(Number(a), Number(b));
}

const add = (a, b) => zipWith(a, b, (x, y) => x + y);
const sub = (a, b) => zipWith(a, b, (x, y) => x - y);

// --- One backward call, stepped ------------------------------------------------------------

export function stepView(graph, callIndex, pos) {
  const call = graph.backward[callIndex];
  const steps = call.steps;
  pos = Math.max(0, Math.min(pos, steps.length));
  const nodeGrads = new Map(call.roots.map((id) => [id, null]));
  const flow = [];
  for (const [i, step] of steps.slice(0, pos).entries()) {
    nodeGrads.set(step.node, step.grad_outputs.length === 1 ? step.grad_outputs[0] : step.grad_outputs);
    for (const g of step.grad_inputs) {
      if (g.target) flow.push({ source: g.target, target: step.node, grad: g.grad, active: i === pos - 1 });
    }
  }
  return {
    call, pos, total: steps.length,
    active: pos > 0 ? steps[pos - 1] : null,
    next: pos < steps.length ? steps[pos] : null,
    nodeGrads, flow,
    leaves: leafGrads(graph, call, pos),
    done: pos === steps.length,
  };
}

// Each leaf's .grad as the steps fill it in: what it held before the call, plus what has arrived.
// The "before" is read back from the call's final leaf_grads, so zero_grad() between calls is right.
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
    const sum = (list) => list.reduce((acc, a) => (acc === undefined ? a.grad : add(acc, a.grad)), undefined);
    let before = accumulates && final !== undefined && all.length ? sub(final, sum(all)) : null;
    // Zero means .grad was None before the call; NaN means inf − inf, so we cannot know.
    if (before !== null && flat(before).every((x) => Math.abs(x) < 1e-12 || !Number.isFinite(x))) before = null;
    let now;
    if (pos >= call.steps.length || !accumulates) now = final;
    else if (!seen.length) now = before ?? (all.length ? null : final);
    else now = before === null ? sum(seen) : add(before, sum(seen));
    return { id: leaf.id, name: nodeName(leaf), before, arrived: seen.map((a) => a.grad), now: now ?? null,
             received: accumulates ? null : sum(seen) ?? null, touched: all.length > 0 };
  });
}

function lookup(grads, leaf) {
  if (!grads) return undefined;
  if (leaf.id in grads) return grads[leaf.id];
  if (leaf.name && leaf.name in grads) return grads[leaf.name];
  return undefined;
}

// The chain rule for one step, as [{kind, params}] for graph.js to put into words.
export function chainLines(graph, call, step, leaves = []) {
  const byId = new Map(graph.nodes.map((n) => [n.id, n]));
  const root = nodeName(byId.get(call.roots[0]));
  const out = nodeName(byId.get(step.node));
  const arrived = fmt(step.grad_outputs.length === 1 ? step.grad_outputs[0] : step.grad_outputs);
  if (step.op === "AccumulateGrad") {
    const after = leaves.find((l) => l.id === step.node)?.now;
    return [{ key: "graph.chain.accumulate", params: { leaf: out, grad: arrived, after: fmt(after) } }];
  }
  const lines = [];
  for (const g of step.grad_inputs) {
    const target = g.target ? byId.get(g.target) : null;
    if (!target || target.kind === "const") continue;
    // One number each: the chain rule's product. Tensors: the same, element by element (⊙).
    const scalar = [step.grad_outputs, g.grad, g.local].every((v) => flat(v).length === 1);
    const params = { root, out, input: nodeName(target), g: arrived, grad: fmt(g.grad), local: fmt(g.local),
                     times: scalar ? "·" : "⊙" };
    if (g.local !== null && g.local !== undefined) {
      lines.push({ key: "graph.chain.local", params });
    } else {
      lines.push({ key: "graph.chain.vjp", params });
    }
  }
  if (!lines.length) lines.push({ key: "graph.chain.none", params: { out } });
  return lines;
}

// --- Predict, then reveal --------------------------------------------------------------------

// What the learner is asked for before `step` is revealed: the gradient each input receives,
// or, for AccumulateGrad, the leaf's .grad after it.
export function questions(graph, call, step, leafAfter) {
  const byId = new Map(graph.nodes.map((n) => [n.id, n]));
  const root = nodeName(byId.get(call.roots[0]));
  if (step.op === "AccumulateGrad") {
    return [{ label: `${nodeName(byId.get(step.node))}.grad`, expected: leafAfter ?? step.grad_outputs[0] }];
  }
  return step.grad_inputs
    .filter((g) => g.target && byId.get(g.target)?.kind !== "const" && !isSummary(g.grad))
    .map((g) => ({ label: `∂${root}/∂${nodeName(byId.get(g.target))}`, expected: g.grad }));
}

// "14", "[1, 2]" or "1, 2" against the expected value, 1e-4 relative (absolute below 1).
export function matches(answer, expected) {
  const got = String(answer).replace(/[[\]()]/g, " ").split(/[\s,]+/).filter(Boolean).map(Number);
  const want = flat(expected).map(Number);
  if (!got.length || got.length !== want.length || got.some(Number.isNaN)) return false;
  return want.every((w, i) => Math.abs(got[i] - w) <= 1e-4 * Math.max(1, Math.abs(w)));
}
