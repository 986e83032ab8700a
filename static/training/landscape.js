// The loss-landscape lesson: a plane's loss as a contour or a 3-D surface with the path drawn on
// it and played step by step, the real and in-plane loss per step, the 1-D interpolation from
// the init to the final weights. Plain data in, Plotly.react out; Plotly is the global.

import { fmtNumber, now, num, page, t } from "../page.js";

const $ = (id) => document.getElementById(id);
const CONFIG = { displaylogo: false, responsive: true };
const COLORS = ["#d9480f", "#3b5bdb", "#2b8a3e", "#ae3ec9"];
const PLAY_MS = 3000; // a whole path, whatever its steps

// The view's fields in the address (training.js adds them to its table): not part of the request.
export const VIEW_FIELDS = [
  { name: "landscape_view.plane", type: String, default: "pca" },
  { name: "landscape_view.run", type: Number, default: 0 },
  { name: "landscape_view.mode", type: String, default: "contour" },
  // Playing, by the address: since when (page.js now(), ms), so that a class's screens play
  // the teacher's paths in step, each from the same moment. 0: still.
  { name: "landscape_view.play", type: Number, default: 0 },
];

// "sgd:0.5, adam:0.02" ↔ the request's runs: the address keeps the short form.
export const runsText = (runs) =>
  runs.map((r) => (r.lr == null ? r.optimizer : `${r.optimizer}:${r.lr}`)).join(",");
export function landscapeRequest(body) {
  const runs = String(body.runs)
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean)
    .map((spec) => {
      const [optimizer, lr] = spec.split(":").map((s) => s.trim());
      return lr === undefined || lr === "" ? { optimizer } : { optimizer, lr: Number(lr) };
    });
  return { ...body, runs };
}

const shown = { result: null, step: 0, timer: null };
// A log axis over a decade or two labels 1, 2, 5 in each; over more, the decades alone.
function logAxis(values) {
  const finite = values.map(num).filter((v) => Number.isFinite(v) && v > 0);
  const decades = Math.log10(Math.max(...finite) / Math.min(...finite));
  const ticks =
    decades > 2 ? { dtick: 1, exponentformat: "power" } : { dtick: "D2", tickformat: ".2g" };
  return { type: "log", gridcolor: "#eef1f4", ...ticks };
}
const LEGEND = { orientation: "h", y: -0.35, yanchor: "top" };
const log10 = (v) => (Number.isFinite(num(v)) && num(v) > 0 ? Math.log10(num(v)) : null);
const logGrid = (z) => z.map((row) => row.map(log10));
const label = (run) =>
  (page.choices.optimizer_labels[run.optimizer]?.[page.lang] ?? run.optimizer) +
  (run.lr == null ? "" : ` (lr ${run.lr})`);

function view() {
  const value = (name) => document.querySelector(`[name="landscape_view.${name}"]`).value;
  return { plane: value("plane"), run: Number(value("run")) || 0, mode: value("mode") };
}

// What the chosen plane shows: its grid, the paths on it, their names and colours.
function planeOf(result, { plane, run }) {
  const chosen = result.runs[Math.min(run, result.runs.length - 1)];
  const index = result.runs.indexOf(chosen);
  if (plane === "shared" && result.shared) {
    return {
      grid: result.shared.plane,
      paths: result.shared.paths.map((p, i) => ({
        path: p,
        run: result.runs[i],
        color: COLORS[i],
      })),
    };
  }
  if (plane === "random")
    return { grid: chosen.random, paths: [], centre: { run: chosen, color: COLORS[index] } };
  return { grid: chosen.pca, paths: [{ path: chosen.path, run: chosen, color: COLORS[index] }] };
}

function axisTitles(grid) {
  if (!grid.explained) return [1, 2].map((k) => t("training.landscape.direction", { k }));
  return grid.explained.map((share, i) =>
    t("training.landscape.pc", { k: i + 1, share: (100 * num(share)).toFixed(1) }),
  );
}

