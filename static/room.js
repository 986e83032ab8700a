// Class mode: a teacher starts a room; every student's page follows the teacher's address, and
// the class answers the teacher's questions before the reveal.
//
// A lab's state is its address, so following is navigation: the teacher's page sends
// path + hash whenever it changes, and a following page opens it (same path: a hash change,
// which the page follows; another path: a new page). Pages offer questions through one small
// contract, window.gradientLab = {questions(): [{kind, prompt, params, choices, answer}]}, and
// a page that answers a question itself (a point: a tap on the descent lab's plot) hears of the
// room through window.gradientLab.room({role, question, crowd, mine, answer, reveal}).
// Membership lives in localStorage (code, role, student id); the teacher's token never reaches
// a script: it is an HttpOnly cookie. A page that is in no room fetches nothing.

import { ApiError, postJSON } from "./api.js";
import { copyLink, followAddress, showAsks, showBig } from "./room/lead.js";
import { el, renderStudentQuestion, renderTeacherQuestion, renderWho } from "./room/render.js";

const STRINGS = JSON.parse(document.getElementById("room-strings").textContent);
const $ = (id) => document.getElementById(id);
// localStorage: {code, shown, link, unreachable, role, student, nickname, mine}
const MEMBER = "gradientLab.room";
const AWAY = "gradientLab.room.away"; // sessionStorage: this tab explores on its own

function t(key, params = {}) {
  const text = STRINGS[key] ?? key;
  return text.replace(/\{(\w+)\}/g, (m, name) => (name in params ? String(params[name]) : m));
}

const room = {
  member: load(),
  events: null,
  view: null,
  crowd: null,
  asked: null,
  lost: null,
  away: sessionStorage.getItem(AWAY) === "1",
};

function load() {
  try {
    return JSON.parse(localStorage.getItem(MEMBER)) ?? null;
  } catch {
    return null;
  }
}

function save(member) {
  room.member = member;
  if (member) localStorage.setItem(MEMBER, JSON.stringify(member));
  else localStorage.removeItem(MEMBER);
}

const api = (path, body = {}) => postJSON(`/api/rooms/${room.member.code}/${path}`, body);

// --- Starting, joining, leaving -------------------------------------------------------------

async function start() {
  await attempt(async () => {
    const started = await postJSON("/api/rooms", {});
    save({
      code: started.code,
      shown: started.shown,
      link: started.link,
      role: "teacher",
      unreachable: started.unreachable,
    });
    connect();
    publish();
  });
}

async function join(typed, nickname) {
  await attempt(async () => {
    const previous = room.member?.role === "student" ? room.member.student : undefined;
    const code = encodeURIComponent(typed.trim());
    const joined = await postJSON(`/api/rooms/${code}/join`, { nickname, student: previous });
    save({
      code: joined.code,
      shown: joined.shown,
      role: "student",
      student: joined.student,
      nickname: joined.nickname,
      mine: null,
    });
    setAway(false);
    connect();
  });
}

function forget(messageKey) {
  room.events?.close();
  clearTimeout(room.lost);
  Object.assign(room, { events: null, view: null, crowd: null, asked: null });
  delete window.gradientLabClock;
  save(null);
  setAway(false);
  render();
  $("room-status").textContent = messageKey ? t(messageKey) : "";
}

async function leave() {
  const { student } = room.member;
  await api("leave", { student }).catch(() => {}); // gone already: leaving is done either way
  forget();
}

// A teacher's "End the class" asks once more before it ends the class for everyone.
async function end() {
  const button = $("room-end");
  if (button.dataset.confirm !== "1") {
    button.dataset.confirm = "1";
    button.textContent = t("room.end.confirm");
    setTimeout(() => {
      delete button.dataset.confirm;
      button.textContent = t("room.end");
    }, 4000);
    return;
  }
  await attempt(async () => {
    await api("end");
    forget("room.ended");
  });
}

// --- The room's events ---------------------------------------------------------------------

// The server's clock, as this screen reads it (NTP's way: of a few round trips, the quickest
// says most truly where the server's clock stood halfway through it). Every screen of the room
// plays a race from the teacher's Play by it (page.js now()).
async function syncClock() {
  let best = null;
  for (let i = 0; i < 5; i++) {
    const sent = Date.now();
    const reply = await fetch("/api/clock", { cache: "no-store" })
      .then((r) => r.json())
      .catch(() => null);
    const back = Date.now();
    if (reply && (best === null || back - sent < best.trip)) {
      best = { trip: back - sent, offset: reply.now - (sent + back) / 2 };
    }
  }
  if (best && room.member) window.gradientLabClock = () => Date.now() + best.offset;
}

