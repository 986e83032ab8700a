// NaN hunting: the loss and the gradient norm per step, the first non-finite step marked and
// the layer and op it came from said.

import { t } from "../page.js";
import { $, finite, plot } from "./plots.js";

export function render(panel, hunt) {
  const steps = hunt.loss.map((_, i) => i);
  const at = hunt.first_nonfinite_step;
  const mark =
    at === null
      ? []
      : [
          {
            type: "line",
            x0: at,
            x1: at,
            yref: "paper",
            y0: 0,
            y1: 1,
            line: { color: "#e03131", dash: "dash" },
          },
        ];
  const note =
    at === null
      ? []
      : [
          {
            x: at,
            yref: "paper",
            y: 1,
            text: t("training.nan.mark", { step: at }),
            showarrow: false,
            yanchor: "bottom",
            font: { color: "#e03131" },
          },
        ];
  const layout = (key) => ({
    title: { text: t(key) },
    yaxis: { type: "log" },
    xaxis: { title: { text: t("training.axis.step") } },
    shapes: mark,
    annotations: note,
    showlegend: false,
  });
  plot(
    $("nan-loss"),
    [
      {
        type: "scatter",
        mode: "lines+markers",
        x: steps,
        y: finite(hunt.loss),
        marker: { size: 3 },
        line: { color: "#d9480f" },
      },
    ],
    layout("training.nan.loss"),
  );
  plot(
    $("nan-norm"),
    [
      {
        type: "scatter",
        mode: "lines+markers",
        x: steps,
        y: finite(hunt.grad_norm),
        marker: { size: 3 },
        line: { color: "#3b5bdb" },
      },
    ],
    layout("training.nan.norm"),
  );
  const summary = panel.querySelector(".summary");
  summary.dataset.step = at === null ? "" : String(at);
  summary.textContent =
    at === null
      ? t("training.nan.finite", { steps: hunt.loss.length })
      : t("training.nan.found", {
          step: at,
          phase: t("training.nan.phase." + hunt.origin.phase),
          module: hunt.origin.module,
          op: hunt.origin.op,
        }) +
        " " +
        t("training.nan.why." + hunt.cause);
  summary.classList.toggle("bad", at !== null);
}
