// The panels around the graph: each takes its element, plain data and the page's t(), and
// rebuilds its content. Text that came from the learner's program goes in through textContent.

import { explainStep, nodeName } from "./chain.js";
import { fmt, fmtFull, shapeText, tensorTable } from "./tensors.js";

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else if (key === "class") el.className = value;
    else el.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child !== null && child !== undefined)
      el.append(child instanceof Node ? child : String(child));
  }
  return el;
}

// Notes above the stepper: where NaN first appears, calls not traced, a graph too large to draw.
export function renderNotes(el, g, t) {
  const notes = [];
  if (g?.first_nonfinite) {
    const node = g.nodes.find((n) => n.id === g.first_nonfinite.node);
    notes.push(
      h(
        "p",
        { class: "note bad" },
        t(`graph.nonfinite.${g.first_nonfinite.where}`, { node: nodeName(node) }),
      ),
    );
  }
  if (g?.truncated) notes.push(h("p", { class: "note" }, t("graph.truncated")));
  if (g?.omitted) notes.push(h("p", { class: "note" }, t("graph.omitted", { why: g.omitted })));
  el.replaceChildren(...notes);
}

export function renderError(el, error, t) {
  el.replaceChildren();
  el.hidden = !error;
  if (!error) return;
  const where = error.line ? t("graph.error.line", { line: error.line }) : "";
  const hint = (error.hintKey && t(error.hintKey, {}, null)) || error.hint;
  el.append(
    ...[
      h("p", { class: "error-title" }, h("strong", {}, error.type), where ? ` · ${where}` : ""),
      h("p", { class: "error-message" }, error.message),
      hint
        ? h(
            "p",
            { class: "error-hint" },
            h("span", { class: "tag" }, t("graph.error.hint")),
            " ",
            hint,
          )
        : null,
      error.partial?.nodes?.length ? h("p", { class: "muted" }, t("graph.error.partial")) : null,
    ].filter(Boolean),
  );
}

export function renderGradchecks(el, checks, t) {
  el.replaceChildren();
  el.hidden = !checks?.length;
  if (!checks?.length) return;
  el.append(h("h2", {}, t("graph.gradcheck.title")));
  for (const c of checks) {
    const item = h(
      "div",
      { class: `check ${c.passed ? "pass" : "fail"}` },
      h(
        "p",
        {},
        h("strong", {}, c.passed ? t("graph.gradcheck.pass") : t("graph.gradcheck.fail")),
        ` · ${t("graph.error.line", { line: c.line })}`,
      ),
      c.message ? h("p", { class: "muted" }, c.message) : null,
    );
    for (const [key, value] of [
      ["graph.gradcheck.analytical", c.analytical],
      ["graph.gradcheck.numerical", c.numerical],
    ]) {
      if (value !== null && value !== undefined)
        item.append(h("p", { class: "label" }, t(key)), h("pre", {}, fmtFull(value)));
    }
    el.append(item);
  }
}

