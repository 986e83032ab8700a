// Gradient flow: each layer's weight-gradient norm, as bars and over the first steps as a heat map.

import { num, t } from "../page.js";
import { $, finite, fmt, plot } from "./plots.js";

export function render(panel, flow) {
  const norms = finite(flow.norms);
  plot(
    $("flow-bars"),
    [
      {
        type: "bar",
        x: flow.layers,
        y: norms,
        marker: { color: "#3b5bdb" },
        hovertemplate: "%{x}: %{y:.3e}<extra></extra>",
      },
    ],
    {
      title: { text: t("training.flow.bars") },
      yaxis: { type: "log", title: { text: "‖∂L/∂W‖" } },
    },
  );
  const z = flow.heatmap.map((row) => finite(row).map((v) => (v > 0 ? Math.log10(v) : null)));
  plot(
    $("flow-heatmap"),
    [
      {
        type: "heatmap",
        z,
        y: flow.layers,
        colorscale: "Viridis",
        colorbar: { title: { text: "log₁₀" } },
        hovertemplate: "%{y}, step %{x}: 10^%{z:.1f}<extra></extra>",
      },
    ],
    {
      title: { text: t("training.flow.heatmap") },
      xaxis: { title: { text: t("training.axis.step") } },
    },
  );
  const max = Math.max(...norms.filter((v) => v !== null));
  const verdict = num(flow.ratio) < 1e-3 ? "vanishing" : max > 1e3 ? "exploding" : "healthy";
  panel.querySelector(".summary").textContent =
    t("training.flow.summary", { ratio: fmt(flow.ratio), max: fmt(max) }) +
    " " +
    t("training.flow.verdict." + verdict);
  panel.querySelector(".summary").dataset.verdict = verdict;
}
