// Tensors as the API sends them (a number, nested lists, or a summary of a large one) and as a
// learner reads them: compact in a sentence, whole with its shape in the inspector.

import { fmtNumber, num } from "../page.js";

export const isSummary = (v) =>
  v !== null && typeof v === "object" && !Array.isArray(v) && Boolean(v.summary);

export function flat(v) {
  return Array.isArray(v) ? v.flatMap(flat) : [v];
}

// The shape of nested lists ([] for a number); a summary carries its own.
export function shapeOf(v) {
  if (isSummary(v)) return v.shape;
  const shape = [];
  for (let x = v; Array.isArray(x); x = x[0]) shape.push(x.length);
  return shape;
}

export const shapeText = (shape) => (shape?.length ? shape.join("×") : "");

// Compact: a one-element tensor reads as its number; longer ones are cut after `max` numbers.
export function fmt(v, max = 4) {
  if (v === null || v === undefined) return "—";
  if (isSummary(v)) return `mean ${fmtNumber(v.mean)} [${fmtNumber(v.min)}, ${fmtNumber(v.max)}]`;
  if (!Array.isArray(v)) return fmtNumber(v);
  const items = flat(v);
  if (items.length === 1) return fmtNumber(items[0]);
  const shown = items
    .slice(0, max)
    .map((x) => fmtNumber(x))
    .join(", ");
  return `[${shown}${items.length > max ? ", …" : ""}]`;
}

// Full: nested brackets kept, one row a line, for the inspector and the gradcheck panel.
export function fmtFull(v) {
  if (v === null || v === undefined) return "None";
  if (isSummary(v)) {
    return (
      `shape ${JSON.stringify(v.shape)}, ${v.numel} elements\nmin ${fmtNumber(v.min)}  ` +
      `max ${fmtNumber(v.max)}  mean ${fmtNumber(v.mean)}\n` +
      `first: ${v.head.map((x) => fmtNumber(x)).join(", ")}`
    );
  }
  if (!Array.isArray(v)) return fmtNumber(v);
  const inner = v.map(fmtFull);
  return Array.isArray(v[0]) ? `[${inner.join(",\n ")}]` : `[${inner.join(", ")}]`;
}

// Elementwise arithmetic on nested lists, broadcasting a number; null when a side is a summary
// or the shapes differ.
export function zipWith(a, b, f) {
  if (
    a === null ||
    b === null ||
    a === undefined ||
    b === undefined ||
    isSummary(a) ||
    isSummary(b)
  )
    return null;
  if (Array.isArray(a) && Array.isArray(b)) {
    if (a.length !== b.length) return null;
    const out = a.map((x, i) => zipWith(x, b[i], f));
    return out.includes(null) ? null : out;
  }
  if (Array.isArray(a))
    return zipWith(
      a,
      a.map(() => b),
      f,
    );
  if (Array.isArray(b))
    return zipWith(
      b.map(() => a),
      b,
      f,
    );
  return f(num(a), num(b));
}

export const map = (a, f) => zipWith(a, 0, (x) => f(x));
export const add = (a, b) => zipWith(a, b, (x, y) => x + y);
export const sub = (a, b) => zipWith(a, b, (x, y) => x - y);
export const mul = (a, b) => zipWith(a, b, (x, y) => x * y);

// A tensor as a table: its shape on top, then its rows (a 3-D tensor: its last two dimensions,
// first block). Past a few numbers each cell is tinted by its value: a heat-map you can read.
export function tensorTable(v, { heat = 6, rows = 8, cols = 8 } = {}) {
  const shape = shapeOf(v);
  const box = document.createElement("div");
  box.className = "tensor";
  const caption = document.createElement("p");
  caption.className = "tensor-shape";
  caption.textContent = `${shapeText(shape)} (${shape.length}-D)`;
  if (shape.some((n) => n > 1)) box.append(caption);
  if (isSummary(v) || !Array.isArray(v)) {
    const pre = document.createElement("pre");
    pre.textContent = fmtFull(v);
    box.append(pre);
    return box;
  }
  let block = v;
  while (shapeOf(block).length > 2) block = block[0];
  const matrix = Array.isArray(block[0]) ? block : [block];
  const values = flat(matrix).map(num).filter(Number.isFinite);
  const [lo, hi] = [Math.min(...values), Math.max(...values)];
  const tint = flat(v).length > heat && hi > lo;
  const table = document.createElement("table");
  table.className = tint ? "matrix heat" : "matrix";
  for (const row of matrix.slice(0, rows)) {
    const tr = table.insertRow();
    for (const x of row.slice(0, cols)) {
      const td = tr.insertCell();
      td.textContent = fmtNumber(x);
      if (tint && Number.isFinite(num(x)))
        td.style.background = heatColor((num(x) - lo) / (hi - lo));
    }
    if (row.length > cols) tr.insertCell().textContent = "…";
  }
  if (matrix.length > rows) table.insertRow().insertCell().textContent = "⋮";
  box.append(table);
  return box;
}

// Blue (low) through white to orange (high): readable with any colour vision, dark text on top.
export function heatColor(f) {
  const [a, b] =
    f < 0.5
      ? [
          [86, 180, 233],
          [255, 255, 255],
        ]
      : [
          [255, 255, 255],
          [230, 159, 0],
        ];
  const u = f < 0.5 ? f * 2 : (f - 0.5) * 2;
  const c = a.map((x, i) => Math.round(x + (b[i] - x) * u));
  return `rgb(${c.join(",")})`;
}
