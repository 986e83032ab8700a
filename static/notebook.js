// A notebook's output: one graph, traced in the learner's own kernel (gradient_lab.notebook),
// drawn and stepped by the graph lab's own view (static/graph/view.js) inside a sandboxed
// iframe, with no server, no kernel and no network. gradient_lab/notebook/bundle.py inlines
// this module and everything it imports into the output's one script.

import { t } from "./page.js";
import { makeView } from "./graph/view.js";
import { Plotly } from "./notebook/svgplot.js";

window.Plotly = Plotly; // the global draw.js draws with, as the page's plotly.js is

const $ = (id) => document.getElementById(id);
const { graph, note } = JSON.parse($("graph-data").textContent);

const state = {
  call: 0,
  step: 0,
  simple: false,
  predict: false,
  speed: 1,
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
};
const view = makeView(state);

// What the kernel found about backward: about to run (the steps are a rehearsal), or already
// run and freed, so there is nothing left to step.
$("notebook-note").textContent = note ? t(note.key, note.params) : "";
$("notebook-note").hidden = !note;
$("speed").value = String(state.speed);
view.wire();
// An output the notebook has not laid out yet (collapsed, or not yet on screen) has no size:
// lay the graph out for the size it will be shown at, as the page does for its own.
await sized($("graph"));
view.show(graph, null);
view.listen();
document.body.dataset.runs = "1"; // drawn: what the browser tests wait on, as on the page

function sized(el) {
  return new Promise((resolve) => {
    if (el.clientWidth > 0) return resolve();
    const watch = new ResizeObserver(() => {
      if (el.clientWidth > 0) {
        watch.disconnect();
        resolve();
      }
    });
    watch.observe(el);
  });
}
