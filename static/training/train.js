// The training loop: the decision boundary, loss, gradient norm and lr, redrawn as each streamed
// chunk of steps arrives.

import { t } from "../page.js";
import { $, finite, plot } from "./plots.js";

export function render(run, chunk) {
  const steps = run.loss.map((_, i) => i);
  const line = (y, name, color, extra = {}) => ({
    type: "scatter",
    mode: "lines",
    x: steps,
    y: finite(y),
    name,
    line: { color, width: 1.5 },
    ...extra,
  });
  plot($("train-loss"), [line(run.loss, t("training.train.loss"), "#d9480f")], {
    title: { text: t("training.train.loss") },
    yaxis: { type: "log" },
    showlegend: false,
  });
  plot(
    $("train-norm"),
    [
      line(run.grad_norm, t("training.train.before"), "#868e96"),
      line(run.clipped_norm, t("training.train.after"), "#3b5bdb", {
        line: { color: "#3b5bdb", width: 1.5, dash: "dot" },
      }),
    ],
    { title: { text: t("training.train.norm") }, yaxis: { type: "log" } },
  );
  // From zero, so a constant lr is a flat line at its height, not the middle of an empty axis.
  const top = Math.max(...finite(run.lr).filter((v) => v !== null)) * 1.15;
  plot($("train-lr"), [line(run.lr, "lr", "#2b8a3e")], {
    title: { text: t("training.train.lr") },
    xaxis: { title: { text: t("training.axis.step") } },
    yaxis: { range: [0, top] },
    showlegend: false,
  });
  const { x, y, grid_x, grid_y } = run.data;
  const points = (label, color) => ({
    type: "scatter",
    mode: "markers",
    name: t("training.train.class", { label }),
    x: x.filter((_, i) => y[i] === label).map((p) => p[0]),
    y: x.filter((_, i) => y[i] === label).map((p) => p[1]),
    marker: { size: 4, color, line: { width: 0.5, color: "#fff" } },
    hoverinfo: "skip",
  });
  plot(
    $("train-boundary"),
    [
      {
        type: "heatmap",
        x: grid_x,
        y: grid_y,
        z: chunk.boundary,
        zmin: 0,
        zmax: 1,
        showscale: false,
        hoverinfo: "skip",
        colorscale: [
          [0, "#a5d8ff"],
          [0.5, "#f8f9fa"],
          [1, "#ffc9c9"],
        ],
      },
      points(0, "#1c7ed6"),
      points(1, "#e03131"),
    ],
    { title: { text: t("training.train.boundary") }, yaxis: { scaleanchor: "x" } },
  );
}