function connect() {
  syncClock();
  room.events?.close();
  const events = new EventSource(eventsPath());
  room.events = events;
  events.addEventListener("room", (e) => onRoom(JSON.parse(e.data)));
  events.addEventListener("crowd", (e) => {
    room.crowd = JSON.parse(e.data);
    render();
  });
  events.addEventListener("ended", () => forget("room.ended"));
  const status = $("room-status");
  events.addEventListener("open", () => {
    clearTimeout(room.lost);
    if (status.textContent === t("room.reconnecting")) status.textContent = "";
  });
  events.addEventListener("error", () => {
    // The server ends each stream after a minute and EventSource opens the next at once: say
    // the connection is lost only when it stays lost.
    clearTimeout(room.lost);
    room.lost = setTimeout(() => {
      status.textContent = t("room.reconnecting");
    }, 3000);
    // CLOSED: it gave up, because the server refused the stream, or because this page is
    // going away (following the teacher to another lab closes it too). Look once more.
    if (events.readyState === EventSource.CLOSED) setTimeout(() => recheck(events), 1000);
  });
  render();
}

// A student's id goes with the stream: it gets past the server's brake on guessed codes, which
// another student's typos behind the same address may have set off (the teacher's cookie does).
function eventsPath() {
  const { code, student } = room.member;
  return `/api/rooms/${code}/events` + (student ? `?student=${encodeURIComponent(student)}` : "");
}

// What a refusal of the room says, by its error's type: its teacher ended it (the stream may
// have been between two connections, or this page between two labs, just then), or no room has
// the code. Matched on the type, not the status: a proxy's own 404 says nothing of the room.
const OVER = { room_ended: "room.ended", room_not_found: "room.gone" };

async function recheck(events) {
  if (room.events !== events) return;
  const response = await fetch(eventsPath()).catch(() => null);
  let type = null;
  if (response?.ok) response.body?.cancel();
  else if (response) type = (await response.json().catch(() => null))?.error?.type;
  if (OVER[type]) forget(OVER[type]);
  else
    setTimeout(() => {
      if (room.events === events) connect();
    }, 2000);
}

function onRoom(view) {
  const fresh =
    view.question && !view.question.revealed && view.question.id !== room.view?.question?.id;
  room.view = view;
  // A question the class has not seen answered: the page hides what would give it away.
  document.body.classList.toggle("room-asking", Boolean(view.question && !view.question.revealed));
  if (room.member.role === "student") {
    if (!room.away) follow(view.address);
    if (fresh && view.question.kind === "point") {
      openPanel(false); // it is answered on the page's plot, which the panel would cover
    } else if (fresh) {
      openPanel(true); // a new question: the student should see it without looking for it
      $("room-status").textContent = t("room.question.new");
    } else if (view.question?.revealed && $("room-status").textContent === t("room.question.new")) {
      $("room-status").textContent = "";
    }
  }
  render();
}

// --- Following the teacher (students) ------------------------------------------------------

// Set once this page is navigating to another lab: the next page reads the room's latest view
// when it connects, so later addresses wait for it rather than abort that navigation.
let leaving = false;

function follow(address) {
  if (!address || leaving) return;
  const target = new URL(address, location.origin);
  if (target.origin !== location.origin) return; // the server refuses these; never follow one
  if (target.pathname + target.hash === location.pathname + location.hash) return;
  if (target.pathname === location.pathname) {
    // A hash change: the page follows its address; replace() keeps the back button clean.
    location.replace(location.pathname + location.search + (target.hash || "#"));
  } else {
    leaving = true;
    location.assign(target.pathname + target.hash);
  }
}

function setAway(away) {
  room.away = away;
  if (away) sessionStorage.setItem(AWAY, "1");
  else sessionStorage.removeItem(AWAY);
  render();
  if (!away && room.view) follow(room.view.address);
}

// --- Leading (the teacher's page) ------------------------------------------------------------

// Sends this page's address to the room whenever it changes, while this browser teaches.
const publish = followAddress(
  (address) => {
    renderAsks();
    return attempt(() => api("address", { address }));
  },
  () => room.member?.role === "teacher",
);

function renderAsks() {
  if (room.member?.role === "teacher") room.asked = showAsks(t, room.asked, ask);
}

async function ask(question) {
  await attempt(() =>
    api("question", {
      kind: question.kind,
      prompt: question.prompt,
      params: question.params ?? {},
      choices: question.choices ?? [],
      answer: String(question.answer),
      where: location.pathname,
      x_range: question.x_range ?? null,
      y_range: question.y_range ?? null,
    }),
  );
}

const reveal = () => attempt(() => api("reveal"));

// Whether the answer was taken (a refusal is shown in the panel, opened for a tap's).
async function answer(value) {
  const question = room.view.question;
  const taken = await attempt(async () => {
    await api("answer", { student: room.member.student, question: question.id, value });
    save({ ...room.member, mine: { question: question.id, value } });
    render();
  });
  if (!taken && question.kind === "point") openPanel(true);
  return taken;
}

// --- Drawing -------------------------------------------------------------------------------

