// What optimizer.step() and zero_grad() did: stepped after the backward call before them, one
// event a Next. For each parameter: its value before, the update the optimizer's rule made from
// its .grad (and its state: the momentum buffer, Adam's exp_avg and exp_avg_sq), its value after;
// and zero_grad() clearing each .grad.

import { fmtNumber, num } from "../page.js";
import { h } from "./panels.js";
import {
  flat,
  fmt,
  heatColor,
  isSummary,
  shapeOf,
  shapeText,
  sub,
  tensorTable,
} from "./tensors.js";

const scalar = (v) => v !== null && v !== undefined && !isSummary(v) && flat(v).length === 1;
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
    if (one && !wd)
      lines.push(`${n(param.before)} − ${fmtNumber(lr)} · ${p(n(g))} = ${n(param.after)}`);
  } else if (event.optimizer === "SGD") {
    const b = param.state.momentum_buffer;
    lines.push(
      s.nesterov ? "b ← μ·b + g;  θ ← θ − lr · (g + μ·b)" : "b ← μ·b + g;  θ ← θ − lr · b",
    );
    if (one && scalar(b) && !s.nesterov) {
      lines.push(
        `b = ${n(b)};  ${n(param.before)} − ${fmtNumber(lr)} · ${p(n(b))} = ${n(param.after)}`,
      );
    }
  } else if (event.optimizer === "Adam" || event.optimizer === "AdamW") {
    const [b1, b2] = s.betas ?? [0.9, 0.999];
    lines.push(
      `m ← ${b1}·m + ${fmtNumber(1 - b1)}·g;  v ← ${b2}·v + ${fmtNumber(1 - b2)}·g²`,
      `θ ← θ − lr · m̂ / (√v̂ + ε),  m̂ = m/(1 − ${b1}^t),  v̂ = v/(1 − ${b2}^t)`,
    );
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
    el.append(
      h("p", { class: "step-title" }, t("graph.optim.zero_title", { where })),
      h(
        "p",
        { class: "muted" },
        t(event.set_to_none === false ? "graph.optim.zeroed" : "graph.optim.cleared"),
      ),
    );
    const list = h("dl", { class: "optim-params" });
    for (const param of event.params) {
      list.append(
        h(
          "div",
          { class: "optim-param" },
          h("dt", {}, `${param.name}.grad`),
          h(
            "dd",
            {},
            `${fmt(param.before)} → ${event.set_to_none === false ? fmt(param.after) : "None"}`,
          ),
        ),
      );
    }
    el.append(list);
    return;
  }
  const settings = Object.entries(event.settings)
    .map(([k, v]) => `${k}=${Array.isArray(v) ? v.join("/") : fmt(v)}`)
    .join(", ");
  el.append(
    h(
      "p",
      { class: "step-title" },
      t("graph.optim.step_title", { optimizer: event.optimizer, where }),
    ),
    h("p", { class: "muted" }, t("graph.optim.step_intro", { settings })),
  );
  const table = h(
    "table",
    { class: "optim-table" },
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        ...[
          "graph.optim.param",
          "graph.optim.before",
          "graph.optim.grad",
          "graph.optim.update",
          "graph.optim.after",
        ].map((key) => h("th", {}, t(key))),
      ),
    ),
  );
  const body = h("tbody");
  for (const param of event.params) {
    const update = sub(grid(param.after), grid(param.before)); // a block's mean moved by theirs
    const cell = (v) => h("td", {}, scalar(v) || v === null ? fmt(v) : tensorTable(v));
    const cells = [param.before, param.grad, update, param.after];
    const state = Object.entries(param.state).filter(
      ([k]) => k !== "step" && !scalar(param.state[k]),
    );
    // Past three numbers the four tables would not fit side by side: small heat maps instead,
    // the largest change named, and the numbers one click away.
    const maps = many(param.before) && cells.every((v) => v === null || heatable(v));
    body.append(
      h(
        "tr",
        { "data-param": param.name },
        h("th", { scope: "row" }, param.name),
        maps ? h("td", { colspan: 4 }, heatRow(param, update, t)) : cells.map(cell),
      ),
    );
    body.append(
      h(
        "tr",
        { class: "optim-rule" },
        h(
          "td",
          { colspan: 5 },
          ...updateLines(event, param).map((line) => h("p", { class: "chain-rule" }, line)),
          maps && state.every(([, v]) => heatable(v))
            ? h(
                "div",
                { class: "optim-heats" },
                state.map(([k, v]) => heatFigure(h("code", {}, k), v, signedScale([v]))),
              )
            : state.map(([k, v]) =>
                h("div", { class: "optim-state" }, h("code", {}, k), tensorTable(v)),
              ),
        ),
      ),
    );
  }
  table.append(body);
  el.append(h("div", { class: "optim-scroll" }, table));
}

// --- step() as heat maps ------------------------------------------------------------------------

const many = (v) => v !== null && v !== undefined && (isSummary(v) || flat(v).length > 3);
// A tensor past a heat map's few thousand values comes as its summary and its block means.
const grid = (v) => (isSummary(v) ? (v.heat?.values ?? v) : v);
const heatable = (v) => Array.isArray(grid(v)) && shapeOf(grid(v)).length <= 2;
const finite = (vs) =>
  vs.flatMap((v) => (v === null ? [] : flat(grid(v)).map(num))).filter(Number.isFinite);

