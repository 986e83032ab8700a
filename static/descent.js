// The descent lab: optimizers racing down a loss surface. This module wires things up:
// read state (the URL) → fetch the grid and the race → render; the drawing is in descent/render.js,
// the run editor in descent/form.js, each optimizer's colour and marker in descent/style.js.

import { markStale, postJSON } from "./api.js";
import { copyLink, now, t } from "./page.js";
import { changed, followHash, readState, writeState } from "./urlstate.js";
import {
  fmt,
  moveCursor,
  renderCharts,
  renderSurface,
  showFrameOnSurface,
  showFuture,
} from "./descent/render.js";
import { canon, readRunEditor, renderRunEditor, wireRunEditor } from "./descent/form.js";
import { renderError, renderLegend, renderRules, showLegendFrame } from "./descent/panels.js";
import {
  SURFACES,
  formulaOf,
  presetState,
  ranges,
  runsList,
  startPoint,
  surfaceBody,
} from "./descent/setup.js";
import {
  onRoom,
  pointQuestions,
  predictTraces,
  predicting,
  raced,
  tapPlot,
  wirePredict,
} from "./descent/predict.js";

const $ = (id) => document.getElementById(id);
const DEFAULT_PRESET = "rosenbrock";

// Every view is a link: this table is the whole of the page's state in the URL.
const FIELDS = [
  { name: "preset", type: String, default: "" },
  { name: "surface", type: String, default: "rosenbrock" },
  { name: "param", type: String, default: "" },
  { name: "expr", type: String, default: "", compress: true },
  { name: "start", type: String, default: "" },
  { name: "steps", type: Number, default: 200 },
  { name: "noise", type: Number, default: 0 },
  { name: "sweep", type: Boolean, default: false },
  { name: "runs", type: String, default: "", compress: true },
  { name: "view", type: String, default: "2d" },
  { name: "basins", type: Boolean, default: false },
  { name: "speed", type: Number, default: 1 },
  { name: "k", type: Number, default: 0 },
  // Playing, by the address: since when (page.js now(), ms) from step k, so that a class's
  // screens play the teacher's race in step, each from the same moment.
  { name: "play", type: Number, default: 0 },
];
// What a race depends on: a change to any of these races again; the rest only redraws.
const RACE = ["surface", "param", "expr", "start", "steps", "noise", "sweep", "runs"];

const state = {
  preset: "",
  surface: "rosenbrock",
  param: "",
  expr: "",
  start: "",
  steps: 200,
  noise: 0,
  sweep: false,
  runs: "",
  view: "2d",
  basins: false,
  speed: 1,
  k: 0,
  play: 0,
  grid: null,
  gridKey: "",
  race: null,
  basinsMap: null,
  timer: null,
  busy: false,
  clicks: false,
  previous: [],
  ticket: 0,
};

// --- The form ---------------------------------------------------------------------------------

function showForm() {
  $("preset").value = state.preset;
  $("surface").value = state.surface;
  const surface = SURFACES[state.surface];
  const names = surface ? Object.keys(surface.params) : [];
  $("param-label").hidden = !names.length;
  if (names.length) {
    $("param-name").textContent = names[0];
    $("param").value = state.param || surface.params[names[0]];
  }
  $("formula-text").textContent = surface ? `f(x, y) = ${formulaOf(surface, state.param)}` : "";
  $("formula").hidden = !surface;
  $("expr-box").hidden = state.surface !== "custom";
  $("expr").value = state.expr;
  const [x, y] = startPoint(state);
  $("start-x").value = x;
  $("start-y").value = y;
  $("steps").value = state.steps;
  $("noise").value = state.noise;
  $("sweep").checked = state.sweep;
  $("speed").value = String(state.speed);
  for (const radio of document.querySelectorAll('input[name="view"]'))
    radio.checked = radio.value === state.view;
  $("basins").setAttribute("aria-pressed", String(state.basins));
  showStory();
  renderRunEditor($("runs"), runsList(state), { sweep: state.sweep });
}

