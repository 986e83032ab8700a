// The descent lab's run editor: one row per run (optimizer, lr, y's lr, torch options,
// scheduler, clip, label), its menus from the server's registries.
//
// What a row says must stay true of what races: a label a story gave ("Adam lr=0.05") goes when
// the run is changed; a new optimizer takes an lr that suits it on this surface, and keeps only
// the options it accepts; under the sweep the lr shown is the one the sweep picked.

import { page, t } from "../page.js";
import { KINDS, labelOf, styles, swatch } from "./style.js";

const OPTIONS = page.options;
const SLIDE_MS = 150;

// A run as text with its keys sorted (labels aside): two runs are the same when these are equal.
export function canon(run) {
  const sorted = (v) => {
    if (Array.isArray(v)) return v.map(sorted);
    if (!v || typeof v !== "object") return v;
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .filter((k) => k !== "label" && v[k] !== undefined)
        .map((k) => [k, sorted(v[k])]),
    );
  };
  return JSON.stringify(sorted(run));
}

const pairs = (obj) =>
  Object.entries(obj)
    .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
    .join(", ");

export function parsePairs(text) {
  const out = {};
  for (const part of text.split(/,(?![^[]*\])/)) {
    const [key, ...value] = part.split("=");
    if (!key.trim()) continue;
    const raw = value.join("=").trim();
    try {
      out[key.trim()] = JSON.parse(raw);
    } catch {
      out[key.trim()] = raw;
    }
  }
  return out;
}

function select(cls, items, value, label, aria) {
  const el = document.createElement("select");
  el.className = cls;
  el.setAttribute("aria-label", aria);
  for (const item of items) el.append(new Option(label(item), item, false, item === value));
  return el;
}

function input(cls, { type = "text", size, placeholder, aria, value }) {
  const el = document.createElement("input");
  el.className = cls;
  el.type = type;
  if (type === "number") el.step = "any";
  if (size) el.size = size;
  if (placeholder) el.placeholder = placeholder;
  if (aria) el.setAttribute("aria-label", aria);
  el.value = value ?? ""; // user text: a value, never innerHTML
  return el;
}

function labelled(text, el) {
  const label = document.createElement("label");
  label.append(text, " ", el);
  return label;
}

// The rows for `runs`; `swept` gives a run's lr picked by the sweep (the form then shows it).
export function renderRunEditor(box, runs, { sweep = false, swept = [] } = {}) {
  box.replaceChildren();
  const style = styles(runs);
  runs.forEach((run, r) => {
    const { optimizer, lr, lr_y: lrY, scheduler, clip, label, ...rest } = run;
    const { kind: sKind = "", ...sArgs } = scheduler ?? {};
    const row = document.createElement("div");
    row.className = "run-row";
    row.dataset.run = r;
    // The run as the story (or the last race) gave it: a label it came with is the story's own.
    row.dataset.origin = canon({ ...run, lr: swept[r] ?? lr });
    row.dataset.autoLabel = label ?? "";
    const lrInput = input("lr", { type: "number", size: 6, value: swept[r] ?? lr });
    if (sweep) {
      lrInput.disabled = true;
      lrInput.title = t("descent.run.swept");
    }
    row.append(
      swatch(style[r]),
      select("optimizer", OPTIONS.optimizers, optimizer, labelOf, t("descent.run.optimizer")),
      labelled("lr", lrInput),
      ...sliders(optimizer, { lr: swept[r] ?? lr, ...rest }, sweep),
      labelled(t("descent.run.lr_y"), input("lr_y", { type: "number", size: 6, value: lrY })),
      labelled(
        t("descent.run.options"),
        input("options", { size: 16, placeholder: "weight_decay=0.01", value: pairs(rest) }),
      ),
      select(
        "scheduler",
        ["", ...OPTIONS.schedulers],
        sKind,
        (v) => v || t("descent.run.scheduler.none"),
        t("descent.run.scheduler"),
      ),
      input("scheduler-args", {
        size: 14,
        placeholder: "step_size=100",
        aria: t("descent.run.scheduler"),
        value: pairs(sArgs),
      }),
      select(
        "clip",
        ["", ...OPTIONS.clips],
        clip?.kind ?? "",
        (v) => v || t("descent.run.clip.none"),
        t("descent.run.clip"),
      ),
      input("clip-max", {
        type: "number",
        size: 4,
        aria: t("descent.run.clip.max"),
        value: clip?.max,
      }),
      input("label", {
        size: 14,
        placeholder: t("descent.run.label"),
        aria: t("descent.run.label"),
        value: label,
      }),
      removeButton(),
    );
    if (sweep && swept[r] !== undefined) row.append(note(t("descent.run.swept")));
    box.append(row);
  });
}

