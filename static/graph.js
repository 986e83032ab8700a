// The graph lab: run a program, draw the graph PyTorch built, and step through backward.
// This module wires things up: read state → fetch → render. The drawing and the stepper's
// arithmetic live in static/graph/, as plain functions over the API's JSON.

import { ApiError, markStale, postJSON, renderFailure } from "./api.js";
import { copyLink, page, t } from "./page.js";
import { changed, followHash, readState, writeState } from "./urlstate.js";
import { downloadPng, downloadSvg } from "./graph/export.js";
import { h } from "./graph/panels.js";
import { questions, stepView } from "./graph/steps.js";
import { makeView } from "./graph/view.js";

const $ = (id) => document.getElementById(id);
const DEFAULT_EXAMPLE = "S2";

// Every view is a link: this table is the whole of the page's state in the URL.
const FIELDS = [
  { name: "ex", type: String, default: "" },
  { name: "code", type: String, default: "", compress: true },
  { name: "call", type: Number, default: 0 },
  { name: "step", type: Number, default: 0 },
  { name: "simple", type: Boolean, default: false },
  { name: "all", type: Boolean, default: false },
  { name: "predict", type: Boolean, default: false },
  { name: "speed", type: Number, default: 1 },
];

const state = {
  ex: "",
  call: 0,
  step: 0,
  simple: false,
  all: false,
  predict: false,
  speed: 1,
  iterating: null,
  graph: null,
  error: null,
  laid: null,
  expanded: new Set(),
  selected: null,
  revision: 0,
  range: null,
  mode: "full",
  timer: null,
  asking: null,
  verdict: null,
  runs: 0,
};

// The drawing, the stepper and the panels (static/graph/view.js); this page adds the editor,
// the server and the address.
const view = makeView(state, {
  save: () => save(),
  onLine: (line) => {
    editor.focus();
    editor.setCursor({ line: line - 1, ch: 0 });
  },
});
const stepper = view.stepper;

const editor = CodeMirror.fromTextArea($("code"), {
  // CodeMirror types into a textarea of its own: it gets the label the page's textarea has.
  screenReaderLabel: $("code").getAttribute("aria-label"),
  mode: "python",
  lineNumbers: true,
  lineWrapping: true,
  indentUnit: 4,
  matchBrackets: true,
  viewportMargin: Infinity,
  gutters: ["CodeMirror-linenumbers", "error-gutter"],
  extraKeys: {
    "Ctrl-Enter": () => run(),
    "Cmd-Enter": () => run(),
    Tab: (cm) => cm.execCommand("insertSoftTab"),
  },
});
// A comment that states a result (`# tensor([42.])`, `# 28`): app.css blurs it while a
// question is open, so the tutorial's own comment does not answer it.
editor.addOverlay({
  token(stream) {
    if (stream.match(/#.*\d.*/)) return "result";
    while (stream.next() != null && stream.peek() !== "#");
    return null;
  },
});
editor.on("change", () => {
  if (state.ex && editor.getValue() !== page.examples[state.ex]?.program) {
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
  // An empty figure, with the stepper off, on a page that opened offline.
  if (!state.graph) view.layout();
}

function show(graph, error) {
  markStale($("result"), null);
  for (const id of ["output", "gradchecks"]) $(id).classList.remove("faded");
  $("status").textContent = error ? t("graph.failed") : t("graph.ran", { device: graph.device });
  markLine(error?.line ?? null);
  view.show(graph, error);
  save();
}

function markLine(line) {
  editor.clearGutter("error-gutter");
  editor.eachLine((l) => editor.removeLineClass(l, "background", "cm-error-line"));
  if (!line || line > editor.lineCount()) return;
  editor.addLineClass(line - 1, "background", "cm-error-line");
  editor.setGutterMarker(
    line - 1,
    "error-gutter",
    h("span", { class: "error-marker", title: t("graph.error.here") }, "●"),
  );
  editor.scrollIntoView({ line: line - 1, ch: 0 }, 40);
}

// --- State in the URL ----------------------------------------------------------------------

async function save() {
  const code = editor.getValue();
  const example = page.examples[state.ex];
  await writeState(FIELDS, { ...state, code: example && example.program === code ? "" : code });
}

async function start() {
  Object.assign(state, { code: "" }, await readState(FIELDS));
  if (!state.code && !page.examples[state.ex]) state.ex = DEFAULT_EXAMPLE;
  editor.setValue(state.code || page.examples[state.ex]?.program || "");
  $("examples").value = state.ex;
  $("simple").checked = state.simple;
  $("predict").checked = state.predict;
  $("speed").value = String(state.speed);
  await run({ restore: true });
}

$("run").addEventListener("click", () => run());
$("examples").addEventListener("change", (e) => {
  if (!page.examples[e.target.value]) return;
  state.ex = e.target.value;
  editor.setValue(page.examples[state.ex].program);
  run();
});
view.wire();
$("copy-link").addEventListener("click", async () => {
  await save();
  await copyLink($("copy-link"), location.href);
});
// Both are drawn in the lab's font. The SVG carries it, so a CJK character it lacks is named
// to the learner; the PNG has drawn that one already, in this machine's font.
const FONTS = new URL("vendor/fonts/", import.meta.url).href;
$("export-png").addEventListener("click", () =>
  downloadPng($("graph"), FONTS, "gradient-lab-graph.png"),
);
$("export-svg").addEventListener("click", async () => {
  const missing = await downloadSvg($("graph"), FONTS, "gradient-lab-graph.svg");
  if (missing.length)
    $("status").textContent = t("graph.export.svg_missing", { chars: missing.join(" ") });
});
$("export-json").addEventListener("click", () => {
  const blob = new Blob([JSON.stringify(state.graph ?? state.error, null, 2)], {
    type: "application/json",
  });
  const a = h("a", { href: URL.createObjectURL(blob), download: "gradient-lab-graph.json" });
  a.click();
  URL.revokeObjectURL(a.href);
});
// A link pasted into this tab, edited by hand, or sent by the class mode opens its view: the
// program runs again only when it is another program; a new step or call just steps there.
followHash(FIELDS, async (next) => {
  const example = page.examples[next.ex];
  const code = next.code || example?.program || "";
  if (code !== editor.getValue() || (!state.graph && !state.error)) return start();
  const diff = changed(FIELDS, state, next);
  Object.assign(state, next, { code: "" });
  $("examples").value = example ? state.ex : "";
  $("simple").checked = state.simple;
  $("predict").checked = state.predict;
  $("speed").value = String(state.speed);
  stepper.pause();
  if (diff.has("simple") || diff.has("all")) view.layout();
  stepper.showStep();
});
await start();
view.listen();

// --- Class mode (static/room.js reads this; the rest of the page knows nothing of it) -------
// What a teacher can ask the class here: the gradient the next backward step sends to each
// input, where it is one number (the class's answers are drawn as a histogram).
window.gradientLab = {
  questions() {
    const call = state.graph?.backward?.[state.call];
    const step = call?.steps[state.step];
    if (!step) return [];
    const after = stepView(state.graph, state.call, state.step + 1).leaves.find(
      (l) => l.id === step.node,
    )?.now;
    return questions(state.graph, call, step, after).flatMap((q) => {
      const values = [q.expected].flat(Infinity).map(Number);
      if (values.length !== 1 || !Number.isFinite(values[0])) return [];
      return [
        { kind: "number", prompt: "room.q.grad", params: { label: q.label }, answer: values[0] },
      ];
    });
  },
};
