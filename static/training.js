// The training lab: a tab per lesson, each a form → POST /api/training/<lesson> → Plotly charts.
// The training loop streams: one server-sent event per chunk of steps (api.js postEvents).
// This module wires things up: read state → fetch → render. All state is in the URL hash.

import { ApiError, markStale, postEvents, postJSON, renderFailure } from "./api.js";
import { now, page, t } from "./page.js";
import { followHash, readState, writeState } from "./urlstate.js";
import {
  VIEW_FIELDS,
  drawView,
  landscapeRequest,
  play,
  resume,
  runsText,
  seek,
} from "./training/landscape.js";

const $ = (id) => document.getElementById(id);
const LESSONS = page.choices.lessons;

// Every view is a link: this table is the whole of the page's state in the URL. Its fields are
// each lesson's request as the server's schema fills it in (page.choices.defaults), so a field
// added to a lesson's schema is in the address, the form and the request with no line here.
const DEFAULTS = page.choices.defaults;
const TYPES = { number: Number, boolean: Boolean, string: String };
const FIELDS = [
  { name: "lesson", type: String, default: "flow" },
  ...Object.entries(DEFAULTS).flatMap(([lesson, defaults]) =>
    Object.entries(defaults).map(([name, value]) =>
      Array.isArray(value)
        ? // The landscape's runs, as its form writes them: "sgd:0.5,adam:0.02".
          { name: `${lesson}.${name}`, type: String, default: runsText(value) }
        : { name: `${lesson}.${name}`, type: TYPES[typeof value] ?? String, default: value },
    ),
  ),
  ...VIEW_FIELDS,
];

const state = { values: {}, running: null };

// Each lesson draws with its own script, static/training/<lesson>.js, found by its name.
const lessonScript = (lesson) => import(`./training/${lesson}.js`);

// --- State: URL ↔ form fields -----------------------------------------------------------------

function fieldsOf(lesson) {
  return FIELDS.filter((f) => f.name.startsWith(lesson + "."));
}

function fillForms() {
  for (const field of FIELDS) {
    const input = document.querySelector(`[name="${field.name}"]`);
    if (!input) continue;
    if (field.type === Boolean) input.checked = Boolean(state.values[field.name]);
    else input.value = String(state.values[field.name]);
  }
  for (const button of document.querySelectorAll("[data-fix]")) {
    button.setAttribute("aria-pressed", String(button.dataset.fix === state.values["nan.fix"]));
  }
}

function readForm(lesson) {
  for (const field of fieldsOf(lesson)) {
    const input = document.querySelector(`[name="${field.name}"]`);
    if (!input) continue;
    if (field.type === Boolean) state.values[field.name] = input.checked;
    else if (field.type === Number) state.values[field.name] = Number(input.value);
    else state.values[field.name] = input.value;
  }
}

function requestOf(lesson) {
  const body = {};
  for (const field of fieldsOf(lesson))
    body[field.name.slice(lesson.length + 1)] = state.values[field.name];
  return lesson === "landscape" ? landscapeRequest(body) : body;
}

function showLesson(lesson) {
  for (const id of LESSONS) {
    $("panel-" + id).hidden = id !== lesson;
    $("tab-" + id).setAttribute("aria-selected", String(id === lesson));
  }
}

// --- Running a lesson ------------------------------------------------------------------------

async function run(lesson) {
  readForm(lesson);
  await writeState(FIELDS, state.values);
  const panel = $("panel-" + lesson);
  const results = panel.querySelector(".results");
  const request = JSON.stringify(requestOf(lesson));
  delete results.dataset.request;
  showError(panel, null);
  panel.classList.add("busy");
  try {
    if (lesson === "train") {
      await train(requestOf("train"), results);
    } else {
      const [{ render }, result] = await Promise.all([
        lessonScript(lesson),
        postJSON(`/api/training/${lesson}`, requestOf(lesson)),
      ]);
      render(panel, result);
      drawn(results);
    }
    results.dataset.request = request;
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    showError(panel, err, () => {
      if (!state.running) run(lesson);
    });
    // What is drawn is an earlier run's (a training run that broke off says so in train()).
    if (lesson !== "train" && results.dataset.drawn) markStale(results, t("net.stale"));
  } finally {
    panel.classList.remove("busy");
    // A counter the browser tests wait on: one more each time a lesson has been drawn.
    document.body.dataset.runs = String(Number(document.body.dataset.runs ?? 0) + 1);
  }
}

// The figures now answer the latest request.
function drawn(results) {
  markStale(results, null);
  results.dataset.drawn = "1";
}

// Whether a lesson's figures are drawn, for the values the form now holds.
function drawnFor(lesson) {
  const results = $("panel-" + lesson).querySelector(".results");
  return (
    results.dataset.drawn === "1" && results.dataset.request === JSON.stringify(requestOf(lesson))
  );
}

function showError(panel, err, retry) {
  const box = panel.querySelector(".error");
  if (err?.retry) return renderFailure(box, err, t, retry);
  box.hidden = !err;
  box.replaceChildren();
  if (!err) return;
  const message = document.createElement("p");
  message.textContent = err.message;
  box.append(message);
  if (err.hint) {
    const hint = document.createElement("p");
    hint.className = "muted";
    hint.textContent = err.hint;
    box.append(hint);
  }
}

