// The chain rule written out for one backward step: what the op computed going forward, its
// local derivative for each input as a formula with the numbers put in, the product with the
// gradient that arrived, and the sum at a node that more than one path feeds.
// Pure functions of the graph JSON (ops, saved tensors, values); `t` puts words in the page's
// language.

import { fmtNumber, num } from "../page.js";
import { flat, fmt, isSummary } from "./tensors.js";

export function opShort(op) {
  return op ? op.replace(/Backward\d*$/, "") : "";
}

export function nodeName(node) {
  if (!node) return "?";
  if (node.name) return node.name;
  if (node.kind === "const") return fmt(node.value);
  return node.kind === "leaf" ? `leaf ${node.id}` : opShort(node.op);
}

const SUP = { 2: "²", 3: "³" };
const paren = (s) => (/^[\w.]+$|^\(.*\)$/.test(s) && !s.startsWith("-") ? s : `(${s})`);
const power = (base, p) =>
  SUP[p] ? `${paren(base)}${SUP[p]}` : `${paren(base)}^${paren(String(p))}`;
const v3 = (v) => fmt(v, 3);

// The operands of the op at `node`: each input's name and value by position (an input that is a
// constant or a Python number comes from the const nodes and the saved tensors), its output.
function operands(graph, step, byId) {
  const node = byId.get(step.node);
  const saved = Object.fromEntries((node?.saved ?? []).map((s) => [s.name, s.value]));
  const into = graph.edges.filter((e) => e.target === step.node && e.kind === "data");
  const consts = into
    .filter((e) => e.input === null || e.input === undefined)
    .map((e) => byId.get(e.source));
  const inputs = [];
  for (const e of into) if (Number.isInteger(e.input)) inputs[e.input] ??= byId.get(e.source);
  // A constant takes the first position no gradient flows to (x * k: k is input 1).
  step.grad_inputs.forEach((g, i) => {
    if (!inputs[i] && !g.target && consts.length) inputs[i] = consts.shift();
  });
  const fallback = [saved.self, saved.other];
  const name = (i) =>
    inputs[i]
      ? nodeName(inputs[i])
      : fallback[i] !== undefined && fallback[i] !== null
        ? v3(fallback[i])
        : "?";
  const value = (i) => inputs[i]?.value ?? fallback[i];
  return { node, saved, consts, name, value, out: nodeName(node), result: node?.value };
}