function render() {
  const member = room.member;
  const role = member?.role ?? null;
  $("room-out").hidden = role !== null;
  $("room-teacher").hidden = role !== "teacher";
  $("room-student").hidden = role !== "student";
  $("room-toggle").classList.toggle("live", role !== null);
  document.body.dataset.room = role ?? ""; // the lab's layout may follow it (app.css)
  $("room-toggle-text").textContent = role ? `${t("room.class")} ${member.shown}` : t("room.class");
  $("room-rejoin").hidden = !(role === "student" && room.away);
  if (role === "teacher") renderTeacher(member);
  if (role === "student") renderStudent(member);
  tellPage(role);
}

// The page's own part in a question, where it has one; a page's failure is its own.
function tellPage(role) {
  try {
    window.gradientLab?.room?.({
      role,
      question: room.view?.question ?? null,
      crowd: room.crowd,
      mine: room.member?.mine ?? null,
      answer,
      reveal,
    });
  } catch (err) {
    console.error(err);
  }
}

function renderTeacher(member) {
  $("room-code-shown").textContent = member.shown;
  $("room-link").textContent = member.link;
  $("room-link").href = member.link;
  renderUnreachable($("room-unreachable"), member.unreachable);
  if (room.crowd) renderWho($("room-students"), $("room-nicknames"), t, room.crowd);
  renderTeacherQuestion($("room-question-teacher"), t, room.view?.question, room.crowd, reveal);
  if (room.asked === null) renderAsks();
}

// A link no student's device can open says so, with the one line that fixes it.
function renderUnreachable(box, why) {
  box.hidden = !why;
  if (!why) return;
  const fix = document.createElement("code");
  fix.textContent = t(`room.unreachable.${why}.fix`);
  box.replaceChildren(t(`room.unreachable.${why}`), " ", fix);
}

function renderStudent(member) {
  $("room-in").textContent =
    t("room.in", { code: member.shown }) +
    (member.nickname ? ` · ${t("room.as", { nickname: member.nickname })}` : "");
  $("room-follow-state").textContent = t(room.away ? "room.away" : "room.following");
  $("room-explore").textContent = t(room.away ? "room.follow" : "room.explore");
  renderStudentQuestion(
    $("room-question-student"),
    t,
    room.view?.question,
    room.crowd,
    member.mine,
    answer,
  );
}

function showError(err) {
  const box = $("room-error");
  box.replaceChildren();
  box.hidden = !err;
  if (!err) return;
  box.append(el("p", {}, err.message));
  const hint = (err.hintKey && STRINGS[err.hintKey]) || err.hint;
  if (hint) box.append(el("p", { class: "muted" }, hint));
}

// One request from the panel: its error, if any, is shown there. Whether it succeeded.
async function attempt(action) {
  showError(null);
  try {
    await action();
    return true;
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    if (OVER[err.type] && room.member) forget(OVER[err.type]);
    else showError(err);
    return false;
  }
}

function openPanel(open) {
  $("room-panel").hidden = !open;
  $("room-toggle").setAttribute("aria-expanded", String(open));
  if (open) renderAsks();
}

// A page may draw its result after its address was written (the training lab does): while the
// teacher's panel is open, look again now and then for what it can ask.
setInterval(() => {
  if (!$("room-panel").hidden) renderAsks();
}, 1000);

// --- Wiring ------------------------------------------------------------------------------------

$("room-toggle").addEventListener("click", () => openPanel($("room-panel").hidden));
$("room-close").addEventListener("click", () => {
  openPanel(false);
  $("room-toggle").focus();
});
$("room-panel").addEventListener("keydown", (e) => {
  if (e.key === "Escape") {
    openPanel(false);
    $("room-toggle").focus();
  }
});
$("room-start").addEventListener("click", start);
$("room-join").addEventListener("submit", (e) => {
  e.preventDefault();
  join($("room-code").value, $("room-nickname").value.trim());
});
$("room-leave").addEventListener("click", leave);
$("room-end").addEventListener("click", end);
$("room-big").addEventListener("click", () => showBig(room.member));
$("room-copy").addEventListener("click", async () => {
  $("room-status").textContent = t(
    (await copyLink(room.member.link)) ? "room.copied" : "room.copy.select",
  );
});
$("room-explore").addEventListener("click", () => setAway(!room.away));
$("room-rejoin").addEventListener("click", () => setAway(false));
// A student who picks another lab in the header has stepped away on purpose.
for (const link of document.querySelectorAll(".top nav a")) {
  link.addEventListener("click", () => {
    if (room.member?.role === "student") setAway(true);
  });
}

// A join link (/?join=CODE, the QR code's): the panel opens with the code filled in.
const params = new URLSearchParams(location.search);
if (params.has("join")) {
  const typed = params.get("join");
  params.delete("join");
  const search = params.toString();
  history.replaceState(
    history.state,
    "",
    location.pathname + (search ? `?${search}` : "") + location.hash,
  );
  if (room.member?.code !== typed.toUpperCase()) {
    $("room-code").value = typed;
    openPanel(true);
    $("room-nickname").focus();
  }
}
render();
if (room.member) {
  connect();
  publish();
}