// The loop streams one event per chunk of steps; each is drawn as it arrives.
async function train(body, results) {
  const controller = new AbortController();
  state.running = controller;
  $("stop").disabled = false;
  const run = { loss: [], grad_norm: [], clipped_norm: [], lr: [], data: null };
  let last = null;
  setProgress(0, body.steps, "training.progress.start");
  try {
    for await (const chunk of postEvents("/api/training/run", body, {
      signal: controller.signal,
    })) {
      for (const key of ["loss", "grad_norm", "clipped_norm", "lr"]) run[key].push(...chunk[key]);
      run.data = chunk.data ?? run.data;
      last = chunk;
      const done = chunk.start + chunk.loss.length;
      (await lessonScript("train")).render(run, chunk);
      drawn(results);
      const key = chunk.diverged ? "training.progress.diverged" : "training.progress.step";
      setProgress(done, chunk.total, key, { accuracy: (100 * chunk.accuracy).toFixed(1) });
    }
    // A stream that ends early without saying why was cut off, not finished.
    if (!last?.diverged && run.loss.length < (last?.total ?? body.steps)) {
      throw new ApiError(
        { type: "interrupted", message: `the stream ended after ${run.loss.length} steps` },
        0,
      );
    }
  } catch (err) {
    if (err.name === "AbortError") {
      $("progress-text").textContent = t("training.progress.stopped", { step: run.loss.length });
      return;
    }
    const total = last?.total ?? body.steps;
    if (last) {
      $("progress-text").textContent = t("training.progress.broke_off", {
        step: run.loss.length,
        total,
      });
      markStale(results, t("training.partial", { step: run.loss.length, total }));
    } else {
      $("progress-text").textContent = t("training.progress.not_started");
      if (results.dataset.drawn) markStale(results, t("net.stale"));
    }
    throw err;
  } finally {
    state.running = null;
    $("stop").disabled = true;
    document.body.dataset.trained = String(run.loss.length);
  }
}

function setProgress(done, total, key, params = {}) {
  $("progress").max = total;
  $("progress").value = done;
  $("progress-text").textContent = t(key, { step: done, total, ...params });
}

// --- Wiring ------------------------------------------------------------------------------------

for (const form of document.querySelectorAll("form[data-lesson]")) {
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (!state.running) run(form.dataset.lesson);
  });
}
// A tab opens its lesson already run, as a link to it does: no empty plots to puzzle over. The
// training loop is the exception: the learner sets it up, then presses Train and watches it.
for (const button of document.querySelectorAll("[role=tab]")) {
  button.addEventListener("click", async () => {
    const lesson = button.dataset.lesson;
    state.values.lesson = lesson;
    showLesson(lesson);
    await writeState(FIELDS, state.values);
    if (lesson !== "train" && !drawnFor(lesson) && !state.running) run(lesson);
  });
}
for (const button of document.querySelectorAll("[data-preset]")) {
  button.addEventListener("click", () => {
    const preset = { "flow.batchnorm": false, "flow.residual": false, "flow.init": "default" };
    for (const [key, value] of Object.entries(page.choices.flow_presets[button.dataset.preset]))
      preset["flow." + key] = value;
    Object.assign(state.values, preset);
    fillForms();
    run("flow");
  });
}
for (const button of document.querySelectorAll("[data-fix]")) {
  button.addEventListener("click", () => {
    readForm("nan");
    state.values["nan.fix"] = button.dataset.fix;
    fillForms();
    run("nan");
  });
}
$("stop").addEventListener("click", () => state.running?.abort());
// The landscape's view (plane, run, chart) redraws what came back; it asks the server nothing.
for (const input of document.querySelectorAll('[name^="landscape_view."]')) {
  input.addEventListener("change", async () => {
    readForm("landscape_view");
    state.values["landscape_view.play"] = 0; // a changed view starts still
    await writeState(FIELDS, state.values);
    drawView($("panel-landscape"));
  });
}
$("landscape-play").addEventListener("click", async () => {
  state.values["landscape_view.play"] = now();
  await writeState(FIELDS, state.values);
  play($("panel-landscape"), state.values["landscape_view.play"]);
});
$("landscape-step").addEventListener("input", (event) =>
  seek($("panel-landscape"), Number(event.target.value)),
);

// Open what the address says: its lesson, already run (a lesson drawn for these values stays).
async function open(values) {
  state.values = values;
  if (!LESSONS.includes(state.values.lesson)) state.values.lesson = LESSONS[0];
  fillForms();
  showLesson(state.values.lesson);
  if (drawnFor(state.values.lesson)) {
    if (state.values.lesson === "landscape") {
      // a view changed, or the teacher pressed Play
      drawView($("panel-landscape"));
      resume($("panel-landscape"));
    }
    return;
  }
  state.running?.abort();
  await run(state.values.lesson);
}

// A link pasted into the address bar, or the class mode's teacher, changes only the hash.
followHash(FIELDS, open);
readState(FIELDS).then(open);

// --- Class mode (static/room.js reads this; the rest of the page knows nothing of it) -------
// What a teacher can ask the class about the lesson on screen, once it has run: in the
// gradient-flow lesson whether the gradients vanish or explode, in the NaN lesson whether the
// loss stops being finite.
window.gradientLab = {
  questions() {
    const lesson = state.values.lesson;
    const summary = $("panel-" + lesson)?.querySelector(".summary");
    const yes = (answer) => (answer ? "yes" : "no");
    if (lesson === "flow" && summary?.dataset.verdict) {
      const params = { depth: String(state.values["flow.depth"]) };
      return [
        {
          kind: "yesno",
          prompt: "room.q.vanish",
          params,
          answer: yes(summary.dataset.verdict === "vanishing"),
        },
        {
          kind: "yesno",
          prompt: "room.q.explode",
          params,
          answer: yes(summary.dataset.verdict === "exploding"),
        },
      ];
    }
    if (lesson === "nan" && summary?.dataset.step !== undefined) {
      return [
        {
          kind: "yesno",
          prompt: "room.q.nan",
          params: { steps: String(state.values["nan.steps"]) },
          answer: yes(summary.dataset.step !== ""),
        },
      ];
    }
    return [];
  },
};
