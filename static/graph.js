// The graph lab: run a program, draw the graph PyTorch built, and step through backward.
// This module wires things up: read state → fetch → render. The drawing and the stepper's
// arithmetic live in static/graph/, as plain functions over the API's JSON.

import { ApiError, markStale, postJSON, renderFailure } from "./api.js";
import { readState, writeState } from "./urlstate.js";
import { buildView, layoutView } from "./graph/layout.js";
import { initialRange, labelMode, renderGraph } from "./graph/draw.js";
import { fmt, matches, nodeName, questions, stepView } from "./graph/steps.js";
import { h, renderAsk, renderChain, renderError, renderGradchecks, renderInspector, renderLeafGrads } from "./graph/panels.js";

const page = JSON.parse(document.getElementById("page-data").textContent);
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

function t(key, params = {}, fallback = key) {
  const text = page.strings[key];
  if (text === undefined) return fallback;
  return text.replace(/\{(\w+)\}/g, (m, name) => (name in params ? String(params[name]) : m));
}

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
  pause();
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
  state.step = Math.min(state.step, calls[state.call]?.steps.length ?? 0);
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

function layout() {
  const el = $("graph");
  const nodes = state.graph?.nodes ?? [];
  $("graph-empty").hidden = nodes.length > 0;
  $("graph-empty").textContent = state.graph ? t("graph.empty") : "";
  const view = buildView(state.graph ?? { nodes: [], edges: [] }, { simple: state.simple, expanded: state.expanded });
  state.laid = layoutView(view, el.clientWidth < 600 ? "TB" : "LR");
  state.view = view;
  state.range = initialRange(state.laid, el.clientWidth || 600, el.clientHeight || 400);
  state.hover = hoverTexts(state.laid);
  state.revision += 1;
  state.mode = labelMode((el.clientWidth || 600) / (state.range.x[1] - state.range.x[0]));
  renderNotes();
  renderSteps();
}

function draw(sv) {
  const g = state.graph;
  const box = state.view.boxOf;
  const leafGrads = new Map();
  for (const leaf of sv?.leaves ?? []) if (leaf.now !== null && leaf.touched) leafGrads.set(box(leaf.id), leaf.now);
  const active = new Set();
  if (sv?.active) active.add(box(sv.active.node));
  else if (sv && sv.pos === 0 && sv.total) sv.call.roots.forEach((id) => active.add(box(id)));
  const flow = (sv?.flow ?? []).map((f) => ({ ...f, source: box(f.source), target: box(f.target) }));
  const nonfinite = g?.first_nonfinite ? box(g.first_nonfinite.node) : null;
  renderGraph($("graph"), state.laid, {
    active, leafGrads, flow, nonfinite, selected: state.selected && box(state.selected),
    mode: state.mode, range: state.range, revision: state.revision, hover: state.hover,
  }).then(() => follow(active));
}

// Keep the active node in view: on a long graph the stepper walks off the screen.
function follow(ids) {
  const v = state.laid.nodes.find((n) => ids.has(n.id));
  const { x, y } = state.range;
  const [top, bottom] = [Math.min(...y), Math.max(...y)];
  if (!v || (v.x >= x[0] && v.x <= x[1] && v.y >= top && v.y <= bottom)) return;
  const halfW = (x[1] - x[0]) / 2;
  const halfH = (bottom - top) / 2;
  Plotly.relayout($("graph"), { "xaxis.range": [v.x - halfW, v.x + halfW], "yaxis.range": [v.y + halfH, v.y - halfH] });
}

function hoverTexts(laid) {
  const out = {};
  const esc = (s) => String(s).replace(/&/g, "&amp;").replace(/</g, "&lt;");
  for (const v of laid.nodes) {
    if (v.kind === "module") {
      out[v.id] = esc(t("graph.module.hover", { module: v.label, count: v.members.length }));
      continue;
    }
    const n = v.node;
    const lines = [`<b>${esc(nodeName(n))}</b>${n.op ? " · " + esc(n.op) : ""}`, `${t("graph.inspect.value")}: ${esc(fmt(n.value, 6))}`];
    if (n.grad !== null && n.grad !== undefined) lines.push(`${t("graph.inspect.grad")}: ${esc(fmt(n.grad, 6))}`);
    if (n.shape) lines.push(`${t("graph.inspect.shape")}: ${esc(JSON.stringify(n.shape))}`);
    out[v.id] = lines.join("<br>");
  }
  return out;
}

function renderNotes() {
  const g = state.graph;
  const notes = [];
  if (g?.first_nonfinite) {
    const node = g.nodes.find((n) => n.id === g.first_nonfinite.node);
    notes.push(h("p", { class: "note bad" }, t(`graph.nonfinite.${g.first_nonfinite.where}`, { node: nodeName(node) })));
  }
  if (g?.truncated) notes.push(h("p", { class: "note" }, t("graph.truncated")));
  if (g?.omitted) notes.push(h("p", { class: "note" }, t("graph.omitted", { why: g.omitted })));
  $("notes").replaceChildren(...notes);
}