// `grad` is what is known of the node's gradient at the current step: {value} once backward has
// reached it, {partial: [..]} while only some of its paths have, {pending: true} before that.
// With no `onLine` (a notebook's output has no editor to go to), the line is plain text.
export function renderInspector(el, node, grad, t, { onClose, onLine, onCollapse }) {
  el.replaceChildren();
  el.hidden = !node;
  if (!node) return;
  const row = (key, value) =>
    value === null || value === undefined ? [] : [h("dt", {}, t(key)), h("dd", {}, value)];
  const yes = (b) => (b ? t("graph.yes") : t("graph.no"));
  const gradNote =
    node.kind === "const"
      ? null
      : node.grad_kept
        ? t("graph.inspect.kept")
        : t("graph.inspect.not_kept");
  const saved = node.saved?.length
    ? h(
        "ul",
        { class: "saved" },
        node.saved.map((s) =>
          h(
            "li",
            {},
            h("code", {}, s.name),
            s.shape?.some((n) => n > 1) ? ` [${shapeText(s.shape)}]` : "",
            ": ",
            fmt(s.value, 6),
          ),
        ),
      )
    : null;
  let gradView = null;
  if (node.kind !== "const") {
    if (grad.cleared)
      gradView = h("p", { class: "pending", "data-known": "cleared" }, t("graph.inspect.cleared"));
    else if (grad.pending)
      gradView = h("p", { class: "pending", "data-known": "0" }, t("graph.inspect.not_yet"));
    else if (grad.partial) {
      gradView = h(
        "p",
        { class: "pending", "data-known": "partial" },
        t("graph.inspect.so_far", {
          terms: grad.partial.map((g) => fmt(g)).join(" + "),
          count: grad.partial.length,
        }),
      );
    } else {
      gradView = h(
        "div",
        { "data-known": "1" },
        tensorTable(grad.value),
        h("p", { class: "muted small" }, gradNote),
      );
    }
  }
  el.append(
    h(
      "div",
      { class: "inspector-head" },
      h("h2", {}, nodeName(node)),
      h(
        "button",
        { type: "button", class: "icon", "aria-label": t("graph.inspect.close"), onclick: onClose },
        "×",
      ),
    ),
    h(
      "dl",
      {},
      row("graph.inspect.kind", t(`graph.legend.${node.is_output ? "output" : node.kind}`)),
      row("graph.inspect.value", tensorTable(node.value)),
      row("graph.inspect.grad", gradView),
      row(
        "graph.inspect.shape",
        node.shape
          ? node.shape.length
            ? `torch.Size([${node.shape.join(", ")}])`
            : t("graph.inspect.scalar")
          : null,
      ),
      row("graph.inspect.dtype", node.dtype),
      row("graph.inspect.grad_fn", node.op),
      row("graph.inspect.is_leaf", yes(node.is_leaf)),
      row("graph.inspect.requires_grad", yes(node.requires_grad)),
      row("graph.inspect.retains_grad", yes(node.retains_grad)),
      row("graph.inspect.origin", node.origin && node.origin !== "forward" ? node.origin : null),
      row("graph.inspect.saved", saved),
      row(
        "graph.inspect.line",
        !node.line
          ? null
          : onLine
            ? h(
                "button",
                { type: "button", class: "link", onclick: () => onLine(node.line) },
                t("graph.error.line", { line: node.line }),
              )
            : t("graph.error.line", { line: node.line }),
      ),
      row(
        "graph.inspect.module",
        node.module
          ? h(
              "span",
              {},
              h("code", {}, node.module),
              " ",
              h(
                "button",
                {
                  type: "button",
                  class: "link",
                  onclick: () => onCollapse(node.module.split(".")[0]),
                },
                t("graph.inspect.collapse"),
              ),
            )
          : null,
      ),
    ),
  );
}

// Each leaf's .grad as it fills in; for torch.autograd.grad, what the call returns instead.
export function renderLeafGrads(el, sv, t) {
  el.replaceChildren();
  const returns = sv?.call.kind === "grad";
  const touched = (sv?.leaves ?? []).filter((l) => l.touched || (!returns && l.now !== null));
  if (!touched.length) return;
  el.append(
    h(
      "h3",
      {},
      returns
        ? t("graph.leaf.returned_title")
        : sv.done
          ? t("graph.leaf.after")
          : t("graph.leaf.title"),
    ),
  );
  const list = h("dl", { class: "leafgrads" });
  for (const leaf of touched) {
    const value = returns ? leaf.received : leaf.now;
    const pending = value === null || value === undefined;
    const shape = pending || !leaf.shape?.some((n) => n > 1) ? "" : `[${shapeText(leaf.shape)}]`;
    list.append(
      h(
        "div",
        { class: "leafgrad" },
        h(
          "dt",
          {},
          returns ? leaf.name : `${leaf.name}.grad`,
          shape ? h("span", { class: "shape" }, ` ${shape}`) : null,
        ),
        h(
          "dd",
          {
            "data-leaf": leaf.name,
            class: pending ? "pending" : /nan|inf/.test(fmt(value, 6)) ? "bad" : "",
          },
          pending
            ? returns
              ? "—"
              : t(leaf.cleared ? "graph.leaf.cleared" : "graph.leaf.none")
            : fmt(value, 6),
        ),
      ),
    );
  }
  el.append(list);
}