export function render(panel, result) {
  shown.result = result;
  // The run's menu is the result's runs: pick the one the address names once they are there.
  const select = panel.querySelector('[name="landscape_view.run"]');
  const wanted =
    new URLSearchParams(location.hash.slice(1)).get("landscape_view.run") ?? select.value;
  select.replaceChildren(...result.runs.map((run, i) => new Option(label(run), String(i))));
  select.value = String(Number(wanted) < result.runs.length ? Number(wanted) : 0);
  const summary = panel.querySelector(".summary");
  summary.textContent = [
    t("training.landscape.weights", { weights: result.weights }),
    ...result.runs.map((run) =>
      run.diverged
        ? t("training.landscape.diverged", { name: label(run), step: run.path.loss.length - 1 })
        : t("training.landscape.summary", {
            name: label(run),
            loss: fmtNumber(run.final_loss, 3),
            accuracy: (100 * run.accuracy).toFixed(1),
            share: (100 * (num(run.pca.explained[0]) + num(run.pca.explained[1]))).toFixed(1),
            hidden: run.path.hidden.length,
            steps: run.path.loss.length - 1,
          }),
    ),
  ].join(" ");
  drawView(panel);
  drawInterpolation(result);
  resume(panel);
}

// Draw what the view controls ask for, the paths whole (as after playing them).
export function drawView(panel) {
  if (!shown.result) return;
  stop();
  const steps = Math.max(...planeOf(shown.result, view()).paths.map((p) => p.path.x.length), 1) - 1;
  const range = $("landscape-step");
  range.max = String(steps);
  range.value = String(steps);
  shown.step = steps;
  drawPlane(panel, steps);
  drawLoss(view());
  const missing = view().plane === "shared" && !shown.result.shared;
  panel.querySelector(".landscape-note").textContent = missing
    ? t("training.landscape.no_shared")
    : "";
}

function drawPlane(panel, step) {
  const v = view();
  const { grid, paths, centre } = planeOf(shown.result, v);
  const [xTitle, yTitle] = axisTitles(grid);
  const z = logGrid(grid.z);
  const upTo = (values) => values.slice(0, step + 1).map(num);
  const surface = v.mode === "surface";
  const traces = [
    surface
      ? {
          type: "surface",
          x: grid.x,
          y: grid.y,
          z,
          colorscale: "Viridis",
          showscale: false,
          opacity: 0.9,
          hoverinfo: "skip",
        }
      : {
          type: "contour",
          x: grid.x,
          y: grid.y,
          z,
          colorscale: "Viridis",
          ncontours: 30,
          colorbar: { title: { text: "log₁₀ loss" }, thickness: 12 },
          hovertemplate: "(%{x:.3g}, %{y:.3g}): 10^%{z:.2f}<extra></extra>",
        },
  ];
  for (const { path, run, color } of paths) {
    const x = upTo(path.x),
      y = upTo(path.y);
    traces.push(
      surface
        ? {
            type: "scatter3d",
            mode: "lines",
            x,
            y,
            z: upTo(path.plane_loss).map(log10),
            name: label(run),
            line: { color, width: 6 },
          }
        : {
            type: "scatter",
            mode: "lines+markers",
            x,
            y,
            name: label(run),
            line: { color, width: 2 },
            marker: { size: 3, color },
          },
    );
  }
  const ends = paths.map(({ path, color }) => ({
    x: num(path.x[0]),
    y: num(path.y[0]),
    color,
    text: t("training.landscape.init"),
  }));
  if (centre || paths.length === 1)
    ends.push({
      x: 0,
      y: 0,
      color: centre?.color ?? paths[0].color,
      text: t("training.landscape.final"),
    });
  if (!surface) {
    traces.push({
      type: "scatter",
      mode: "markers+text",
      x: ends.map((e) => e.x),
      y: ends.map((e) => e.y),
      text: ends.map((e) => e.text),
      textposition: "top center",
      textfont: { color: "#fff" },
      marker: { size: 9, symbol: "x", color: ends.map((e) => e.color) },
      showlegend: false,
      hoverinfo: "skip",
    });
  }
  const layout = {
    margin: { t: 12, r: 8, b: 44, l: 56 },
    font: { size: 12 },
    legend: { orientation: "h", y: -0.2 },
    ...(surface
      ? {
          scene: {
            xaxis: { title: { text: xTitle } },
            yaxis: { title: { text: yTitle } },
            zaxis: { title: { text: "log₁₀ loss" } },
          },
        }
      : {
          xaxis: { title: { text: xTitle }, range: [grid.x[0], grid.x.at(-1)] },
          yaxis: { title: { text: yTitle }, range: [grid.y[0], grid.y.at(-1)] },
        }),
  };
  Plotly.react($("landscape-plane"), traces, layout, CONFIG);
  panel.dataset.step = String(step);
  $("landscape-step").value = String(step);
  shown.step = step;
}