// A story's text stays only while the setup is the story's.
function showStory() {
  const story = state.preset ? `descent.preset.${state.preset}.story` : "";
  $("story").hidden = !story;
  $("story").textContent = story ? t(story) : "";
  $("preset").value = state.preset;
}

function readForm() {
  state.surface = $("surface").value;
  state.param = $("param-label").hidden ? "" : $("param").value;
  state.expr = $("expr").value;
  state.start = `${Number($("start-x").value)},${Number($("start-y").value)}`;
  state.steps = Math.max(1, Math.min(5000, Math.round(Number($("steps").value) || 200)));
  state.noise = Math.max(0, Number($("noise").value) || 0);
  state.sweep = $("sweep").checked;
  state.runs = JSON.stringify(readRunEditor($("runs"), { sweep: state.sweep }));
}

// The setup was edited, or Race pressed: it races again, and stays a story only while it is one.
// A slider's change (`compare`) keeps the race before it, faded, beside the new one.
function edited({ compare = false } = {}) {
  readForm();
  if (!isStory(state.preset)) state.preset = "";
  showStory();
  race({ compare });
}

// Whether the form still holds the story's setup (its labels aside).
function isStory(id) {
  const story = presetState(id);
  if (!story.preset) return false;
  const same = (name) =>
    name === "runs"
      ? canon(JSON.parse(story.runs)) === canon(runsList(state))
      : String(story[name]) === String(state[name]);
  return RACE.filter((name) => name !== "expr").every(same);
}

// --- Fetch and render -------------------------------------------------------------------------

// A race the learner started plays as soon as it arrives; one opened by its address (a link, the
// class following its teacher) plays only where the address says so, from the moment it names.
async function race({ keepFrame = false, compare = false } = {}) {
  stopClock();
  if (!keepFrame) state.play = 0;
  const ticket = ++state.ticket; // a slider moves on while a race is out: only the last one counts
  const before = compare && state.race ? state.race.runs : [];
  state.busy = true;
  // Disabling the focused button drops focus to <body>: give it back when the race is done, so a
  // keyboard user keeps their place (and their focus ring).
  const refocus = document.activeElement === $("race");
  $("race").disabled = true;
  $("race").textContent = t("descent.racing");
  try {
    // Nothing is kept until every answer is in: a failure leaves the last race whole.
    const surface = surfaceBody(state);
    const key = JSON.stringify(surface);
    const fresh = key !== state.gridKey;
    performance.mark("descent:asked"); // the marks time a race's parts (browser tests read them)
    const grid = fresh
      ? await postJSON("/api/surface", { ...surface, ...ranges(state), resolution: 100 })
      : state.grid;
    const result = await postJSON("/api/descent", {
      ...surface,
      start: startPoint(state),
      steps: state.steps,
      runs: runsList(state),
      noise: state.noise,
      sweep: state.sweep,
    });
    let basinsMap = fresh ? null : state.basinsMap;
    if (state.basins && !basinsMap) basinsMap = await fetchBasins();
    if (ticket !== state.ticket) return;
    performance.mark("descent:replied");
    Object.assign(state, { grid, gridKey: key, race: result, basinsMap, previous: before });
    if (!keepFrame) state.k = 0;
    state.k = Math.min(state.k, lastFrame());
    showError(null);
    if (state.sweep) showSwept(result.runs);
    await render();
    raced();
    performance.mark("descent:drawn");
    if (!keepFrame) play();
    else if (state.play) run();
    markStale($("result"), null);
    document.body.dataset.races = String(Number(document.body.dataset.races ?? 0) + 1);
  } catch (err) {
    if (ticket !== state.ticket) return;
    showError(err, () => race({ keepFrame }));
    // What is drawn is the last race that arrived, not the one the form now asks for.
    markStale($("result"), state.race ? t("net.stale") : null);
    document.body.dataset.failures = String(Number(document.body.dataset.failures ?? 0) + 1);
  } finally {
    if (ticket === state.ticket) {
      state.busy = false;
      $("race").disabled = false;
      $("race").textContent = t("descent.race");
      if (refocus && document.activeElement === document.body) $("race").focus();
      save();
    }
  }
}