// One colour scale for all of vs, white at 0 when they hold both signs.
function signedScale(vs) {
  const xs = finite(vs);
  let [lo, hi] = [Math.min(...xs), Math.max(...xs)];
  if (lo < 0 && hi > 0) [lo, hi] = [-Math.max(-lo, hi), Math.max(-lo, hi)];
  return (x) => (hi > lo ? heatColor((x - lo) / (hi - lo)) : "#fff");
}

// A tensor as small coloured cells, each with its number on hover. A wide one (a 10×784 weight's
// 10×61 block means) takes the row to itself; a tall one's rows are flattened to fit 18rem.
function heatFigure(caption, v, colour) {
  const cells = grid(v);
  const rowsOf = Array.isArray(cells[0]) ? cells : [cells];
  const matrix = rowsOf.length === 1 ? wrap(rowsOf[0]) : rowsOf;
  const [rows, cols] = [matrix.length, matrix[0].length];
  const tall = rows > 24 ? `; grid-template-rows: repeat(${rows}, calc(18rem / ${rows}))` : "";
  const box = h("div", {
    class: rows > 24 ? "heat-grid heat-tall" : "heat-grid",
    style:
      `grid-template-columns: repeat(${cols}, 1fr); ` +
      `width: min(100%, ${cols * 1.25}rem)${tall}`,
  });
  for (const row of matrix) {
    for (const x of row)
      box.append(h("span", { title: fmtNumber(x), style: `background: ${colour(num(x))}` }));
  }
  return h(
    "figure",
    { class: cols > WRAP ? "heat-figure heat-wide" : "heat-figure" },
    h("figcaption", {}, caption),
    box,
  );
}

// A long vector (a 784-value bias) wraps, WRAP to a row, read row by row; a short one is a row.
const WRAP = 32;
const wrap = (xs) =>
  Array.from({ length: Math.ceil(xs.length / WRAP) }, (_, i) => xs.slice(i * WRAP, (i + 1) * WRAP));

// The element that moved most: its index, before → after. The child finds it among all the
// values (param.largest); these are all of them when no step() sent it.
function largest(param, update) {
  if (param.largest) return param.largest;
  if (isSummary(param.before)) return null;
  const shape = shapeOf(update);
  const values = flat(update).map(num);
  let best = 0;
  values.forEach((x, i) => {
    if (Math.abs(x) > Math.abs(values[best])) best = i;
  });
  const index = shape.length === 2 ? [Math.floor(best / shape[1]), best % shape[1]] : [best];
  return {
    index,
    update: values[best],
    before: flat(param.before)[best],
    after: flat(param.after)[best],
  };
}

// before and after with the digits it takes to tell them apart (a step of 3e-6 on -0.2392
// would read -0.2392 → -0.2392), up to float32's.
function apart(before, after) {
  let digits = 4;
  while (
    digits < 8 &&
    num(before) !== num(after) &&
    fmtNumber(before, digits) === fmtNumber(after, digits)
  )
    digits += 1;
  return { before: fmtNumber(before, digits), after: fmtNumber(after, digits) };
}

function heatRow(param, update, t) {
  const values = signedScale([param.before, param.after]); // before and after on one scale
  const big = largest(param, update);
  const block = param.before.heat?.block;
  const shape = shapeOf(param.before);
  const wrapped = shape.length === 1 && shape[0] > WRAP;
  return h(
    "div",
    { class: "optim-heat-row" },
    h(
      "div",
      { class: "optim-heats" },
      heatFigure(t("graph.optim.before"), param.before, values),
      heatFigure(t("graph.optim.grad"), param.grad, signedScale([param.grad])),
      heatFigure(t("graph.optim.update"), update, signedScale([update])),
      heatFigure(t("graph.optim.after"), param.after, values),
    ),
    wrapped
      ? h("p", { class: "muted small optim-wrapped" }, t("graph.optim.wrapped", { per: WRAP }))
      : null,
    block
      ? h(
          "p",
          { class: "muted small optim-blocks" },
          t("graph.optim.blocks", {
            shape: shapeText(param.before.shape),
            block: block.join("×"),
          }),
        )
      : null,
    big
      ? h(
          "p",
          { class: "optim-largest" },
          t("graph.optim.largest", {
            at: `${param.name}[${big.index.join(", ")}]`,
            update: fmtNumber(big.update),
            ...apart(big.before, big.after),
          }),
        )
      : null,
    h(
      "details",
      { class: "optim-numbers" },
      h("summary", {}, t("graph.optim.numbers")),
      h(
        "div",
        { class: "optim-scroll" },
        [param.before, param.grad, update, param.after].map((v, i) =>
          h(
            "div",
            { class: "optim-number" },
            h(
              "p",
              { class: "muted small" },
              t(
                [
                  "graph.optim.before",
                  "graph.optim.grad",
                  "graph.optim.update",
                  "graph.optim.after",
                ][i],
              ),
            ),
            tensorTable(v),
          ),
        ),
      ),
    ),
  );
}
