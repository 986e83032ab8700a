// The descent lab's panels beside the plot: the runs as they raced, their update rules, and an
// error where the learner is looking. Plain data in; text from the learner goes in as text.

import { ApiError, renderFailure } from "../api.js";
import { t } from "../page.js";
import { fmt, stepValues } from "./render.js";
import { labelOf, styles, swatch } from "./style.js";

// Each run as it raced: its marker, its label, and the settings torch used (the sweep's lr too).
export function renderLegend(body, runs) {
  body.replaceChildren();
  const style = styles(runs);
  runs.forEach((run, r) => {
    const row = document.createElement("tr");
    row.dataset.run = r;
    const name = document.createElement("td");
    const label = document.createElement("strong");
    label.textContent = run.label;
    const settings = document.createElement("div");
    settings.className = "muted settings";
    const notes = [
      Object.entries(run.settings)
        .map(([k, v]) => `${k}=${Array.isArray(v) ? v.join("/") : v}`)
        .join(" "),
    ];
    if (run.sweep) notes.push(t("descent.swept", { lr: fmt(run.sweep.picked) }));
    if (run.diverged_at !== null) notes.push(t("descent.diverged", { k: run.diverged_at }));
    settings.textContent = notes.join(" · ");
    name.append(swatch(style[r]), label, settings);
    row.append(name);
    for (const cls of ["point", "loss", "lr", "grad", "state"]) {
      const cell = document.createElement("td");
      cell.className = cls;
      row.append(cell);
    }
    body.append(row);
  });
}

// The legend's numbers at step k: the point, its loss, lr, gradient norm, optimizer state.
export function showLegendFrame(body, runs, k) {
  for (const row of body.querySelectorAll("tr")) {
    const run = runs[Number(row.dataset.run)];
    row.classList.toggle("diverged", run.diverged_at !== null && k >= run.diverged_at);
    for (const [cls, text] of Object.entries(stepValues(run, k)))
      row.querySelector(`.${cls}`).textContent = text;
  }
}

// Each update rule as the server wrote it from the run's real settings (momentum 0.5 says
// μ = 0.5): one entry per optimizer and rule, marked as that run is.
export function renderRules(list, runs) {
  list.replaceChildren();
  const style = styles(runs);
  const shown = new Set();
  runs.forEach((run, r) => {
    const key = `${run.optimizer}\n${run.rule}`;
    if (shown.has(key)) return;
    shown.add(key);
    const dt = document.createElement("dt");
    dt.append(swatch(style[r]), labelOf(run.optimizer));
    const dd = document.createElement("dd");
    dd.textContent = run.rule;
    list.append(dt, dd);
  });
}

// An error shows where the learner is looking, over the plot, which keeps the last surface
// that worked, marked as such; the form's copy stays beside the Race button.
export function renderError(boxes, err, { retry, kept }) {
  for (const box of boxes) {
    if (err?.retry) {
      renderFailure(box, err, t, retry);
      continue;
    }
    box.hidden = !err;
    box.replaceChildren();
    if (!err) continue;
    const title = document.createElement("p");
    title.className = "net-title";
    title.textContent = t("descent.error.title");
    const message = document.createElement("p");
    message.className = "error-message";
    message.textContent =
      err instanceof ApiError && err.line ? `${err.message} (line ${err.line})` : err.message;
    box.append(title, message);
    const hint = (err.hintKey && t(err.hintKey, {}, null)) || err.hint;
    if (hint) {
      const p = document.createElement("p");
      p.textContent = hint;
      box.append(p);
    }
    if (box.id === "plot-error" && kept) {
      const kept = document.createElement("p");
      kept.className = "muted";
      kept.textContent = t("descent.error.kept");
      box.append(kept);
    }
  }
}
