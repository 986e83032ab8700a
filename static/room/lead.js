// The teacher's side of class mode: the page's address, sent to the room whenever it changes;
// the questions the page can ask now; the code for the projector.
//
// Pages write their state with history.replaceState, which fires no event, so the history
// methods are watched; hashchange and popstate cover links and the back button. A burst of
// changes (stepping quickly through backward) is sent as its last address, within PUBLISH_MS.

import { el, prompt } from "./render.js";

const PUBLISH_MS = 100;
const $ = (id) => document.getElementById(id);

// Calls send(address) after each change of this page's address while `active()` holds (send
// resolves to whether it was delivered); returns a function that sends the current one now.
export function followAddress(send, active) {
  let timer = null;
  let sent = null;
  const publish = async () => {
    timer = null;
    const address = location.pathname + location.hash;
    if (!active() || address === sent) return;
    sent = address;
    if (!(await send(address))) sent = null; // not delivered: the next change tries again
  };
  const schedule = () => {
    if (active() && !timer) timer = setTimeout(publish, PUBLISH_MS);
  };
  for (const name of ["pushState", "replaceState"]) {
    const original = history[name];
    history[name] = function (...args) {
      const result = original.apply(this, args);
      schedule();
      return result;
    };
  }
  window.addEventListener("hashchange", schedule);
  window.addEventListener("popstate", schedule);
  return () => {
    sent = null;
    schedule();
  };
}

// What this page can ask the class now: window.gradientLab is the page's own contract (graph.js,
// descent.js, training.js); a page without one, or one that fails, asks nothing.
function pageQuestions() {
  try {
    return window.gradientLab?.questions?.() ?? [];
  } catch {
    return [];
  }
}

// The page's questions as buttons, unless they are the ones shown (`shown`, their JSON), which
// stay, with a keyboard user's focus. Returns the JSON of those now shown.
export function showAsks(t, shown, onAsk) {
  const questions = pageQuestions();
  const key = JSON.stringify(questions);
  if (key === shown) return shown;
  $("room-asks").replaceChildren(
    ...questions.map((q) => {
      const button = el("button", { type: "button", class: "room-ask" }, prompt(t, q));
      button.addEventListener("click", () => onAsk(q));
      return button;
    }),
  );
  $("room-asks-none").hidden = questions.length > 0;
  return key;
}

// The code, the QR code and the link, as large as the screen allows.
export function showBig(member) {
  $("room-dialog-code").textContent = member.shown;
  $("room-dialog-link").textContent = member.link;
  $("room-qr").src = `/api/rooms/${member.code}/qr.svg`;
  $("room-dialog").showModal();
}

// Whether the link was copied. The clipboard API exists only on https and localhost; on a
// classroom LAN's plain http the link is selected instead, for the teacher to copy.
export async function copyLink(link) {
  const copied =
    Boolean(navigator.clipboard && window.isSecureContext) &&
    (await navigator.clipboard.writeText(link).then(
      () => true,
      () => false,
    ));
  if (!copied) getSelection().selectAllChildren($("room-link"));
  return copied;
}
