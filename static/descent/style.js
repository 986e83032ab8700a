// How each run looks, the same in every story and after every reload. Each optimizer's colour,
// marker and dash come from its one entry in gradient_lab/optimizers.py (page.optimizers); a
// second run of the same optimizer keeps its marker and takes a shade of its colour and the
// next dash, so that every run of a race differs in (colour, marker, dash).

import { page } from "../page.js";

export const KINDS = page.optimizers;
const OTHER = { color: "#6C757D", symbol: "hexagon-open", dash: "solid" };
// Never "dot": that is the charts' gradient norm after clipping, and the path still to come.
export const DASHES = ["solid", "dash", "dashdot", "longdash", "longdashdot"];
// The n-th run of one optimizer: its colour mixed this far toward black (−) or white (+).
const SHADES = [0, -0.4, 0.45, -0.65, 0.65];

export function kindOf(name) {
  return KINDS[name] ?? OTHER;
}

// The optimizer's name in the page's language.
export function labelOf(name) {
  const kind = KINDS[name];
  return kind ? (kind.labels[page.lang] ?? kind.labels.en) : name;
}

// Each run's style: its optimizer's colour, marker and dash; the n-th run of one optimizer in a
// race (n = 0, 1, ...) a shade of that colour and the n-th dash after the optimizer's own.
export function styles(runs) {
  const seen = {};
  return runs.map((run) => {
    const kind = kindOf(run.optimizer);
    const n = (seen[run.optimizer] = (seen[run.optimizer] ?? -1) + 1);
    const dash = DASHES[(DASHES.indexOf(kind.dash) + n) % DASHES.length];
    return {
      color: shade(kind.color, SHADES[n % SHADES.length] + (n >= SHADES.length ? 0.1 : 0)),
      symbol: kind.symbol,
      dash,
      nth: n,
    };
  });
}

// A colour mixed toward black (amount < 0) or white (> 0); a colour too dark to darken (black)
// is lightened instead, so the shade still differs.
export function shade(hex, amount) {
  if (!amount) return hex;
  const rgb = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16));
  const dark = rgb.reduce((a, b) => a + b, 0) < 120;
  const toward = amount < 0 && !dark ? 0 : 255;
  const t = Math.abs(amount);
  return (
    "#" +
    rgb
      .map((c) =>
        Math.round(c + (toward - c) * t)
          .toString(16)
          .padStart(2, "0"),
      )
      .join("")
  );
}

// The marker as a small inline SVG, for the legend and the run editor: the plot's own shape.
const SHAPES = {
  circle: '<circle cx="8" cy="8" r="5.5"/>',
  square: '<rect x="3" y="3" width="10" height="10"/>',
  diamond: '<path d="M8 1.5 14.5 8 8 14.5 1.5 8Z"/>',
  "triangle-up": '<path d="M8 2 14.5 13.5H1.5Z"/>',
  "triangle-down": '<path d="M8 14 1.5 2.5H14.5Z"/>',
  pentagon: '<path d="M8 1.5 14.5 6.2 12 14H4L1.5 6.2Z"/>',
  star: '<path d="M8 1 10 6 15 6.2 11 9.4 12.5 14.5 8 11.6 3.5 14.5 5 9.4 1 6.2 6 6Z"/>',
  hexagon: '<path d="M8 1.5 14 5v6l-6 3.5L2 11V5Z"/>',
  "hexagon-open": '<path d="M8 1.5 14 5v6l-6 3.5L2 11V5Z" fill="none" stroke-width="2"/>',
};

export function swatch(style) {
  const span = document.createElement("span");
  span.className = "swatch marker";
  span.dataset.symbol = style.symbol;
  span.dataset.color = style.color;
  span.dataset.dash = style.dash ?? "solid";
  span.innerHTML =
    `<svg viewBox="0 0 16 16" width="16" height="16" aria-hidden="true">` +
    `<g fill="${style.color}" stroke-width="1"` +
    ` stroke="${style.symbol.endsWith("open") ? style.color : "#fff"}">` +
    `${SHAPES[style.symbol] ?? SHAPES.hexagon}</g></svg>`;
  return span;
}
