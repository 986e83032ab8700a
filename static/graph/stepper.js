// The backward stepper's controls over one state: First, Back, Next (in predict mode it asks
// before it reveals), Last, Play at a speed; `render` draws the state, `save` writes the address.

import { t } from "../page.js";
import { matches, questions, stepView } from "./steps.js";
import { fmt } from "./tensors.js";

const $ = (id) => document.getElementById(id);

export function makeStepper(state, { render, save }) {
  const total = () => stepView(state.graph, state.call, Infinity).total;

  function check(form) {
    const results = state.asking.map((q, i) => ({
      q,
      right: matches(form.elements[`q${i}`].value, q.expected),
    }));
    const right = results.every((r) => r.right);
    state.verdict = {
      right,
      text: right
        ? t("graph.predict.right")
        : t("graph.predict.wrong", {
            expected: results.map((r) => `${r.q.label}: ${fmt(r.q.expected, 6)}`).join(", "),
          }),
    };
    state.asking = null;
    reveal();
  }

  // The call and step the state names, within what this graph has.
  function showStep() {
    const calls = state.graph?.backward ?? [];
    state.call = Math.min(Math.max(0, state.call), Math.max(0, calls.length - 1));
    state.step = Math.min(Math.max(0, state.step), calls.length ? total() : 0);
    $("call").value = String(state.call);
    state.asking = state.verdict = null;
    render();
  }

  function go(step) {
    state.asking = null;
    state.step = step;
    render();
    save();
  }

  function reveal() {
    go(state.step + 1);
  }

  function next() {
    const call = state.graph?.backward?.[state.call];
    if (!call || state.step >= total()) return pause();
    if (state.predict && !state.asking && state.step < call.steps.length) {
      const step = call.steps[state.step];
      const after = stepView(state.graph, state.call, state.step + 1).leaves.find(
        (l) => l.id === step.node,
      )?.now;
      const qs = questions(state.graph, call, step, after);
      if (qs.length) {
        pause();
        state.verdict = null;
        state.asking = qs;
        render();
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

  return { state, save, check, showStep, go, reveal, next, play, pause, total };
}

export function wireStepper({ state, save, go, next, play, pause, total }) {
  $("speed").addEventListener("change", (e) => {
    state.speed = Number(e.target.value);
    if (state.timer) {
      pause();
      play();
    }
    save();
  });
  $("call").addEventListener("change", (e) => {
    pause();
    state.call = Number(e.target.value);
    go(0);
  });
  $("first").addEventListener("click", () => {
    pause();
    state.verdict = null;
    go(0);
  });
  $("back").addEventListener("click", () => {
    pause();
    state.verdict = null;
    go(Math.max(0, state.step - 1));
  });
  $("next").addEventListener("click", () => {
    pause();
    next();
  });
  $("last").addEventListener("click", () => {
    pause();
    state.verdict = null;
    go(total());
  });
  $("play").addEventListener("click", () => play());
}