// The sweep picked each run's lr: the form and the link say the lr that raced.
function showSwept(runs) {
  const swept = runs.map((run) => run.sweep?.picked);
  state.runs = JSON.stringify(
    runsList(state).map((run, r) => (swept[r] === undefined ? run : { ...run, lr: swept[r] })),
  );
  renderRunEditor($("runs"), runsList(state), { sweep: true, swept });
}

function fetchBasins() {
  const run = runsList(state)[0];
  return postJSON("/api/basins", {
    ...surfaceBody(state),
    ...ranges(state),
    resolution: 40,
    steps: Math.min(state.steps, 300),
    run: { optimizer: run.optimizer, lr: run.lr },
  });
}

async function showBasins() {
  showError(null);
  try {
    if (state.basins && !state.basinsMap) state.basinsMap = await fetchBasins();
    if (state.race) await render();
  } catch (err) {
    showError(err, showBasins);
  }
  save();
}

const lastFrame = () =>
  Math.max(0, ...(state.race?.runs ?? []).map((run) => run.points.length - 1));
const charts = () => ({ loss: $("chart-loss"), lr: $("chart-lr"), grad: $("chart-grad") });
const chartStrings = () => ({
  loss: t("descent.chart.loss"),
  lr: t("descent.chart.lr"),
  grad: t("descent.chart.grad_norm"),
  log: t("descent.chart.log"),
  clipped: t("descent.chart.clipped"),
});

async function render() {
  const runs = state.race.runs;
  // While the class predicts, nothing on the plot tells where the runs go.
  await renderSurface($("plot"), state.grid, runs, {
    view: state.view,
    frame: shownFrame(),
    basins: state.basins ? state.basinsMap : null,
    minima: SURFACES[state.surface]?.minima ?? [],
    previous: state.previous,
    future: !predicting(),
    overlay: predictTraces(),
    strings: {
      loss: t("descent.col.loss"),
      minimum: t("descent.minimum"),
      before: t("descent.before"),
      diverged: (k) => t("descent.diverged", { k }),
    },
  });
  $("minimum-note").hidden = !SURFACES[state.surface]?.minima.length;
  // Plotly gives the element its .on once it has drawn there: the first race may have failed.
  if (!state.clicks) state.clicks = Boolean($("plot").on?.("plotly_click", onPlotClick));
  await renderCharts(charts(), runs, state.k, chartStrings());
  renderLegend($("legend").querySelector("tbody"), runs);
  renderRules($("rules"), runs);
  $("scrub").max = String(lastFrame());
  showFrame();
}

function showError(err, retry) {
  renderError([$("error"), $("plot-error")], err, { retry, kept: Boolean(state.race) });
  // Where neither copy is on screen (a phone, scrolled to the plot), bring the form's to it.
  // Seen: its first lines are on screen, not a sliver of it at the bottom edge.
  const seen = (el) => {
    const r = el.getBoundingClientRect();
    return r.top >= 0 && r.top + Math.min(r.height, 80) <= innerHeight;
  };
  if (err && !seen($("error")) && !seen($("plot-error")))
    $("error").scrollIntoView({ block: "center" });
}

// Step k everywhere at once: markers, travelled paths and labels, chart cursors, legend numbers.
function showFrame() {
  const runs = state.race?.runs ?? [];
  const k = shownFrame();
  showFrameOnSurface($("plot"), runs, k);
  moveCursor(charts(), k);
  showLegendFrame($("legend").querySelector("tbody"), runs, k);
  $("scrub").value = String(k);
  $("position").textContent = t("descent.position", { k, n: lastFrame() });
  document.body.dataset.frame = String(k);
}

// While the class predicts, every screen shows the start, whatever step its address names.
const shownFrame = () => (predicting() ? 0 : state.k);

// --- Playback ---------------------------------------------------------------------------------

function setFrame(k) {
  state.k = Math.max(0, Math.min(lastFrame(), k));
  showFrame();
}