function drawLoss(v) {
  const { paths } = planeOf(shown.result, { ...v, plane: v.plane === "random" ? "pca" : v.plane });
  const traces = [];
  for (const { path, run, color } of paths) {
    const steps = path.loss.map((_, i) => i);
    traces.push({
      type: "scatter",
      mode: "lines",
      x: steps,
      y: path.loss.map(num),
      name: t("training.landscape.real", { name: label(run) }),
      line: { color, width: 2 },
    });
    traces.push({
      type: "scatter",
      mode: "lines",
      x: steps,
      y: path.plane_loss.map(num),
      name: t("training.landscape.on_plane", { name: label(run) }),
      line: { color, width: 1.5, dash: "dot" },
    });
    if (path.hidden.length) {
      traces.push({
        type: "scatter",
        mode: "markers",
        x: path.hidden,
        y: path.hidden.map((s) => num(path.loss[s])),
        name: t("training.landscape.hidden", { name: label(run) }),
        marker: { color: "#e03131", size: 8, symbol: "triangle-up" },
      });
    }
  }
  Plotly.react(
    $("landscape-loss"),
    traces,
    {
      margin: { t: 28, r: 8, b: 24, l: 56 },
      font: { size: 12 },
      title: { text: t("training.landscape.loss"), font: { size: 13 } },
      xaxis: { title: { text: t("training.axis.step") } },
      yaxis: logAxis(traces.flatMap((tr) => tr.y)),
      legend: LEGEND,
    },
    CONFIG,
  );
}

function drawInterpolation(result) {
  const traces = result.runs.map((run, i) => ({
    type: "scatter",
    mode: "lines",
    x: run.alpha.map(num),
    y: run.interpolation.map(num),
    name: label(run),
    line: { color: COLORS[i], width: 2 },
  }));
  const marks = [0, 1].map((x) => ({
    type: "line",
    x0: x,
    x1: x,
    yref: "paper",
    y0: 0,
    y1: 1,
    line: { color: "#adb5bd", dash: "dot" },
  }));
  Plotly.react(
    $("landscape-interpolation"),
    traces,
    {
      margin: { t: 28, r: 8, b: 24, l: 56 },
      font: { size: 12 },
      title: { text: t("training.landscape.interpolation"), font: { size: 13 } },
      xaxis: { title: { text: "α" } },
      yaxis: logAxis(traces.flatMap((tr) => tr.y)),
      shapes: marks,
      legend: LEGEND,
    },
    CONFIG,
  );
}

function stop() {
  clearInterval(shown.timer);
  shown.timer = null;
  document.getElementById("panel-landscape").dataset.playing = "0";
}

// Play the paths from the init, from the moment `since` (now() ms): the whole of each in
// PLAY_MS, so every screen that plays from the same moment shows the same step.
export function play(panel, since) {
  if (!shown.result) return;
  stop();
  const last = Number($("landscape-step").max);
  const at = () => Math.min(last, Math.max(0, Math.round(((now() - since) / PLAY_MS) * last)));
  panel.dataset.playing = "1";
  drawPlane(panel, at());
  shown.timer = setInterval(() => {
    const step = at();
    drawPlane(panel, step);
    if (step >= last) stop();
  }, PLAY_MS / 60);
  if (at() >= last) stop();
}

// Play on if the address says the paths are playing (a class following its teacher).
export function resume(panel) {
  const since = Number(new URLSearchParams(location.hash.slice(1)).get("landscape_view.play"));
  if (since > 0) play(panel, since);
}

export function seek(panel, step) {
  if (!shown.result) return;
  stop();
  drawPlane(panel, step);
}