function onGraphClick(event) {
  const id = event.points?.[0]?.customdata;
  if (!id) return;
  if (id.startsWith("module:")) {
    state.expanded.add(id.split(":")[1]);
    layout();
    return;
  }
  state.selected = id;
  renderSteps();
}

function onRelayout() {
  const { xaxis, yaxis } = $("graph").layout ?? {};
  if (!xaxis?.range || !yaxis?.range || !state.laid) return;
  // The view the learner panned or zoomed to is the one every later redraw keeps.
  state.range = { x: [...xaxis.range], y: [...yaxis.range] };
  const mode = labelMode($("graph").clientWidth / (xaxis.range[1] - xaxis.range[0]));
  if (mode !== state.mode) {
    state.mode = mode;
    renderSteps();
  }
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
  renderChain($("chain"), g, sv, t);
  renderLeafGrads($("leafgrads"), sv, t);
  renderAsk($("ask"), state, sv, t, { onCheck: check, onSkip: () => { state.asking = null; reveal(); } });
  const node = g?.nodes.find((n) => n.id === state.selected) ?? null;
  renderInspector($("inspector"), node, node && sv ? sv.nodeGrads.get(node.id) ?? sv.leaves.find((l) => l.id === node.id)?.now : null, t, {
    onClose: () => { state.selected = null; renderSteps(); },
    onLine: (line) => { editor.focus(); editor.setCursor({ line: line - 1, ch: 0 }); },
    onCollapse: (module) => { state.expanded.delete(module); state.selected = null; layout(); },
  });
  if (g?.nodes?.length) draw(sv);
  else Plotly.react($("graph"), [], { xaxis: { visible: false }, yaxis: { visible: false }, margin: { l: 0, r: 0, t: 0, b: 0 } }, { displaylogo: false });
}

function check(form) {
  const results = state.asking.map((q, i) => ({ q, right: matches(form.elements[`q${i}`].value, q.expected) }));
  const right = results.every((r) => r.right);
  state.verdict = { right, text: right ? t("graph.predict.right")
    : t("graph.predict.wrong", { expected: results.map((r) => `${r.q.label}: ${fmt(r.q.expected, 6)}`).join(", ") }) };
  state.asking = null;
  reveal();
}

function go(step) {
  state.asking = null;
  state.step = step;
  renderSteps();
  save();
}

function reveal() {
  go(state.step + 1);
}

function next() {
  const call = state.graph?.backward?.[state.call];
  if (!call || state.step >= call.steps.length) return pause();
  if (state.predict && !state.asking) {
    const step = call.steps[state.step];
    const after = stepView(state.graph, state.call, state.step + 1).leaves.find((l) => l.id === step.node)?.now;
    const qs = questions(state.graph, call, step, after);
    if (qs.length) {
      pause();
      state.verdict = null;
      state.asking = qs;
      renderSteps();
      return;
    }
  }
  state.verdict = null;
  reveal();
}

function play() {
  if (state.timer) return pause();
  $("play").textContent = t("graph.step.pause");
  $("play").setAttribute("aria-pressed", "true");
  next();
  state.timer = setInterval(() => (state.asking ? pause() : next()), 1200 / state.speed);
}

function pause() {
  clearInterval(state.timer);
  state.timer = null;
  $("play").textContent = t("graph.step.play");
  $("play").setAttribute("aria-pressed", "false");
}

// --- State in the URL ----------------------------------------------------------------------

async function save() {
  const code = editor.getValue();
  const lesson = page.lessons[state.ex];
  await writeState(FIELDS, { ...state, code: lesson && lesson.program === code ? "" : code });
  document.querySelector(".top .lang")?.setAttribute("href", `?lang=${page.other_lang}${location.hash}`);
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
$("speed").addEventListener("change", (e) => { state.speed = Number(e.target.value); if (state.timer) { pause(); play(); } save(); });
$("call").addEventListener("change", (e) => { pause(); state.call = Number(e.target.value); go(0); });
$("first").addEventListener("click", () => { pause(); state.verdict = null; go(0); });
$("back").addEventListener("click", () => { pause(); state.verdict = null; go(Math.max(0, state.step - 1)); });
$("next").addEventListener("click", () => { pause(); next(); });
$("last").addEventListener("click", () => { pause(); state.verdict = null; go(state.graph.backward[state.call].steps.length); });
$("play").addEventListener("click", () => play());
$("copy-link").addEventListener("click", async () => {
  await save();
  try {
    await navigator.clipboard.writeText(location.href);
    $("status").textContent = t("graph.link.copied");
  } catch {
    $("status").textContent = t("graph.link.select");
    window.prompt(t("graph.link.select"), location.href);
  }
});
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
// A link pasted into this tab, or edited by hand, opens its view (our own writes use
// replaceState, which fires no hashchange).
window.addEventListener("hashchange", () => start());
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
