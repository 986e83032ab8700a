// What the training lab's lessons draw with: Plotly.react with the lab's layout, sized for a
// projector in presentation mode, titles wrapped to the chart. Plotly is the global from /vendor.

import { fmtNumber, num } from "../page.js";

export const $ = (id) => document.getElementById(id);

// JSON has no NaN or infinity: the server spells them "NaN", "Infinity"; Plotly wants null.
export const finite = (values) => values.map((v) => (Number.isFinite(num(v)) ? num(v) : null));
export const fmt = (v) => fmtNumber(v, 3);

const CONFIG = { displaylogo: false, responsive: true };
// Presentation mode: chart text a projector shows from the back of the room.
const FONT_PX = document.body.classList.contains("present") ? 18 : 12;
const TITLE_PX = FONT_PX * 1.4; // Plotly's title size for the layout's font
const AXIS = { automargin: true, gridcolor: "#eef1f4", zeroline: false, exponentformat: "power" };

export function plot(el, data, layout) {
  const title = layout.title && wrapped(layout.title.text, el.clientWidth);
  const lines = title ? title.split("<br>").length : 1;
  return Plotly.react(
    el,
    data,
    {
      margin: { t: 3 * FONT_PX + (lines - 1) * TITLE_PX * 1.3, r: 12, b: 40, l: 56 },
      font: { size: FONT_PX },
      legend: { orientation: "h", y: -0.25 },
      ...layout,
      ...(title && { title: { ...layout.title, text: title } }),
      xaxis: { ...AXIS, ...layout.xaxis },
      yaxis: { ...AXIS, ...layout.yaxis },
    },
    CONFIG,
  );
}

// Plotly never wraps a title: break it into lines that fit the chart (a phone's is narrow),
// between words, or anywhere in Chinese. A CJK character is about 1em wide, others about 0.55em.
function wrapped(text, width) {
  const room = Math.max(width - 24, 8 * TITLE_PX);
  const em = (s) => [...s].reduce((sum, c) => sum + (/[\u2e80-\uffef]/.test(c) ? 1 : 0.55), 0);
  const pieces = text.match(/[\u2e80-\uffef]|[^\s\u2e80-\uffef]+\s*|\s+/g) || [text];
  const lines = [""];
  for (const piece of pieces) {
    const last = lines.length - 1;
    if (lines[last] && em(lines[last] + piece.trimEnd()) * TITLE_PX > room)
      lines.push(piece.trimStart());
    else lines[last] += piece;
  }
  return lines.map((line) => line.trim()).join("<br>");
}
