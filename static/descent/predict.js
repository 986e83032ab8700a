// Predict the path (class mode): the teacher asks where a run will be after its steps. While the
// question is open every screen holds the race at its start with the paths to come hidden; a
// student's tap on the plot is their answer, marked where they tapped; the teacher's screen
// draws the class's taps as a heat map over the surface. Reveal plays the race from its start on
// every screen in step (the address's play moment), through the taps.
//
// static/room.js tells this module of the room (window.gradientLab.room, set in descent.js);
// descent.js draws, with the traces and the holds this module gives it.

import { num, t } from "../page.js";
import { isRight } from "../room/render.js";

const $ = (id) => document.getElementById(id);
const HEAT = "214, 51, 132"; // the taps' colour (rgb): no optimizer's (descent/style.js)
const BINS = 16; // the heat map's cells along each axis
const STEPPER = ["play", "back", "next", "scrub"];
const room = {
  role: null,
  question: null,
  crowd: null,
  mine: null,
  answer: null,
  reveal: null,
  key: "",
  drawn: "",
};
let hooks = { redraw() {}, hold() {}, rewind() {}, replay() {} };

// The page's part: redraw() the plot, hold() the clock, rewind() to step 0 and say so in the
// address (the teacher's), replay() the race from step 0 (the teacher's Play, which every
// screen follows).
export function wirePredict(pageHooks) {
  hooks = pageHooks;
  $("predict-reveal").addEventListener("click", () => room.reveal?.());
}

// Revealed questions whose race has given way to another on this screen: their taps were about
// that race, not this one.
const done = new Set();
const point = () => {
  const question = room.question;
  return question?.kind === "point" && !done.has(question.id) ? question : null;
};
const mineOf = (question) => (room.mine?.question === question.id ? room.mine.value : null);
const three = (v) => Number(Number(v).toPrecision(3));

// Whether the class is predicting: a point question is open, so the race waits at its start.
export function predicting() {
  const question = point();
  return Boolean(question && !question.revealed);
}

// What a teacher can ask of a race: where each run is at its last step, if that is on the plot
// (a tap cannot be off it).
export function pointQuestions(runs, labels, { x_range, y_range }) {
  return runs.flatMap((run, r) => {
    const k = run.points.length - 1;
    const [x, y] = run.points[k].map(num);
    const on = x >= x_range[0] && x <= x_range[1] && y >= y_range[0] && y <= y_range[1];
    const params = { run: labels[r], steps: String(k) };
    const answer = `${x},${y}`;
    return on ? [{ kind: "point", prompt: "room.q.where", params, answer, x_range, y_range }] : [];
  });
}

// A new race is drawn: a revealed question is over.
export function raced() {
  const question = point();
  if (!question?.revealed) return;
  done.add(question.id);
  onRoom({});
}

// The room changed (room.js calls this on each of its events).
export function onRoom(next) {
  const before = room.key;
  Object.assign(room, next);
  const question = point();
  room.key = question ? `${question.id}|${question.revealed}` : "";
  document.body.classList.toggle("predicting", predicting());
  for (const id of STEPPER) $(id).disabled = predicting();
  if (room.key !== before) {
    if (predicting()) {
      hooks.hold();
      if (room.role === "teacher") hooks.rewind();
      else bringIntoView($("plot"));
    }
    const revealedNow = question?.revealed && before === `${question.id}|false`;
    hooks.redraw();
    if (revealedNow && room.role === "teacher") hooks.replay();
  }
  drawTaps();
  showNote();
}

function bringIntoView(el) {
  const box = el.getBoundingClientRect();
  if (box.top < 0 || box.bottom > innerHeight) el.scrollIntoView({ block: "center" });
}

// A click on the plot while predicting: a student's answer, where they tapped. Whether it took
// the click (then it does not move the start, on anyone's screen).
export function tapPlot(event) {
  const question = point();
  if (!question || question.revealed) return false;
  if (room.role !== "student" || !room.answer) return true;
  const plot = $("plot");
  const full = plot._fullLayout;
  let { x, y } = event.points[0];
  const at = event.event;
  if (full && Number.isFinite(at?.clientX)) {
    // where the finger was, not the nearest grid cell
    const box = plot.getBoundingClientRect();
    x = full.xaxis.p2l(at.clientX - box.left - full._size.l);
    y = full.yaxis.p2l(at.clientY - box.top - full._size.t);
  }
  const within = (v, [lo, hi]) => Math.min(hi, Math.max(lo, Number(v.toPrecision(4))));
  room.answer(`${within(x, question.x_range)},${within(y, question.y_range)}`);
  // A tap leaves Plotly's hover label (the grid cell's long coordinates) over the student's
  // own mark on a phone: the question's line says where they tapped.
  Plotly.Fx.unhover(plot);
  return true;
}

