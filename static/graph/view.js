// The graph lab's view of one graph: the drawing, the backward stepper, the chain rule, the
// inspector and the panels around them, over the elements of templates/_graph_view.html.
// The page (static/graph.js) and a notebook's output (static/notebook.js) each make one and
// hand it graphs; neither draws anything itself.

import { t } from "../page.js";
import { buildView, labelLines, layoutView } from "./layout.js";
import {
  centreOf,
  hoverTexts,
  initialRange,
  labelMode,
  rangeShowing,
  renderGraph,
  zoomRange,
} from "./draw.js";
import { graphAt, isLoop, iterationNodes, knownGrad, stepView } from "./steps.js";
import { renderOptimEvent } from "./optim.js";
import { makeStepper, wireStepper } from "./stepper.js";
import {
  h,
  renderAsk,
  renderChain,
  renderError,
  renderGradchecks,
  renderInspector,
  renderLeafGrads,
  renderNotes,
} from "./panels.js";

const $ = (id) => document.getElementById(id);

// `state` is the host's one state object; `save` writes it where the host keeps it (the page's
// address), `onLine` shows a program line (the page's editor; null where there is none).
export function makeView(state, { save = () => {}, onLine = null } = {}) {
  // The stepper's controls: First, Back, Next (predict first, then reveal), Last, Play.
  const stepper = makeStepper(state, { render: () => renderSteps(), save });

  // A new graph (or a failed run's partial one): drawn from its first step, or the state's.
  function show(graph, error) {
    state.graph = graph;
    state.error = error;
    state.expanded = new Set();
    state.selected = null;
    state.asking = null;
    state.verdict = null;
    state.laidCall = null; // a new graph is laid out afresh
    const calls = graph?.backward ?? [];
    state.call = Math.min(state.call, Math.max(0, calls.length - 1));
    // A step() or zero_grad() counts as a step.
    state.step = calls.length ? Math.min(state.step, stepper.total()) : 0;
    renderError($("error"), error, t);
    $("stdout").textContent = graph?.stdout ?? "";
    $("output").hidden = !graph?.stdout;
    renderGradchecks($("gradchecks"), graph?.gradchecks, t);
    renderCalls(calls);
    layout();
  }

  // --- The graph ---------------------------------------------------------------------------

  // A loop draws one iteration, the call on screen; "show all iterations" draws every one.
  const oneIteration = () => isLoop(state.graph) && !state.all;

  function layout({ fitAll = false, focus = null } = {}) {
    const el = $("graph");
    const nodes = state.graph?.nodes ?? [];
    $("graph-empty").hidden = nodes.length > 0;
    $("graph-empty").textContent = state.graph ? t("graph.empty") : "";
    // The next iteration of a loop has the same shape: it keeps the view the learner had.
    const sameShape =
      oneIteration() && state.laidCall !== null && state.laidCall !== undefined && state.laid;
    state.laidCall = oneIteration() ? state.call : null;
    const only = oneIteration() ? iterationNodes(state.graph, state.call) : null;
    const view = buildView(state.graph ?? { nodes: [], edges: [] }, {
      simple: state.simple,
      expanded: state.expanded,
      only,
      rollUp: !state.all,
    });
    state.laid = layoutView(view, el.clientWidth < 600 ? "TB" : "LR");
    state.view = view;
    const around = focus && centreOf(state.laid.nodes.filter(focus));
    if (!sameShape || fitAll || focus)
      state.range = initialRange(state.laid, el.clientWidth || 600, el.clientHeight || 400, {
        fitAll,
        focus: around,
      });
    state.hover = hoverTexts(state.laid, t);
    state.revision += 1;
    state.mode = labelMode((el.clientWidth || 600) / (state.range.x[1] - state.range.x[0]));
    state.followed = null; // the first draw of a layout shows the range chosen here
    renderNotes($("notes"), state.graph, t);
    if (isLoop(state.graph))
      $("notes").append(
        h(
          "p",
          { class: "note loop-note" },
          t("graph.loop.note", { total: state.graph.backward.length }),
        ),
      );
    renderSteps();
  }

  function draw(sv) {
    const g = state.graph;
    const box = state.view.boxOf;
    const leafGrads = new Map();
    for (const leaf of sv?.leaves ?? [])
      if (leaf.now !== null && leaf.touched) leafGrads.set(box(leaf.id), leaf.now);
    const active = new Set();
    if (sv?.active) active.add(box(sv.active.node));
    else if (sv?.event) sv.event.params.forEach((p) => p.node && active.add(box(p.node)));
    else if (sv && sv.pos === 0 && sv.total) sv.call.roots.forEach((id) => active.add(box(id)));
    const flow = (sv?.flow ?? []).map((f) => ({
      ...f,
      source: box(f.source),
      target: box(f.target),
    }));
    const nonfinite = g?.first_nonfinite ? box(g.first_nonfinite.node) : null;
    // Follow the step, not a redraw: a new layout or zoom keeps the view the learner chose.
    const key = [...active].join();
    const moved = state.followed !== null && key !== state.followed;
    state.followed = key;
    renderGraph($("graph"), state.laid, {
      active,
      leafGrads,
      flow,
      nonfinite,
      selected: state.selected && box(state.selected),
      mode: state.mode,
      range: state.range,
      revision: state.revision,
      hover: state.hover,
      now: boxesAt(sv),
    })
      .then(() => moved && follow(active))
      .then(() => keepClear(active));
  }

  // The class's panel (room.js) floats over the page's right side: keep the node the step is
  // on, the one a question asks about, out from under it.
  function keepClear(ids) {
    const panel = document.getElementById("room-panel");
    const v = state.laid?.nodes.find((n) => ids.has(n.id));
    const axes = $("graph").layout; // the range on screen now, after any pan just made
    if (!panel || panel.hidden || !v || !axes?.xaxis?.range) return;
    const p = panel.getBoundingClientRect();
    const g = $("graph").getBoundingClientRect();
    const [x, y] = [axes.xaxis.range, axes.yaxis.range];
    const perUnit = g.width / (x[1] - x[0]);
    const px = g.left + (v.x - x[0]) * perUnit;
    const py = g.top + ((v.y - y[1]) / (y[0] - y[1])) * g.height;
    const [hw, hh] = [(v.w / 2) * perUnit, (v.h / 2) * perUnit];
    if (px + hw < p.left || px - hw > p.right || py + hh < p.top || py - hh > p.bottom) return;
    const free = Math.max(2 * hw, p.left - g.left); // the graph's width left of the panel
    const shift = (px - g.left - free / 2) / perUnit;
    Plotly.relayout($("graph"), { "xaxis.range": [x[0] + shift, x[1] + shift] });
  }

  // The label of the module call box a node is drawn in (null: it has a box of its own).
  function moduleBox(id) {
    const box = state.view?.boxOf(id);
    return box && box !== id ? (state.view.nodes.find((v) => v.id === box)?.label ?? null) : null;
  }

  // The laid-out boxes with each leaf's value as of this step; null when none differs.
  function boxesAt(sv) {
    const g = graphAt(state.graph, sv);
    if (g === state.graph) return null;
    const byId = new Map(g.nodes.map((n) => [n.id, n]));
    const nodes = state.laid.nodes.map((v) => {
      const node = v.node && byId.get(v.node.id);
      if (!node || node === v.node) return v;
      const moved = { ...v, node };
      return { ...moved, lines: labelLines(moved) };
    });
    return { nodes, hover: hoverTexts({ nodes }, t) };
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
    const range = rangeShowing(
      state.range,
      state.laid.nodes.find((n) => ids.has(n.id)),
    );
    return range && Plotly.relayout($("graph"), { "xaxis.range": range.x, "yaxis.range": range.y });
  }

  function onGraphClick(event) {
    const id = event.points?.[0]?.customdata;
    if (!id) return;
    if (id.startsWith("module:")) {
      const box = state.view.nodes.find((v) => v.id === id);
      state.expanded.add(box.module);
      // Keep what was opened on screen: centre on its nodes.
      const members = new Set(box.members);
      layout({ focus: (v) => v.members.some((m) => members.has(m)) });
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

  // --- The backward stepper ----------------------------------------------------------------

  function renderCalls(calls) {
    const select = $("call");
    select.replaceChildren(
      ...calls.map((c, i) =>
        h(
          "option",
          { value: i },
          t(`graph.call.${c.kind}`, { n: i + 1, line: c.line }) +
            (c.error ? ` — ${t("graph.call.raised")}` : ""),
        ),
      ),
    );
    select.value = String(state.call);
    $("call-field").hidden = calls.length < 2;
    $("iteration-field").hidden = !isLoop(state.graph);
    $("iteration").max = String(Math.max(1, calls.length));
  }

  function renderSteps() {
    if (oneIteration() && state.laidCall !== state.call) return layout(); // another iteration
    document.body.classList.toggle("asking", Boolean(state.asking)); // app.css hides the answer
    const g = state.graph;
    $("iteration").value = String(state.call + 1);
    $("iteration-out").textContent = t("graph.loop.of", {
      n: state.call + 1,
      total: g?.backward?.length ?? 0,
    });
    $("all-iterations").checked = Boolean(state.all);
    const call = g?.backward?.[state.call];
    const sv = call ? stepView(g, state.call, state.step) : null;
    for (const id of ["first", "back", "next", "last", "play"]) $(id).disabled = !sv;
    if (sv) {
      $("first").disabled = $("back").disabled = sv.pos === 0;
      $("next").disabled = $("last").disabled = $("play").disabled = sv.done;
    }
    $("position").textContent = sv
      ? t("graph.step.position", { pos: sv.pos, total: sv.total })
      : "";
    const now = graphAt(g, sv); // each leaf as of this step
    if (sv?.event) renderOptimEvent($("chain"), sv.event, t);
    else renderChain($("chain"), now, sv, t, state.error, sv?.active && moduleBox(sv.active.node));
    renderLeafGrads($("leafgrads"), sv, t);
    renderAsk($("ask"), state, sv, t, {
      onCheck: stepper.check,
      onSkip: () => {
        state.asking = null;
        stepper.reveal();
      },
    });
    const node = now?.nodes.find((n) => n.id === state.selected) ?? null;
    renderInspector($("inspector"), node, node && knownGrad(node, sv), t, {
      onClose: () => {
        state.selected = null;
        renderSteps();
      },
      onLine,
      onCollapse: (module) => {
        // the module call, and every run of blocks opened in it
        for (const key of state.expanded)
          if (key === module || key.startsWith(`${module}.`)) state.expanded.delete(key);
        state.selected = null;
        layout();
      },
    });
    if (g?.nodes?.length) draw(sv);
    else
      Plotly.react(
        $("graph"),
        [],
        {
          xaxis: { visible: false },
          yaxis: { visible: false },
          margin: { l: 0, r: 0, t: 0, b: 0 },
        },
        { displaylogo: false },
      );
  }

  // --- The view's own controls -------------------------------------------------------------

  // The checkboxes, zoom buttons, stepper, keys and resizing; call once, before the first show().
  function wire() {
    $("simple").addEventListener("change", (e) => {
      state.simple = e.target.checked;
      layout();
      save();
    });
    $("predict").addEventListener("change", (e) => {
      state.predict = e.target.checked;
      state.asking = state.verdict = null;
      renderSteps();
      save();
    });
    wireStepper(stepper);
    // The iteration slider keeps the step: the same moment of backward, another iteration.
    const toIteration = (i) => {
      const calls = state.graph?.backward ?? [];
      state.call = Math.min(Math.max(0, i), calls.length - 1);
      state.step = Math.min(state.step, stepper.total());
      $("call").value = String(state.call);
      renderSteps();
      save();
    };
    $("iteration").addEventListener("input", (e) => {
      stopIterations();
      toIteration(Number(e.target.value) - 1);
    });
    $("all-iterations").addEventListener("change", (e) => {
      state.all = e.target.checked;
      layout();
      save();
    });
    $("play-iterations").addEventListener("click", () => {
      if (state.iterating) return stopIterations();
      $("play-iterations").setAttribute("aria-pressed", "true");
      if (state.call >= state.graph.backward.length - 1) toIteration(0);
      state.iterating = setInterval(
        () => {
          if (state.call >= state.graph.backward.length - 1) return stopIterations();
          toIteration(state.call + 1);
        },
        1200 / (state.speed || 1),
      );
    });
    const width = () => $("graph").clientWidth || 600;
    $("fit").addEventListener(
      "click",
      () =>
        state.laid &&
        showRange(
          initialRange(state.laid, width(), $("graph").clientHeight || 400, { fitAll: true }),
        ),
    );
    $("zoom-in").addEventListener(
      "click",
      () => state.range && showRange(zoomRange(state.range, width(), 1.4)),
    );
    $("zoom-out").addEventListener(
      "click",
      () => state.range && showRange(zoomRange(state.range, width(), 1 / 1.4)),
    );
    document.addEventListener("keydown", (e) => {
      if (
        e.altKey ||
        e.ctrlKey ||
        e.metaKey ||
        e.target.closest?.(".CodeMirror, input, textarea, select")
      )
        return;
      const keys = {
        ArrowRight: () => $("next").click(),
        ArrowLeft: () => $("back").click(),
        Home: () => $("first").click(),
        End: () => $("last").click(),
      };
      if (keys[e.key] && state.graph?.backward?.length) {
        e.preventDefault();
        keys[e.key]();
      }
    });
    // The class's panel opening or closing may cover the step's node, or free it.
    const panel = document.getElementById("room-panel");
    if (panel)
      new MutationObserver(() => renderSteps()).observe(panel, { attributeFilter: ["hidden"] });
    let resizeTimer = null;
    window.addEventListener("resize", () => {
      clearTimeout(resizeTimer);
      resizeTimer = setTimeout(() => {
        const rankdir = $("graph").clientWidth < 600 ? "TB" : "LR";
        if (state.laid && rankdir !== state.laid.rankdir) layout();
      }, 200);
    });
  }

  function stopIterations() {
    clearInterval(state.iterating);
    state.iterating = null;
    $("play-iterations").setAttribute("aria-pressed", "false");
  }

  // Clicks and pans on the drawing: Plotly gives the element its .on() at the first draw.
  function listen() {
    $("graph").on("plotly_click", onGraphClick);
    $("graph").on("plotly_relayout", onRelayout);
  }

  return { stepper, show, layout, renderSteps, wire, listen };
}