// The chain rule for the step just taken, or where the call starts.
// `within`: the module call box the step's node is drawn in (loss_fn #2), as the graph numbers it.
export function renderChain(el, g, sv, t, error = null, within = null) {
  el.replaceChildren();
  if (!g) return;
  if (!sv) {
    // A program that raised before its backward() has nothing to step yet; one that ran has none.
    const why = error
      ? t(error.line ? "graph.step.stopped" : "graph.step.stopped_nowhere", { line: error.line })
      : t("graph.step.none");
    el.append(h("p", { class: "muted" }, why));
    return;
  }
  const root = nodeName(g.nodes.find((n) => n.id === sv.call.roots[0]));
  if (sv.call.error)
    el.append(h("p", { class: "note bad" }, t("graph.call.error", { error: sv.call.error })));
  if (!sv.active) {
    if (sv.call.error && !sv.total) return;
    el.append(h("p", {}, t(`graph.chain.start_${sv.call.kind}`, { root, line: sv.call.line })));
    return;
  }
  const node = g.nodes.find((n) => n.id === sv.active.node);
  const step = explainStep(g, sv.call, sv.call.steps, sv.pos - 1, t);
  el.append(
    h(
      "p",
      { class: "step-title" },
      t("graph.chain.title", {
        pos: sv.pos,
        total: sv.total,
        op: sv.active.op,
        node: nodeName(node),
      }),
      within
        ? h("span", { class: "muted within" }, ` · ${t("graph.chain.within", { call: within })}`)
        : null,
    ),
  );
  if (step.forward)
    el.append(h("p", { class: "forward" }, t("graph.chain.forward", { expr: step.forward })));
  el.append(h("p", { class: "muted arrived" }, step.arrived));
  if (sv.active.op === "AccumulateGrad") {
    const after = sv.leaves.find((l) => l.id === sv.active.node)?.now;
    const grad = fmt(sv.active.grad_outputs[0]);
    el.append(
      h(
        "p",
        { class: "chain-line" },
        t("graph.chain.accumulate", { leaf: nodeName(node), grad, after: fmt(after) }),
      ),
    );
  }
  for (const line of step.inputs) {
    const box = h("div", { class: "chain-input" });
    if (line.rule) box.append(h("p", { class: "chain-rule" }, line.rule));
    if (line.chain) box.append(h("p", { class: "chain-line" }, line.chain));
    if (line.sum) box.append(h("p", { class: "chain-sum" }, line.sum));
    el.append(box);
  }
  if (!step.inputs.length && sv.active.op !== "AccumulateGrad")
    el.append(h("p", { class: "chain-line" }, t("graph.chain.none", { out: nodeName(node) })));
  if (sv.done) el.append(h("p", { class: "muted" }, t("graph.chain.done")));
}

// Predict, then reveal: the learner's guess for the next step, and the verdict on the last one.
export function renderAsk(el, state, sv, t, { onCheck, onSkip }) {
  el.replaceChildren();
  if (state.verdict)
    el.append(
      h("p", { class: `verdict ${state.verdict.right ? "right" : "wrong"}` }, state.verdict.text),
    );
  el.hidden = !state.asking && !state.verdict;
  if (!state.asking || !sv?.next) return;
  const fields = state.asking.map((q, i) =>
    h(
      "label",
      {},
      h("span", {}, `${q.label} =`),
      h("input", {
        type: "text",
        inputmode: "decimal",
        name: `q${i}`,
        autocomplete: "off",
        "aria-label": q.label,
      }),
    ),
  );
  const form = h(
    "form",
    {
      class: "ask-form",
      onsubmit: (e) => {
        e.preventDefault();
        onCheck(form);
      },
    },
    h("p", {}, t("graph.predict.prompt", { op: sv.next.op })),
    ...fields,
    h("button", { type: "submit" }, t("graph.predict.check")),
    h("button", { type: "button", onclick: onSkip }, t("graph.predict.skip")),
  );
  el.append(form);
  form.querySelector("input")?.focus();
}
