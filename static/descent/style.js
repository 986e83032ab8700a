// How each optimizer looks, the same in every story and after every reload: one colour and one
// marker shape per optimizer kind (Okabe–Ito's palette, safe for every colour vision; its yellow
// is left out, it vanishes on a light surface), and a dash per run when one kind races itself.

export const KINDS = {
  sgd: { color: "#D55E00", symbol: "circle" },           // vermillion
  momentum: { color: "#0072B2", symbol: "square" },      // blue
  nesterov: { color: "#56B4E9", symbol: "diamond" },     // sky blue
  adam: { color: "#009E73", symbol: "triangle-up" },     // bluish green
  adamw: { color: "#CC79A7", symbol: "triangle-down" },  // reddish purple
  rmsprop: { color: "#E69F00", symbol: "pentagon" },     // orange
  adagrad: { color: "#000000", symbol: "star" },         // black
};
const OTHER = { color: "#6C757D", symbol: "hexagon" };
// Never "dot": that is the charts' gradient norm after clipping, and the path still to come.
const DASHES = ["solid", "dash", "dashdot", "longdash", "longdashdot"];

// Each run's style: its kind's colour and marker; the second Adam of a race gets a dashed line.
export function styles(runs) {
  const seen = {};
  return runs.map((run) => {
    const kind = KINDS[run.optimizer] ?? OTHER;
    const n = (seen[run.optimizer] = (seen[run.optimizer] ?? -1) + 1);
    return { ...kind, dash: DASHES[n % DASHES.length] };
  });
}

// The marker as a small inline SVG, for the legend and the run editor: the same shape as on the plot.
const SHAPES = {
  circle: '<circle cx="8" cy="8" r="5.5"/>',
  square: '<rect x="3" y="3" width="10" height="10"/>',
  diamond: '<path d="M8 1.5 14.5 8 8 14.5 1.5 8Z"/>',
  "triangle-up": '<path d="M8 2 14.5 13.5H1.5Z"/>',
  "triangle-down": '<path d="M8 14 1.5 2.5H14.5Z"/>',
  pentagon: '<path d="M8 1.5 14.5 6.2 12 14H4L1.5 6.2Z"/>',
  star: '<path d="M8 1 10 6 15 6.2 11 9.4 12.5 14.5 8 11.6 3.5 14.5 5 9.4 1 6.2 6 6Z"/>',
  hexagon: '<path d="M8 1.5 14 5v6l-6 3.5L2 11V5Z"/>',
};

export function swatch(style) {
  const span = document.createElement("span");
  span.className = "swatch marker";
  span.dataset.symbol = style.symbol;
  span.dataset.color = style.color;
  span.innerHTML = `<svg viewBox="0 0 16 16" width="16" height="16" aria-hidden="true">` +
    `<g fill="${style.color}" stroke="#fff" stroke-width="1">${SHAPES[style.symbol] ?? SHAPES.hexagon}</g></svg>`;
  return span;
}

// Each optimizer's update rule, as torch.optim documents it (g: the gradient, θ: x and y).
export const RULES = {
  sgd: "θ ← θ − lr·g",
  momentum: "b ← μ·b + g;  θ ← θ − lr·b   (μ = 0.9)",
  nesterov: "b ← μ·b + g;  θ ← θ − lr·(g + μ·b)",
  adam: "m ← β₁m + (1−β₁)g;  v ← β₂v + (1−β₂)g²;  θ ← θ − lr·m̂ / (√v̂ + ε)",
  adamw: "θ ← θ − lr·λ·θ;  then Adam's step (decay decoupled from g)",
  rmsprop: "v ← αv + (1−α)g²;  θ ← θ − lr·g / (√v + ε)",
  adagrad: "s ← s + g²;  θ ← θ − lr·g / (√s + ε)",
};