// Sliders for what a learner most wants to feel (distill's "Why Momentum Really Works"): the lr
// on a log scale, the momentum, Adam's β₁. Moving one writes the field beside it and races again.
const SLIDERS = [
  {
    name: "lr",
    symbol: "lr",
    min: -4,
    max: 0.5,
    step: 0.01,
    takes: () => true,
    from: (v) => Math.log10(v),
    to: (x) => Number((10 ** x).toPrecision(2)),
  },
  {
    name: "momentum",
    symbol: "μ",
    min: 0,
    max: 0.99,
    step: 0.01,
    takes: (options) => options.includes("momentum"),
    from: (v) => v,
    to: (x) => x,
  },
  {
    name: "betas",
    symbol: "β₁",
    min: 0,
    max: 0.999,
    step: 0.001,
    takes: (options) => options.includes("betas"),
    from: (v) => v[0],
    to: (x, v) => [x, v[1]],
  },
];

function sliders(optimizer, given, sweep) {
  const kind = KINDS[optimizer];
  if (!kind) return [];
  return SLIDERS.filter((s) => s.takes(kind.options)).map((s) => {
    const value = given[s.name] ?? kind.defaults[s.name];
    const el = input(`slide slide-${s.name}`, {
      type: "range",
      aria: t("descent.run.slide", { name: s.symbol }),
    });
    Object.assign(el, { min: s.min, max: s.max, step: s.step });
    el.value = String(s.from(value));
    el.dataset.param = s.name;
    if (sweep && s.name === "lr") el.disabled = true;
    const shown = document.createElement("span");
    shown.className = "slide-value";
    shown.textContent = `${s.symbol}`;
    const label = document.createElement("label");
    label.className = "slide-label";
    label.append(shown, el);
    return label;
  });
}

// A slider moved: the lr field or the options text says its new value.
function slid(row, slider) {
  const s = SLIDERS.find((one) => one.name === slider.dataset.param);
  const x = Number(slider.value);
  if (s.name === "lr") {
    row.querySelector(".lr").value = String(s.to(x));
    return;
  }
  const options = parsePairs(row.querySelector(".options").value);
  const optimizer = row.querySelector(".optimizer").value;
  options[s.name] = s.to(x, options[s.name] ?? KINDS[optimizer]?.defaults[s.name]);
  row.querySelector(".options").value = pairs(options);
}

function removeButton() {
  const button = document.createElement("button");
  button.type = "button";
  button.className = "remove icon";
  button.setAttribute("aria-label", t("descent.run.remove"));
  button.textContent = "✕";
  return button;
}

function note(text) {
  const p = document.createElement("span");
  p.className = "run-note small muted";
  p.setAttribute("role", "status");
  p.textContent = text;
  return p;
}

function readRow(row) {
  const value = (cls) => row.querySelector(cls).value.trim();
  const run = { optimizer: value(".optimizer"), ...parsePairs(value(".options")) };
  if (value(".lr") !== "") run.lr = Number(value(".lr"));
  if (value(".lr_y") !== "") run.lr_y = Number(value(".lr_y"));
  if (value(".scheduler"))
    run.scheduler = { kind: value(".scheduler"), ...parsePairs(value(".scheduler-args")) };
  if (value(".clip")) run.clip = { kind: value(".clip"), max: Number(value(".clip-max") || 1) };
  return run;
}

