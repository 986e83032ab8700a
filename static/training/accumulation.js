// Gradient accumulation: one big batch's gradients beside the accumulated ones, with and
// without the division.

import { num, t } from "../page.js";
import { $, finite, fmt, plot } from "./plots.js";

export function render(panel, acc) {
  const bar = (key, color) => ({
    type: "bar",
    name: t("training.accumulation." + key),
    x: acc.layers,
    y: finite(acc[key]),
    marker: { color },
  });
  plot(
    $("accumulation-bars"),
    [bar("big_batch", "#868e96"), bar("accumulated", "#3b5bdb"), bar("undivided", "#e03131")],
    {
      title: { text: t("training.accumulation.bars") },
      barmode: "group",
      yaxis: { title: { text: "‖∂L/∂W‖" } },
    },
  );
  panel.querySelector(".summary").textContent = t("training.accumulation.summary", {
    diff: fmt(acc.max_difference),
    undivided: fmt(acc.max_difference_undivided),
    ratio: num(acc.ratio_undivided).toFixed(2),
  });
}