// op → (forward expression, and for input i the local derivative ∂out/∂input as
// [formula, formula with numbers]); null where the op has no short formula.
const RULES = {
  Add: {
    fwd: (o) => `${o.name(0)} + ${alpha(o)}${o.name(1)}`,
    d: (o, i) => (i === 0 ? ["1"] : [alphaValue(o)]),
  },
  Sub: {
    fwd: (o) => `${o.name(0)} − ${alpha(o)}${o.name(1)}`,
    d: (o, i) => (i === 0 ? ["1"] : [`−${alphaValue(o)}`]),
  },
  Mul: {
    fwd: (o) => `${o.name(0)} · ${o.name(1)}`,
    d: (o, i) => [o.name(1 - i), v3(o.value(1 - i))],
  },
  Div: {
    fwd: (o) => `${o.name(0)} / ${o.name(1)}`,
    d: (o, i) =>
      i === 0
        ? [`1/${paren(o.name(1))}`, `1/${paren(v3(o.value(1)))}`]
        : [
            `−${paren(o.name(0))}/${power(o.name(1), 2)}`,
            `−${paren(v3(o.value(0)))}/${power(v3(o.value(1)), 2)}`,
          ],
  },
  Pow: {
    fwd: (o) => power(o.name(0), exponent(o)),
    d: (o, i) => {
      const p = exponent(o);
      if (o.node.op === "PowBackward2")
        return [
          `${o.out} · ln ${paren(o.name(0))}`,
          `${v3(o.result)} · ln ${paren(v3(o.value(0)))}`,
        ];
      if (i === 1)
        return [
          `${o.out} · ln ${paren(o.name(0))}`,
          `${v3(o.result)} · ln ${paren(v3(o.value(0)))}`,
        ];
      const n = Number(p);
      if (Number.isFinite(n) && n === 2)
        return [`2 · ${o.name(0)}`, `2 · ${paren(v3(o.value(0)))}`];
      const less = Number.isFinite(n) ? fmtNumber(n - 1) : `${p} − 1`;
      return [`${p} · ${power(o.name(0), less)}`, `${p} · ${power(v3(o.value(0)), less)}`];
    },
  },
  Exp: {
    fwd: (o) => `exp(${o.name(0)})`,
    d: (o) => [`exp(${o.name(0)})`, `exp(${v3(o.value(0))})`],
  },
  Log: {
    fwd: (o) => `log(${o.name(0)})`,
    d: (o) => [`1/${paren(o.name(0))}`, `1/${paren(v3(o.value(0)))}`],
  },
  Sin: {
    fwd: (o) => `sin(${o.name(0)})`,
    d: (o) => [`cos(${o.name(0)})`, `cos(${v3(o.value(0))})`],
  },
  Cos: {
    fwd: (o) => `cos(${o.name(0)})`,
    d: (o) => [`−sin(${o.name(0)})`, `−sin(${v3(o.value(0))})`],
  },
  Tan: {
    fwd: (o) => `tan(${o.name(0)})`,
    d: (o) => [`1 + tan(${o.name(0)})²`, `1 + ${power(v3(o.result), 2)}`],
  },
  Tanh: {
    fwd: (o) => `tanh(${o.name(0)})`,
    d: (o) => [`1 − tanh(${o.name(0)})²`, `1 − ${power(v3(o.result), 2)}`],
  },
  Sigmoid: {
    fwd: (o) => `σ(${o.name(0)})`,
    d: (o) => [
      `σ(${o.name(0)}) · (1 − σ(${o.name(0)}))`,
      `${v3(o.result)} · (1 − ${v3(o.result)})`,
    ],
  },
  Sqrt: {
    fwd: (o) => `√${paren(o.name(0))}`,
    d: (o) => [`1 / (2√${paren(o.name(0))})`, `1 / (2 · ${v3(o.result)})`],
  },
  Abs: {
    fwd: (o) => `|${o.name(0)}|`,
    d: (o) => [`sign(${o.name(0)})`, `sign(${v3(o.value(0))})`],
  },
  Neg: { fwd: (o) => `−${paren(o.name(0))}`, d: () => ["−1"] },
  Relu: {
    fwd: (o) => `relu(${o.name(0)})`,
    d: (o, i, t) => [t("graph.rule.relu", { x: o.name(0) })],
  },
  Sum: { fwd: (o) => `Σ ${o.name(0)}`, vjp: (o, i, t) => t("graph.rule.sum") },
  Mean: { fwd: (o) => `mean(${o.name(0)})`, d: (o) => ["1/N", `1/${numel(o)}`] },
  Mm: {
    fwd: (o) => `${o.name(0)} @ ${o.name(1)}`,
    vjp: (o, i) => (i === 0 ? `G @ ${o.name(1)}ᵀ` : `${o.name(0)}ᵀ @ G`),
  },
  Mv: {
    fwd: (o) => `${o.name(0)} @ ${o.name(1)}`,
    vjp: (o, i) => (i === 0 ? `G ⊗ ${o.name(1)}` : `${o.name(0)}ᵀ @ G`),
  },
  Dot: { fwd: (o) => `${o.name(0)} · ${o.name(1)}`, vjp: (o, i) => `G · ${o.name(1 - i)}` },
  Bmm: {
    fwd: (o) => `${o.name(0)} @ ${o.name(1)}`,
    vjp: (o, i) => (i === 0 ? `G @ ${o.name(1)}ᵀ` : `${o.name(0)}ᵀ @ G`),
  },
  Addmm: {
    fwd: (o) => `${o.name(0)} + ${o.name(1)} @ ${o.name(2)}`,
    vjp: (o, i, t) => [t("graph.rule.bias"), `G @ ${o.name(2)}ᵀ`, `${o.name(1)}ᵀ @ G`][i],
  },
  MseLoss: {
    fwd: (o) => `mean((${o.name(0)} − ${o.name(1)})²)`,
    vjp: (o) => `G · 2(${o.name(0)} − ${o.name(1)}) / N`,
  },
  L1Loss: {
    fwd: (o) => `mean(|${o.name(0)} − ${o.name(1)}|)`,
    vjp: (o) => `G · sign(${o.name(0)} − ${o.name(1)}) / N`,
  },
  BinaryCrossEntropy: {
    fwd: (o) => `BCE(${o.name(0)}, ${o.name(1)})`,
    vjp: (o) => `G · (${o.name(0)} − ${o.name(1)}) / (${o.name(0)}(1 − ${o.name(0)}) N)`,
  },
  BinaryCrossEntropyWithLogits: {
    fwd: (o) => `BCE(σ(${o.name(0)}), ${o.name(1)})`,
    vjp: (o) => `G · (σ(${o.name(0)}) − ${o.name(1)}) / N`,
  },
  NllLoss: { fwd: (o) => `NLL(${o.name(0)})`, vjp: (o, i, t) => t("graph.rule.nll") },
  LogSoftmax: {
    fwd: (o) => `log_softmax(${o.name(0)})`,
    vjp: (o) => `G − softmax(${o.name(0)}) · ΣG`,
  },
  Softmax: { fwd: (o) => `softmax(${o.name(0)})`, vjp: () => "s ⊙ (G − Σ(G ⊙ s))" },
};
RULES.Matmul = RULES.Mm;

function alpha(o) {
  const a = o.saved.alpha;
  return a === undefined || a === null || num(a) === 1 ? "" : `${fmtNumber(a)}·`;
}
const alphaValue = (o) =>
  o.saved.alpha === undefined || o.saved.alpha === null ? "1" : fmtNumber(o.saved.alpha);
