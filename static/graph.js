// The graph lab: run a program, draw the graph PyTorch built, and step through backward.
// This module wires things up: read state → fetch → render. The drawing and the stepper's
// arithmetic live in static/graph/, as plain functions over the API's JSON.

import { ApiError, markStale, postJSON, renderFailure } from "./api.js";
import { copyLink, page, t } from "./page.js";
import { changed, followHash, readState, writeState } from "./urlstate.js";
import { buildView, layoutView } from "./graph/layout.js";
import { centreOf, hoverTexts, initialRange, labelMode, rangeShowing, renderGraph, zoomRange } from "./graph/draw.js";
import { knownGrad, questions, stepView } from "./graph/steps.js";
import { renderOptimEvent } from "./graph/optim.js";
import { makeStepper, wireStepper } from "./graph/stepper.js";
import { h, renderAsk, renderChain, renderError, renderGradchecks, renderInspector, renderLeafGrads, renderNotes } from "./graph/panels.js";

const $ = (id) => document.getElementById(id);
const DEFAULT_LESSON = "S2";

// Every view is a link: this table is the whole of the page's state in the URL.
const FIELDS = [
  { name: "ex", type: String, default: "" },
  { name: "code", type: String, default: "", compress: true },
  { name: "call", type: Number, default: 0 },
  { name: "step", type: Number, default: 0 },
  { name: "simple", type: Boolean, default: false },
  { name: "predict", type: Boolean, default: false },
  { name: "speed", type: Number, default: 1 },
];

const state = {
  ex: "", call: 0, step: 0, simple: false, predict: false, speed: 1,
  graph: null, error: null, laid: null, expanded: new Set(), selected: null,
  revision: 0, range: null, mode: "full", timer: null, asking: null, verdict: null, runs: 0,
};

// The stepper's controls: First, Back, Next (predict first, then reveal), Last, Play.
const stepper = makeStepper(state, { render: () => renderSteps(), save: () => save() });

const editor = CodeMirror.fromTextArea($("code"), {
  mode: "python", lineNumbers: true, lineWrapping: true, indentUnit: 4, matchBrackets: true, viewportMargin: Infinity,
  gutters: ["CodeMirror-linenumbers", "error-gutter"],
  extraKeys: { "Ctrl-Enter": () => run(), "Cmd-Enter": () => run(), Tab: (cm) => cm.execCommand("insertSoftTab") },
});
editor.on("change", () => {
  if (state.ex && editor.getValue() !== page.lessons[state.ex]?.program) {
    state.ex = "";
    $("examples").value = "";
  }
});

// --- Running a program -----------------------------------------------------------------------

// A shared link restores its step; a run the learner starts begins at the first one.
async function run({ restore = false } = {}) {
  stepper.pause();
  // Only the latest run may draw: a learner flicking through examples must not see an
  // earlier, slower answer land on top of the program now in the editor.
  const seq = ++state.runs;
  $("run").disabled = true;
  $("status").textContent = t("graph.running");
  markLine(null);
  let graph = null;
  let error = null;
  try {
    graph = await postJSON("/api/graph", { code: editor.getValue() });
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    [graph, error] = [err.partial, err];
  }
  if (seq !== state.runs) return;
  $("run").disabled = false;
  if (error?.retry) return unanswered(error, () => run({ restore }));
  if (!restore) state.call = state.step = 0;
  show(graph, error);
  // A counter the browser tests wait on: one more each time a run has been drawn.
  document.body.dataset.runs = String(Number(document.body.dataset.runs ?? 0) + 1);
}

// No answer, so the program in the editor has not run: say why, offer Retry, and keep the last
// graph (its stepper still works) marked as not the editor's.
function unanswered(error, retry) {
  $("status").textContent = t(`net.${error.type}.title`);
  renderFailure($("error"), error, t, retry);
  markStale($("result"), state.graph ? t("net.stale") : null);
  for (const id of ["output", "gradchecks"]) $(id).classList.toggle("faded", Boolean(state.graph));
  if (!state.graph) layout();  // an empty figure, with the stepper off, on a page that opened offline
}