// A whole race takes about RACE_SECONDS at 1×, however many steps it has and however slow the
// drawing: the step shown is the one the clock says, so a slow screen skips rather than lags.
const RACE_SECONDS = 6;

function play() {
  if (!state.race) return;
  if (state.k >= lastFrame()) setFrame(0);
  state.play = now();
  save();
  run();
}

// Move the frame by the clock while the address says the race plays (and the class is not
// predicting where it goes).
function run() {
  stopClock();
  if (predicting()) return;
  $("play").setAttribute("aria-pressed", "true");
  $("play").textContent = t("descent.pause");
  const k0 = state.k;
  const since = state.play;
  const tick = () => {
    const k =
      k0 + Math.floor((((now() - since) / 1000) * state.speed * lastFrame()) / RACE_SECONDS);
    if (k >= lastFrame()) {
      setFrame(lastFrame());
      pause();
    } else {
      setFrame(Math.max(k0, k));
    }
  };
  state.timer = setInterval(tick, 30);
  tick();
}

function stopClock() {
  if (state.timer) clearInterval(state.timer);
  state.timer = null;
  $("play").setAttribute("aria-pressed", "false");
  $("play").textContent = t("descent.play");
}

function pause() {
  stopClock();
  if (state.play) {
    state.play = 0;
    save();
  }
}

function save() {
  // Playing on from here: the address names this step and this moment (a changed speed, say).
  if (state.timer) {
    state.play = now();
    run();
  }
  return writeState(FIELDS, state);
}

// Scrubbing writes the address as it goes (for a class to follow), a few times a second.
let scrubbed = 0;
function saveWhileScrubbing() {
  if (performance.now() - scrubbed < 100) return;
  scrubbed = performance.now();
  save();
}

// --- Wiring -----------------------------------------------------------------------------------

$("preset").addEventListener("change", () => {
  if (!$("preset").value) return;
  Object.assign(state, presetState($("preset").value));
  state.basinsMap = null;
  showForm();
  race();
});
$("surface").addEventListener("change", () => {
  // The steps go with the surface (Rosenbrock needs 1000, the bowl 60) unless the learner set them.
  const defaultSteps = presetState(state.preset).steps ?? SURFACES[state.surface]?.steps;
  const own = state.steps !== defaultSteps;
  state.preset = "";
  state.surface = $("surface").value;
  if (!own && SURFACES[state.surface]) state.steps = SURFACES[state.surface].steps;
  state.param = "";
  state.start = "";
  const surface = SURFACES[state.surface];
  if (surface) {
    // Each run takes the lr that suits this surface; a story's label would now be wrong.
    state.runs = JSON.stringify(
      runsList(state).map(({ label: _label, ...run }) => ({
        ...run,
        lr: surface.lr[run.optimizer] ?? run.lr,
      })),
    );
  }
  showForm();
  if (state.surface !== "custom") race();
});
// Start from the formula on show: the learner edits it as their own surface.
$("formula-edit").addEventListener("click", () => {
  const surface = SURFACES[state.surface];
  if (!surface) return;
  state.expr = formulaOf(surface, state.param);
  state.surface = "custom";
  state.preset = "";
  showForm();
  $("expr").focus();
});
$("race").addEventListener("click", () => edited());
$("expr").addEventListener("keydown", (e) => {
  if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) edited();
});
// A change to the setup races again at once, so the plot and its legend always say what the
// form says (the surface's text waits for Race: it may be half typed).
for (const id of ["param", "start-x", "start-y", "steps", "noise", "sweep"])
  $(id).addEventListener("change", edited);