// The runs the rows describe. A story's label names the run it came with ("Adam lr=0.05"): once
// the run changes, or the sweep picks its lr, the server names it from its settings instead.
export function readRunEditor(box, { sweep = false } = {}) {
  return [...box.querySelectorAll(".run-row")].map((row) => {
    const run = readRow(row);
    const label = row.querySelector(".label").value.trim();
    const theirs = label && label === row.dataset.autoLabel;
    const same = canon(run) === row.dataset.origin && !sweep;
    if (label && (!theirs || same)) run.label = label;
    return run;
  });
}

// A row's optimizer changed: an lr that suits the new one here, and only the options it takes.
export function switchOptimizer(row, suggestedLr) {
  const optimizer = row.querySelector(".optimizer").value;
  const accepted = new Set(OPTIONS.optimizer_options[optimizer] ?? []);
  const kept = Object.fromEntries(
    Object.entries(parsePairs(row.querySelector(".options").value)).filter(([key]) =>
      accepted.has(key),
    ),
  );
  row.querySelector(".options").value = pairs(kept);
  const lr = suggestedLr(optimizer) ?? row.querySelector(".lr").value;
  row.querySelector(".lr").value = lr;
  row.querySelector(".run-note")?.remove();
  row.append(note(t("descent.run.lr_suggested", { lr, optimizer: labelOf(optimizer) })));
  const [style] = styles([{ optimizer }]);
  row.querySelector(".swatch").replaceWith(swatch(style));
  // The new optimizer's own sliders (Adam has β₁, SGD + momentum has μ).
  for (const old of row.querySelectorAll(".slide-label")) old.remove();
  row
    .querySelector(".lr")
    .closest("label")
    .after(...sliders(optimizer, { lr: Number(lr), ...kept }, false));
}

// The next run to add: the first optimizer not racing yet.
export function nextOptimizer(runs) {
  const used = new Set(runs.map((run) => run.optimizer));
  return (
    OPTIONS.optimizers.find((name) => !used.has(name)) ??
    OPTIONS.optimizers[runs.length % OPTIONS.optimizers.length]
  );
}

// The editor's own controls: a changed row (a new optimizer takes an lr that suits it), Add a
// run, Remove one. `onEdit` races the setup the rows now describe.
export function wireRunEditor(box, add, { onEdit, onSlide, onSliding, sweep, lrFor }) {
  // A slider races again while it moves, a few times a second at most: each race takes a
  // fraction of a second, and the last position is the one that counts.
  let pending = null;
  box.addEventListener("input", (event) => {
    if (!event.target.classList.contains("slide")) return;
    slid(event.target.closest(".run-row"), event.target);
    onSliding(); // the race on show stops: the one the slider asks for plays when it arrives
    clearTimeout(pending);
    pending = setTimeout(onSlide, SLIDE_MS);
  });
  box.addEventListener("change", (event) => {
    if (event.target.classList.contains("slide")) return; // its input events raced already
    if (event.target.classList.contains("optimizer"))
      switchOptimizer(event.target.closest(".run-row"), lrFor);
    onEdit();
  });
  add.addEventListener("click", () => {
    const runs = readRunEditor(box);
    const optimizer = nextOptimizer(runs);
    runs.push({ optimizer, lr: lrFor(optimizer) ?? runs.at(-1)?.lr ?? 0.01 });
    renderRunEditor(box, runs, { sweep: sweep() });
    onEdit();
  });
  box.addEventListener("click", (event) => {
    const remove = event.target.closest(".remove");
    const runs = readRunEditor(box);
    if (!remove || runs.length < 2) return;
    runs.splice(Number(remove.closest(".run-row").dataset.run), 1);
    renderRunEditor(box, runs, { sweep: sweep() });
    onEdit();
  });
}
