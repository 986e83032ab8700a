// Class mode's panel, drawn from plain data: the room event (address, question) and the crowd
// event (students, answers, tally). Nicknames and every text a page or student sent go in with
// textContent, never innerHTML.

export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (name === "class") node.className = value;
    else node.setAttribute(name, value);
  }
  node.append(...children.filter((c) => c !== null && c !== undefined));
  return node;
}

// A question's prompt, in this page's language: the page that asked sent a key and its params.
export function prompt(t, question) {
  return t(question.prompt, question.params);
}

// What a choice reads as: yes / no in this page's language, anything else as the page sent it.
export function choiceText(t, question, value) {
  return question.kind === "yesno" ? t(`room.${value}`) : value;
}

// The same rule as the server's (gradient_lab/rooms/questions.py, is_right) and the graph lab's own
// "predict" check: numbers within 1e-4, relative (absolute below 1); a tap within 5% (NEAR) of
// the plot's width of the true point.
const NEAR = 0.05;
export function isRight(question, value) {
  if (question.kind === "point") {
    const [x, y] = value.split(",").map(Number);
    const [tx, ty] = question.answer.split(",").map(Number);
    return Math.hypot(x - tx, y - ty) <= NEAR * (question.x_range[1] - question.x_range[0]);
  }
  if (question.kind !== "number") return value === question.answer;
  const want = Number(question.answer);
  return Math.abs(Number(value) - want) <= 1e-4 * Math.max(1, Math.abs(want));
}

function fmt(value) {
  const n = Number(value);
  return Number.isInteger(n) ? String(n) : String(Number(n.toPrecision(6)));
}

// A point "x,y" as a learner reads it: (x, y), each to 3 significant digits.
export function pointText(value) {
  const [x, y] = String(value)
    .split(",")
    .map((v) => Number(Number(v).toPrecision(3)));
  return `(${x}, ${y})`;
}

// What an answer reads as: a number, a choice, or a point.
function shown(t, question, value) {
  if (question.kind === "point") return pointText(value);
  return question.kind === "number" ? value : choiceText(t, question, value);
}

// A point question's taps: how many, their median, and once revealed each one's distance.
function renderTaps(box, t, taps) {
  const three = (v) => Number(Number(v).toPrecision(3));
  if (!taps.count) return;
  const [x, y] = taps.median.map(three);
  box.append(el("p", { class: "room-taps" }, t("room.taps", { n: taps.count, x, y })));
  if (taps.taps[0]?.distance === null) return;
  box.append(el("p", { class: "muted small" }, t("room.taps.near", { near: three(taps.near) })));
  const list = el("ol", { class: "room-tap-list" });
  for (const tap of [...taps.taps].sort((a, b) => a.distance - b.distance)) {
    const text = t("room.tap.far", { x: three(tap.x), y: three(tap.y), d: three(tap.distance) });
    list.append(el("li", { class: tap.right ? "right" : "" }, text + (tap.right ? " ✓" : "")));
  }
  box.append(list);
}

// Horizontal bars, one per choice or histogram bin; the right one is marked once revealed.
export function renderBars(box, t, question, bars) {
  const most = Math.max(1, ...bars.map((b) => b.count));
  const list = el("ol", { class: "room-bars", "aria-label": t("room.bars") });
  for (const bar of bars) {
    const fill = el("span", { class: "room-fill" });
    fill.style.width = `${(100 * bar.count) / most}%`;
    const label = el("span", { class: "room-bar-label" }, choiceText(t, question, bar.label));
    if (bar.right) label.append(" ✓");
    list.append(
      el(
        "li",
        { class: bar.right ? "room-bar right" : "room-bar" },
        label,
        el("span", { class: "room-track" }, fill),
        el("span", { class: "room-count" }, String(bar.count)),
      ),
    );
  }
  box.append(list);
}

function summary(t, question, crowd) {
  const parts = [t("room.answered", { answered: crowd.answered, students: crowd.students })];
  if (question.revealed && crowd.right !== null && crowd.answered) {
    parts.push(t("room.right", { right: crowd.right, answered: crowd.answered }));
  }
  return el("p", { class: "room-summary" }, parts.join(" · "));
}

function answerLine(t, question) {
  const answer =
    question.kind === "number" ? fmt(question.answer) : shown(t, question, question.answer);
  return el("p", { class: "room-answer" }, t("room.answer.is", { answer }));
}

