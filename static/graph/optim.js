// What optimizer.step() and zero_grad() did: stepped after the backward call before them, one
// event a Next. For each parameter: its value before, the update the optimizer's rule made from
// its .grad (and its state: the momentum buffer, Adam's exp_avg and exp_avg_sq), its value after;
// and zero_grad() clearing each .grad.

import { fmtNumber, num } from "../page.js";
import { h } from "./panels.js";
import { flat, fmt, sub, tensorTable } from "./tensors.js";

const scalar = (v) => v !== null && v !== undefined && flat(v).length === 1;
const n = (v) => fmtNumber(flat(v)[0]);
const p = (s) => (s.startsWith("-") ? `(${s})` : s);

// The rule the optimizer applied to one parameter, as a formula and, for a number, with the
// numbers put in: [lines], each a string.
export function updateLines(event, param) {
  const s = event.settings;
  const lr = s.lr;
  const g = param.grad;
  const lines = [];
  const one = scalar(param.before) && scalar(g);
  if (event.optimizer === "SGD" && !num(s.momentum ?? 0)) {
    const wd = num(s.weight_decay ?? 0);
    lines.push(wd ? "θ ← θ − lr · (g + λθ)" : "θ ← θ − lr · g");
    if (one && !wd) lines.push(`${n(param.before)} − ${fmtNumber(lr)} · ${p(n(g))} = ${n(param.after)}`);
  } else if (event.optimizer === "SGD") {
    const b = param.state.momentum_buffer;
    lines.push(s.nesterov ? "b ← μ·b + g;  θ ← θ − lr · (g + μ·b)" : "b ← μ·b + g;  θ ← θ − lr · b");
    if (one && scalar(b) && !s.nesterov) {
      lines.push(`b = ${n(b)};  ${n(param.before)} − ${fmtNumber(lr)} · ${p(n(b))} = ${n(param.after)}`);
    }
  } else if (event.optimizer === "Adam" || event.optimizer === "AdamW") {
    const [b1, b2] = s.betas ?? [0.9, 0.999];
    lines.push(`m ← ${b1}·m + ${fmtNumber(1 - b1)}·g;  v ← ${b2}·v + ${fmtNumber(1 - b2)}·g²`,
      `θ ← θ − lr · m̂ / (√v̂ + ε),  m̂ = m/(1 − ${b1}^t),  v̂ = v/(1 − ${b2}^t)`);
    const { exp_avg: m, exp_avg_sq: v, step: t } = param.state;
    if (one && scalar(m) && scalar(v)) lines.push(`t = ${n(t)},  m = ${n(m)},  v = ${n(v)}`);
  } else {
    lines.push(`θ ← θ + Δ  (${event.optimizer})`);
  }
  return lines;
}

export function renderOptimEvent(el, event, t) {
  el.replaceChildren();
  if (!event) return;
  const where = t("graph.error.line", { line: event.line });
  if (event.kind === "zero_grad") {
    el.append(h("p", { class: "step-title" }, t("graph.optim.zero_title", { where })),
      h("p", { class: "muted" }, t(event.set_to_none === false ? "graph.optim.zeroed" : "graph.optim.cleared")));
    const list = h("dl", { class: "optim-params" });
    for (const param of event.params) {
      list.append(h("div", { class: "optim-param" }, h("dt", {}, `${param.name}.grad`),
        h("dd", {}, `${fmt(param.before)} → ${event.set_to_none === false ? fmt(param.after) : "None"}`)));
    }
    el.append(list);
    return;
  }
  const settings = Object.entries(event.settings).map(([k, v]) => `${k}=${Array.isArray(v) ? v.join("/") : fmt(v)}`).join(", ");
  el.append(h("p", { class: "step-title" }, t("graph.optim.step_title", { optimizer: event.optimizer, where })),
    h("p", { class: "muted" }, t("graph.optim.step_intro", { settings })));
  const table = h("table", { class: "optim-table" },
    h("thead", {}, h("tr", {}, ...["graph.optim.param", "graph.optim.before", "graph.optim.grad",
      "graph.optim.update", "graph.optim.after"].map((key) => h("th", {}, t(key))))));
  const body = h("tbody");
  for (const param of event.params) {
    const update = sub(param.after, param.before);
    const cell = (v) => h("td", {}, scalar(v) || v === null ? fmt(v) : tensorTable(v));
    body.append(h("tr", { "data-param": param.name }, h("th", { scope: "row" }, param.name),
      cell(param.before), cell(param.grad), cell(update), cell(param.after)));
    body.append(h("tr", { class: "optim-rule" }, h("td", { colspan: 5 },
      ...updateLines(event, param).map((line) => h("p", { class: "chain-rule" }, line)),
      ...Object.entries(param.state).filter(([k]) => k !== "step" && !scalar(param.state[k]))
        .map(([k, v]) => h("div", { class: "optim-state" }, h("code", {}, k), tensorTable(v))))));
  }
  table.append(body);
  el.append(h("div", { class: "optim-scroll" }, table));
}
