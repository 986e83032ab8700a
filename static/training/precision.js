// Mixed precision: the same run in float32 and under autocast, its losses, seconds and memory.

import { t } from "../page.js";
import { $, finite, fmt, plot } from "./plots.js";

export function render(panel, result) {
  const steps = result.loss_fp32.map((_, i) => i);
  plot(
    $("precision-loss"),
    [
      {
        type: "scatter",
        mode: "lines",
        name: "float32",
        x: steps,
        y: finite(result.loss_fp32),
        line: { color: "#868e96", width: 2 },
      },
      {
        type: "scatter",
        mode: "lines",
        name: `autocast ${result.dtype}`,
        x: steps,
        y: finite(result.loss_amp),
        line: { color: "#d9480f", width: 1.5, dash: "dot" },
      },
    ],
    {
      title: { text: t("training.precision.loss") },
      xaxis: { title: { text: t("training.axis.step") } },
    },
  );
  const table = panel.querySelector("table.figures");
  table.hidden = false;
  $("precision-dtype").textContent =
    `autocast (${result.dtype}${result.scaler ? " + GradScaler" : ""})`;
  const perStep = (seconds, losses) => `${((1000 * seconds) / losses.length).toFixed(2)} ms`;
  const cells = {
    seconds_fp32: `${result.seconds_fp32.toFixed(3)} s`,
    seconds_amp: `${result.seconds_amp.toFixed(3)} s`,
    step_fp32: perStep(result.seconds_fp32, result.loss_fp32),
    step_amp: perStep(result.seconds_amp, result.loss_amp),
    memory_fp32:
      result.memory_fp32 === null
        ? t("training.precision.no_memory")
        : `${(result.memory_fp32 / 2 ** 20).toFixed(1)} MiB`,
    memory_amp:
      result.memory_amp === null
        ? t("training.precision.no_memory")
        : `${(result.memory_amp / 2 ** 20).toFixed(1)} MiB`,
  };
  for (const td of table.querySelectorAll("td[data-key]")) td.textContent = cells[td.dataset.key];
  // Speed per step, since a run that ran out of its time budget did fewer steps.
  const speedup =
    result.seconds_fp32 / result.loss_fp32.length / (result.seconds_amp / result.loss_amp.length);
  const stopped = [
    ["float32", result.loss_fp32],
    [`autocast ${result.dtype}`, result.loss_amp],
  ]
    .filter(([, losses]) => losses.length < result.steps)
    .map(
      ([run, losses]) =>
        " " + t("training.precision.stopped", { run, done: losses.length, steps: result.steps }),
    );
  panel.querySelector(".summary").textContent =
    t("training.precision.summary." + result.device, {
      dtype: result.dtype,
      diff: fmt(result.max_loss_difference),
      speedup: speedup.toFixed(2),
    }) + stopped.join("");
}