// A question box is built once per question and state (so that a student typing an answer, or
// a teacher about to press Reveal, keeps what they have while others answer); its live part,
// the count and the bars, is drawn again with each crowd event. Returns the live part.
function questionBox(box, key, build) {
  if (box.dataset.key !== key) {
    box.dataset.key = key;
    const live = el("div", { class: "room-live" });
    box.replaceChildren(...build(live));
  }
  const live = box.querySelector(".room-live");
  live.replaceChildren();
  return live;
}

function clear(box) {
  box.replaceChildren();
  box.hidden = true;
  delete box.dataset.key;
}

// The teacher's view of the question: its tally live, and the Reveal button.
export function renderTeacherQuestion(box, t, question, crowd, onReveal) {
  if (!question) return clear(box);
  box.hidden = false;
  const live = questionBox(box, `${question.id}|${question.revealed}`, (live) => {
    const title = el("p", { class: "room-prompt" }, prompt(t, question));
    if (question.revealed) return [title, answerLine(t, question), live];
    const reveal = el(
      "button",
      { type: "button", class: "primary", id: "room-reveal" },
      t("room.reveal"),
    );
    reveal.addEventListener("click", onReveal);
    return [title, live, reveal];
  });
  if (crowd) live.append(summary(t, question, crowd));
  if (crowd?.bars?.length) renderBars(live, t, question, crowd.bars);
  if (crowd?.taps) renderTaps(live, t, crowd.taps);
}

// A student's view: the question and a way to answer it; after the reveal, the answer, theirs,
// and how the class answered.
export function renderStudentQuestion(box, t, question, crowd, mine, onAnswer) {
  if (!question) return clear(box);
  box.hidden = false;
  const value = mine?.question === question.id ? mine.value : null;
  const asText = (v) => shown(t, question, v);
  const live = questionBox(box, `${question.id}|${question.revealed}|${value}`, (live) => {
    const parts = [el("p", { class: "room-prompt", id: "room-prompt" }, prompt(t, question))];
    if (question.revealed) {
      const right = value !== null && isRight(question, value);
      const said =
        value === null
          ? t("room.you.none")
          : t(right ? "room.you.right" : "room.you.wrong", { value: asText(value) });
      return [
        ...parts,
        answerLine(t, question),
        el("p", { class: `room-you ${right ? "right" : "wrong"}` }, said),
        live,
      ];
    }
    // A point is answered by a tap on the page's plot (static/descent/predict.js).
    if (question.kind === "point")
      parts.push(el("p", { class: "room-tap-here" }, t("room.tap.here")));
    else if (question.kind === "number") parts.push(numberForm(t, value, onAnswer));
    else parts.push(choices(t, question, value, onAnswer));
    if (value !== null) {
      parts.push(el("p", { class: "room-sent muted" }, t("room.sent", { value: asText(value) })));
    }
    return [...parts, live];
  });
  if (crowd) live.append(summary(t, question, crowd));
  if (question.revealed && crowd?.bars?.length) renderBars(live, t, question, crowd.bars);
  if (question.revealed && crowd?.taps) renderTaps(live, t, crowd.taps);
}

function numberForm(t, value, onAnswer) {
  const input = el("input", {
    id: "room-value",
    inputmode: "decimal",
    autocomplete: "off",
    "aria-labelledby": "room-prompt",
  });
  if (value !== null) input.value = value;
  const form = el(
    "form",
    { class: "room-number" },
    input,
    el("button", { type: "submit", class: "primary" }, t("room.send")),
  );
  form.addEventListener("submit", (event) => {
    event.preventDefault();
    if (input.value.trim()) onAnswer(input.value.trim());
  });
  return form;
}

function choices(t, question, value, onAnswer) {
  const group = el("div", {
    class: "room-choices",
    role: "group",
    "aria-labelledby": "room-prompt",
  });
  for (const choice of question.choices) {
    const button = el(
      "button",
      { type: "button", "aria-pressed": String(choice === value) },
      choiceText(t, question, choice),
    );
    button.addEventListener("click", () => onAnswer(choice));
    group.append(button);
  }
  return group;
}

// The teacher's list of who is here: nicknames as text, and a count of those without one.
export function renderWho(summaryEl, list, t, crowd) {
  summaryEl.textContent = t("room.students", { n: crowd.students });
  const names = crowd.nicknames ?? [];
  list.replaceChildren(...names.map((name) => el("li", {}, name)));
  const anonymous = crowd.students - names.length;
  if (anonymous > 0)
    list.append(el("li", { class: "muted" }, t("room.anonymous", { n: anonymous })));
}