function show(graph, error) {
  markStale($("result"), null);
  for (const id of ["output", "gradchecks"]) $(id).classList.remove("faded");
  state.graph = graph;
  state.error = error;
  state.expanded = new Set();
  state.selected = null;
  state.asking = null;
  state.verdict = null;
  const calls = graph?.backward ?? [];
  state.call = Math.min(state.call, Math.max(0, calls.length - 1));
  state.step = calls.length ? Math.min(state.step, stepper.total()) : 0;  // a step() or zero_grad() counts
  $("status").textContent = error ? t("graph.failed") : t("graph.ran", { device: graph.device });
  renderError($("error"), error, t);
  markLine(error?.line ?? null);
  $("stdout").textContent = graph?.stdout ?? "";
  $("output").hidden = !graph?.stdout;
  renderGradchecks($("gradchecks"), graph?.gradchecks, t);
  renderCalls(calls);
  layout();
  save();
}

function markLine(line) {
  editor.clearGutter("error-gutter");
  editor.eachLine((l) => editor.removeLineClass(l, "background", "cm-error-line"));
  if (!line || line > editor.lineCount()) return;
  editor.addLineClass(line - 1, "background", "cm-error-line");
  editor.setGutterMarker(line - 1, "error-gutter", h("span", { class: "error-marker", title: t("graph.error.here") }, "●"));
  editor.scrollIntoView({ line: line - 1, ch: 0 }, 40);
}

// --- The graph -----------------------------------------------------------------------------

function layout({ fitAll = false, focus = null } = {}) {
  const el = $("graph");
  const nodes = state.graph?.nodes ?? [];
  $("graph-empty").hidden = nodes.length > 0;
  $("graph-empty").textContent = state.graph ? t("graph.empty") : "";
  const view = buildView(state.graph ?? { nodes: [], edges: [] }, { simple: state.simple, expanded: state.expanded });
  state.laid = layoutView(view, el.clientWidth < 600 ? "TB" : "LR");
  state.view = view;
  const around = focus && centreOf(state.laid.nodes.filter(focus));
  state.range = initialRange(state.laid, el.clientWidth || 600, el.clientHeight || 400, { fitAll, focus: around });
  state.hover = hoverTexts(state.laid, t);
  state.revision += 1;
  state.mode = labelMode((el.clientWidth || 600) / (state.range.x[1] - state.range.x[0]));
  state.followed = null;  // the first draw of a layout shows the range chosen here
  renderNotes($("notes"), state.graph, t);
  renderSteps();
}

function draw(sv) {
  const g = state.graph;
  const box = state.view.boxOf;
  const leafGrads = new Map();
  for (const leaf of sv?.leaves ?? []) if (leaf.now !== null && leaf.touched) leafGrads.set(box(leaf.id), leaf.now);
  const active = new Set();
  if (sv?.active) active.add(box(sv.active.node));
  else if (sv?.event) sv.event.params.forEach((p) => p.node && active.add(box(p.node)));
  else if (sv && sv.pos === 0 && sv.total) sv.call.roots.forEach((id) => active.add(box(id)));
  const flow = (sv?.flow ?? []).map((f) => ({ ...f, source: box(f.source), target: box(f.target) }));
  const nonfinite = g?.first_nonfinite ? box(g.first_nonfinite.node) : null;
  // Follow the step, not a redraw: a new layout or zoom keeps the view the learner chose.
  const key = [...active].join();
  const moved = state.followed !== null && key !== state.followed;
  state.followed = key;
  renderGraph($("graph"), state.laid, {
    active, leafGrads, flow, nonfinite, selected: state.selected && box(state.selected),
    mode: state.mode, range: state.range, revision: state.revision, hover: state.hover,
  }).then(() => moved && follow(active));
}

// Fit all, or zoom about the centre: a new range the next draw applies.
function showRange(range) {
  state.range = range;
  state.revision += 1;
  state.mode = labelMode(($("graph").clientWidth || 600) / (range.x[1] - range.x[0]));
  renderSteps();
}