// The traces this module adds after the runs (three, always, so that their places stay): the
// taps' heat map and the taps themselves (the teacher's, live; everyone's, once revealed), and
// this student's own tap.
export function predictTraces() {
  const question = point();
  const taps = question ? (room.crowd?.taps?.taps ?? []) : [];
  const mine = question ? mineOf(question)?.split(",").map(Number) : null;
  const cells = (range) => ({ start: range[0], end: range[1], size: (range[1] - range[0]) / BINS });
  const xs = taps.map((tap) => tap.x);
  const ys = taps.map((tap) => tap.y);
  const name = t("descent.predict.taps");
  const bins = question
    ? {
        autobinx: false,
        autobiny: false,
        xbins: cells(question.x_range),
        ybins: cells(question.y_range),
      }
    : {};
  const heat = [
    [0, `rgba(${HEAT}, 0)`],
    [0.2, `rgba(${HEAT}, 0.3)`],
    [1, `rgba(${HEAT}, 0.75)`],
  ];
  return [
    {
      uid: "predict-heat",
      type: "histogram2dcontour",
      x: xs,
      y: ys,
      visible: xs.length > 0,
      name,
      hoverinfo: "skip",
      showscale: false,
      ncontours: 6,
      line: { width: 0, smoothing: 1.3 },
      contours: { coloring: "fill", showlines: false },
      colorscale: heat,
      ...bins,
    },
    {
      uid: "predict-taps",
      type: "scatter",
      mode: "markers",
      x: xs,
      y: ys,
      name,
      hoverinfo: "skip",
      marker: { color: `rgb(${HEAT})`, size: 8, line: { color: "#ffffff", width: 1.5 } },
    },
    {
      uid: "predict-mine",
      type: "scatter",
      mode: "markers",
      x: mine ? [mine[0]] : [],
      y: mine ? [mine[1]] : [],
      name: t("descent.predict.yours"),
      hoverinfo: "skip",
      cliponaxis: false,
      marker: { symbol: "circle-open", size: 24, color: "#1f2328", line: { width: 3 } },
    },
  ];
}

// The taps as they are now, without drawing the race again.
function drawTaps() {
  const plot = $("plot");
  if (!plot.data) return;
  const traces = predictTraces();
  const key = JSON.stringify(traces);
  const indices = traces.map((trace) => plot.data.findIndex((drawn) => drawn.uid === trace.uid));
  if (key === room.drawn || indices.includes(-1)) return;
  room.drawn = key;
  const update = {};
  for (const name of ["x", "y", "visible", "xbins", "ybins", "autobinx", "autobiny"]) {
    update[name] = traces.map((trace) => trace[name] ?? (name === "visible" ? true : undefined));
  }
  Plotly.restyle(plot, update, indices);
}

// Over the plot: the question, and how the class (the teacher's screen) or this student fares.
function showNote() {
  const note = $("predict-note");
  const question = point();
  note.hidden = !question;
  delete note.dataset.right;
  if (!question) return;
  const parts = [t(question.prompt, question.params)];
  const crowd = room.crowd ?? { answered: 0, students: 0, right: null };
  const mine = mineOf(question);
  if (room.role === "teacher") {
    parts.push(
      question.revealed && crowd.right !== null && crowd.answered
        ? t("descent.predict.result", { right: crowd.right, answered: crowd.answered })
        : t("descent.predict.count", { answered: crowd.answered, students: crowd.students }),
    );
  } else if (!question.revealed) {
    parts.push(mine ? t("descent.predict.mine", pointParams(mine)) : t("room.tap.here"));
  } else if (!mine) {
    parts.push(t("descent.predict.none"));
  } else {
    const [x, y] = mine.split(",").map(Number);
    const [tx, ty] = question.answer.split(",").map(Number);
    const right = isRight(question, mine);
    parts.push(
      t(right ? "descent.predict.right" : "descent.predict.wrong", {
        ...pointParams(mine),
        d: three(Math.hypot(x - tx, y - ty)),
      }),
    );
    note.dataset.right = String(right);
  }
  $("predict-text").textContent = parts.join(" ");
  // The teacher reveals from the plot too: on a projector the class panel may be closed.
  $("predict-reveal").hidden = !(room.role === "teacher" && !question.revealed);
}

function pointParams(value) {
  const [x, y] = value.split(",").map(three);
  return { x, y };
}