wireRunEditor($("runs"), $("add-run"), {
  onEdit: edited,
  onSlide: () => edited({ compare: true }),
  onSliding: stopClock,
  sweep: () => state.sweep,
  lrFor: (name) => SURFACES[state.surface]?.lr[name],
});
$("play").addEventListener("click", () => (state.timer ? pause() : play()));
$("back").addEventListener("click", () => {
  pause();
  setFrame(state.k - 1);
  save();
});
$("next").addEventListener("click", () => {
  pause();
  setFrame(state.k + 1);
  save();
});
$("scrub").addEventListener("input", () => {
  pause();
  setFrame(Number($("scrub").value));
  saveWhileScrubbing();
});
$("scrub").addEventListener("change", save);
$("speed").addEventListener("change", () => {
  state.speed = Number($("speed").value);
  save();
});
for (const radio of document.querySelectorAll('input[name="view"]')) {
  radio.addEventListener("change", async () => {
    state.view = radio.value;
    if (state.race) await render();
    save();
  });
}
$("basins").addEventListener("click", () => {
  state.basins = !state.basins;
  $("basins").setAttribute("aria-pressed", String(state.basins));
  showBasins();
});
$("copy-link").addEventListener("click", async () => {
  const url = await save();
  await copyLink($("copy-link"), new URL(url, location.href).href);
});
// The start is where the learner clicks on the contour.
function onPlotClick(event) {
  const point = event.points?.[0];
  if (!point || state.view === "3d" || tapPlot(event) || state.busy) return;
  state.start = `${fmt(point.x)},${fmt(point.y)}`;
  state.preset = "";
  state.runs = JSON.stringify(readRunEditor($("runs")));
  showForm();
  race();
}

// The address names the view: a story link (#preset=<id>, from /lessons) fills in its surface
// and runs; the step k it names is kept.
async function open(next) {
  const before = { ...state };
  Object.assign(state, next);
  if (!location.hash || (state.preset && !next.runs))
    Object.assign(state, presetState(state.preset || DEFAULT_PRESET));
  const diff = changed(FIELDS, before, state);
  showForm();
  if (!state.race || RACE.some((name) => diff.has(name))) return race({ keepFrame: true });
  if (diff.has("view") || diff.has("basins")) await showBasins();
  setFrame(state.k);
  if (state.play) run();
  else stopClock();
}

// A link pasted into this tab, or the class mode's teacher moving on, changes only the hash.
followHash(FIELDS, (next) => open(next));
window.addEventListener("load", async () => open(await readState(FIELDS)));

// --- Class mode (static/room.js reads this; the rest of the page knows nothing of it) -------
// What a teacher can ask the class about this race: which run first comes within 5% of the
// plot's width of a minimum (when one does, and alone), and whether each run diverges.
window.gradientLab = {
  questions() {
    const runs = state.race?.runs ?? [];
    const labels = runs.map((run) => String(run.label).slice(0, 80));
    const asked = [];
    const surface = SURFACES[state.surface];
    if (surface?.minima.length && runs.length > 1 && new Set(labels).size === labels.length) {
      const near = (0.05 * (surface.x_range[1] - surface.x_range[0])) ** 2;
      const reached = runs.map((run) =>
        run.points.findIndex(([x, y]) =>
          surface.minima.some(([mx, my]) => (Number(x) - mx) ** 2 + (Number(y) - my) ** 2 <= near),
        ),
      );
      const steps = reached.filter((k) => k >= 0);
      const first = Math.min(...steps);
      if (steps.length && steps.filter((k) => k === first).length === 1) {
        asked.push({
          kind: "choice",
          prompt: "room.q.first",
          params: {},
          choices: labels,
          answer: labels[reached.indexOf(first)],
        });
      }
    }
    runs.forEach((run, r) =>
      asked.push({
        kind: "yesno",
        prompt: "room.q.diverge",
        params: { run: labels[r] },
        answer: run.diverged_at === null ? "no" : "yes",
      }),
    );
    // Where each run gets: on the 2D plot, where a tap can say it.
    if (state.view !== "3d" && new Set(labels).size === labels.length) {
      asked.push(...pointQuestions(runs, labels, ranges(state)));
    }
    return asked;
  },
  room: onRoom,
};
// Predict the path: the race waits at its start while the class taps, and plays on the reveal.
wirePredict({
  redraw: () => {
    if (!state.race) return;
    showFuture($("plot"), !predicting());
    showFrame();
    if (state.play && !state.timer) run();
  },
  hold: stopClock,
  rewind: () => {
    pause();
    setFrame(0);
    save();
  },
  replay: () => {
    setFrame(0);
    play();
  },
});