// Keep the active node in view: on a long graph the stepper walks off the screen.
function follow(ids) {
  const range = rangeShowing(state.range, state.laid.nodes.find((n) => ids.has(n.id)));
  if (range) Plotly.relayout($("graph"), { "xaxis.range": range.x, "yaxis.range": range.y });
}

function onGraphClick(event) {
  const id = event.points?.[0]?.customdata;
  if (!id) return;
  if (id.startsWith("module:")) {
    const module = id.split(":")[1];
    state.expanded.add(module);
    // Keep what was opened on screen: centre on its nodes.
    layout({ focus: (v) => v.node?.module?.split(".")[0] === module });
    return;
  }
  state.selected = id;
  renderSteps();
}

function onRelayout() {
  const { xaxis, yaxis } = $("graph").layout ?? {};
  if (!xaxis?.range || !yaxis?.range || !state.laid) return;
  // The view the learner panned or zoomed to is the one every later redraw keeps.
  const before = state.range;
  state.range = { x: [...xaxis.range], y: [...yaxis.range] };
  state.mode = labelMode($("graph").clientWidth / (xaxis.range[1] - xaxis.range[0]));
  // The labels are sized to the zoom: draw again when it changed.
  const width = (r) => Math.abs(r.x[1] - r.x[0]);
  if (!before || Math.abs(width(before) / width(state.range) - 1) > 0.02) renderSteps();
}

// --- The backward stepper ------------------------------------------------------------------

function renderCalls(calls) {
  const select = $("call");
  select.replaceChildren(...calls.map((c, i) => h("option", { value: i },
    t(`graph.call.${c.kind}`, { n: i + 1, line: c.line }) + (c.error ? ` — ${t("graph.call.raised")}` : ""))));
  select.value = String(state.call);
  $("call-field").hidden = calls.length < 2;
}

function renderSteps() {
  const g = state.graph;
  const call = g?.backward?.[state.call];
  const sv = call ? stepView(g, state.call, state.step) : null;
  for (const id of ["first", "back", "next", "last", "play"]) $(id).disabled = !sv;
  if (sv) {
    $("first").disabled = $("back").disabled = sv.pos === 0;
    $("next").disabled = $("last").disabled = $("play").disabled = sv.done;
  }
  $("position").textContent = sv ? t("graph.step.position", { pos: sv.pos, total: sv.total }) : "";
  if (sv?.event) renderOptimEvent($("chain"), sv.event, t);
  else renderChain($("chain"), g, sv, t, state.error);
  renderLeafGrads($("leafgrads"), sv, t);
  renderAsk($("ask"), state, sv, t, { onCheck: stepper.check, onSkip: () => { state.asking = null; stepper.reveal(); } });
  const node = g?.nodes.find((n) => n.id === state.selected) ?? null;
  renderInspector($("inspector"), node, node && knownGrad(node, sv), t, {
    onClose: () => { state.selected = null; renderSteps(); },
    onLine: (line) => { editor.focus(); editor.setCursor({ line: line - 1, ch: 0 }); },
    onCollapse: (module) => { state.expanded.delete(module); state.selected = null; layout(); },
  });
  if (g?.nodes?.length) draw(sv);
  else Plotly.react($("graph"), [], { xaxis: { visible: false }, yaxis: { visible: false }, margin: { l: 0, r: 0, t: 0, b: 0 } }, { displaylogo: false });
}

// --- State in the URL ----------------------------------------------------------------------

async function save() {
  const code = editor.getValue();
  const lesson = page.lessons[state.ex];
  await writeState(FIELDS, { ...state, code: lesson && lesson.program === code ? "" : code });
}

async function start() {
  Object.assign(state, { code: "" }, await readState(FIELDS));
  if (!state.code && !page.lessons[state.ex]) state.ex = DEFAULT_LESSON;
  editor.setValue(state.code || page.lessons[state.ex]?.program || "");
  $("examples").value = state.ex;
  $("simple").checked = state.simple;
  $("predict").checked = state.predict;
  $("speed").value = String(state.speed);
  await run({ restore: true });
}