const exponent = (o) => {
  const p = o.saved.exponent;
  if (p === undefined || p === null) return o.name(1);
  return Array.isArray(p) || isSummary(p) ? o.name(1) : fmtNumber(p);
};
const numel = (o) => {
  const n = o.saved.self_sym_numel;
  if (typeof n === "number") return n;
  const v = o.value(0);
  return isSummary(v) ? v.numel : flat(v).length;
};

// One backward step, in words: {forward, arrived, inputs: [{rule, chain, sum}]}.
export function explainStep(graph, call, steps, index, t) {
  const step = steps[index];
  const byId = new Map(graph.nodes.map((n) => [n.id, n]));
  const root = nodeName(byId.get(call.roots[0]));
  const g = step.grad_outputs.length === 1 ? step.grad_outputs[0] : step.grad_outputs;
  const o = operands(graph, step, byId);
  const rule = RULES[opShort(step.op)];
  const out = o.out;
  const received = contributions(steps, index);
  const parts = (received.get(step.node) ?? []).map((c) => c.grad);
  const arrived =
    parts.length > 1
      ? t("graph.chain.arrived_sum", {
          out,
          root,
          count: parts.length,
          terms: parts.map((p) => fmt(p)).join(" + "),
          g: fmt(g),
        })
      : t("graph.chain.arrived", { out, root, g: fmt(g) });
  if (step.op === "AccumulateGrad") return { forward: null, arrived, inputs: [] };
  // The first step of backward(): ∂root/∂root is 1, so the local derivative is the answer.
  const seeded = call.roots.includes(step.node) && flat(g).every((x) => num(x) === 1);
  const scalarAll = (...vs) =>
    vs.every((v) => v === null || v === undefined || flat(v).length === 1);
  const inputs = [];
  step.grad_inputs.forEach((gi, i) => {
    const target = gi.target ? byId.get(gi.target) : null;
    if (!target || target.kind === "const") return;
    const input = nodeName(target);
    const times = scalarAll(g, gi.grad, gi.local) ? "·" : "⊙";
    const d = rule?.d?.(o, i, t);
    let local = gi.local === null || gi.local === undefined ? null : fmt(gi.local);
    let formula = null;
    // Each form once: "1" needs no "= 1 = 1"; − and - are one sign.
    const same = (s) => s.replaceAll("−", "-");
    if (d)
      formula = [d[0], d[1], local]
        .filter((s, k, all) => s && all.findIndex((x) => x && same(x) === same(s)) === k)
        .join(" = ");
    else if (local !== null) formula = local;
    local ??= d ? d[d.length - 1] : null;
    const params = {
      root,
      out,
      input,
      g: fmt(g),
      grad: fmt(gi.grad),
      local: local ?? "",
      times,
      formula: formula ?? "",
    };
    const line = {};
    if (formula !== null) {
      // The first step: ∂root/∂root = 1, so ∂root/∂input is the local derivative itself.
      line.rule = t(seeded ? "graph.chain.seeded" : "graph.chain.rule", params);
      if (!seeded) line.chain = t("graph.chain.local", params);
    } else {
      const vjp = rule?.vjp?.(o, i, t);
      line.chain = vjp
        ? t("graph.chain.vjp_rule", { ...params, rule: vjp })
        : t("graph.chain.vjp", params);
    }
    // A node fed by several paths: what it holds so far, as the sum of what each path sent.
    const sofar = [...(received.get(gi.target) ?? []).map((c) => c.grad), gi.grad];
    if (sofar.length > 1) {
      line.sum = t("graph.chain.sum", {
        input,
        root,
        count: sofar.length,
        terms: sofar.map((p) => fmt(p)).join(" + "),
        total: fmt(sofar.reduce((a, b) => addAll(a, b))),
      });
    }
    inputs.push(line);
  });
  return { forward: rule?.fwd ? `${out} = ${rule.fwd(o)}` : null, arrived, inputs };
}

// What each node has received from the steps before `index`: [{from, grad}] by target id.
export function contributions(steps, index) {
  const out = new Map();
  for (const step of steps.slice(0, index)) {
    for (const gi of step.grad_inputs) {
      if (!gi.target || gi.grad === null) continue;
      if (!out.has(gi.target)) out.set(gi.target, []);
      out.get(gi.target).push({ from: step.node, grad: gi.grad });
    }
  }
  return out;
}

function addAll(a, b) {
  if (Array.isArray(a) && Array.isArray(b) && a.length === b.length)
    return a.map((x, i) => addAll(x, b[i]));
  if (Array.isArray(a)) return a.map((x) => addAll(x, b));
  if (Array.isArray(b)) return b.map((x) => addAll(a, x));
  if (isSummary(a) || isSummary(b)) return a;
  return num(a) + num(b);
}