$("run").addEventListener("click", () => run());
$("examples").addEventListener("change", (e) => {
  if (!page.lessons[e.target.value]) return;
  state.ex = e.target.value;
  editor.setValue(page.lessons[state.ex].program);
  run();
});
$("simple").addEventListener("change", (e) => { state.simple = e.target.checked; layout(); save(); });
$("predict").addEventListener("change", (e) => { state.predict = e.target.checked; state.asking = state.verdict = null; renderSteps(); save(); });
wireStepper(stepper);
$("copy-link").addEventListener("click", async () => {
  await save();
  await copyLink($("copy-link"), location.href);
});
$("fit").addEventListener("click", () => state.laid && showRange(initialRange(state.laid, $("graph").clientWidth || 600, $("graph").clientHeight || 400, { fitAll: true })));
$("zoom-in").addEventListener("click", () => state.range && showRange(zoomRange(state.range, $("graph").clientWidth || 600, 1.4)));
$("zoom-out").addEventListener("click", () => state.range && showRange(zoomRange(state.range, $("graph").clientWidth || 600, 1 / 1.4)));
$("export-png").addEventListener("click", () => Plotly.downloadImage($("graph"), { format: "png", filename: "gradient-lab-graph", scale: 2 }));
$("export-json").addEventListener("click", () => {
  const blob = new Blob([JSON.stringify(state.graph ?? state.error, null, 2)], { type: "application/json" });
  const a = h("a", { href: URL.createObjectURL(blob), download: "gradient-lab-graph.json" });
  a.click();
  URL.revokeObjectURL(a.href);
});
document.addEventListener("keydown", (e) => {
  if (e.altKey || e.ctrlKey || e.metaKey || e.target.closest?.(".CodeMirror, input, textarea, select")) return;
  const keys = { ArrowRight: () => $("next").click(), ArrowLeft: () => $("back").click(),
                 Home: () => $("first").click(), End: () => $("last").click() };
  if (keys[e.key] && state.graph?.backward?.length) {
    e.preventDefault();
    keys[e.key]();
  }
});
// A link pasted into this tab, edited by hand, or sent by the class mode opens its view: the
// program runs again only when it is another program; a new step or call just steps there.
followHash(FIELDS, async (next) => {
  const lesson = page.lessons[next.ex];
  const code = next.code || lesson?.program || "";
  if (code !== editor.getValue() || !state.graph && !state.error) return start();
  const diff = changed(FIELDS, state, next);
  Object.assign(state, next, { code: "" });
  $("examples").value = lesson ? state.ex : "";
  $("simple").checked = state.simple;
  $("predict").checked = state.predict;
  $("speed").value = String(state.speed);
  stepper.pause();
  if (diff.has("simple")) layout();
  stepper.showStep();
});
let resizeTimer = null;
window.addEventListener("resize", () => {
  clearTimeout(resizeTimer);
  resizeTimer = setTimeout(() => {
    const rankdir = $("graph").clientWidth < 600 ? "TB" : "LR";
    if (state.laid && rankdir !== state.laid.rankdir) layout();
  }, 200);
});

await start();
$("graph").on("plotly_click", onGraphClick);
$("graph").on("plotly_relayout", onRelayout);

// --- Class mode (static/room.js reads this; the rest of the page knows nothing of it) -------
// What a teacher can ask the class here: the gradient the next backward step sends to each
// input, where it is one number (the class's answers are drawn as a histogram).
window.gradientLab = {
  questions() {
    const call = state.graph?.backward?.[state.call];
    const step = call?.steps[state.step];
    if (!step) return [];
    const after = stepView(state.graph, state.call, state.step + 1).leaves.find((l) => l.id === step.node)?.now;
    return questions(state.graph, call, step, after).flatMap((q) => {
      const values = [q.expected].flat(Infinity).map(Number);
      if (values.length !== 1 || !Number.isFinite(values[0])) return [];
      return [{ kind: "number", prompt: "room.q.grad", params: { label: q.label }, answer: values[0] }];
    });
  },
};
