// The one fetch helper: JSON in, JSON out (or a stream of server-sent events), and every failure
// as an ApiError. A request that cannot reach the server, or gets no answer in time, fails with
// a type of its own, so that a page can say so plainly and offer to try again. A server too busy
// to take a request (503 with Retry-After) is asked once more after the wait it names, and the
// page says so while it waits.

import { t } from "./page.js";

// A request waits at most queue_seconds (10 s) for its turn and then runs for at most
// wall_seconds (5 s): past 20 s no answer is coming. The training stream sends a chunk about
// every tenth of a second; 15 s of silence between two means it has stalled.
export const TIMEOUT_MS = 20_000;
export const STALL_MS = 15_000;

// Failures of the connection, not of the program: the page offers a Retry for these.
const RETRY = new Set(["unreachable", "timed_out", "busy", "interrupted"]);

export class ApiError extends Error {
  // The server's envelope {"error": {type, message, line, hint, hint_key}, "partial": ...}.
  constructor(
    { type, message, line = null, hint = null, hint_key = null },
    status,
    partial = null,
  ) {
    super(message);
    this.name = "ApiError";
    this.type = type;
    this.line = line;
    this.hint = hint;
    this.hintKey = hint_key;
    this.status = status;
    this.partial = partial;
    this.retry = RETRY.has(type);
    this.seconds = null; // for timed_out: how long the page waited
  }
}

function failure(type, message, ms = null) {
  const err = new ApiError({ type, message }, 0);
  if (ms !== null) err.seconds = Math.round(ms / 1000);
  return err;
}

// One request's clock: it aborts the request `ms` after it is armed (again after each chunk of a
// stream). `signal` is the caller's own way to stop it (the training lab's Stop button), which
// passes through as an AbortError.
function deadline(signal) {
  const controller = new AbortController();
  const clock = { signal: controller.signal, timedOut: false, ms: 0, timer: null };
  if (signal?.aborted) controller.abort(signal.reason);
  signal?.addEventListener("abort", () => controller.abort(signal.reason), { once: true });
  clock.arm = (ms) => {
    clearTimeout(clock.timer);
    clock.ms = ms;
    clock.timer = setTimeout(() => {
      clock.timedOut = true;
      controller.abort();
    }, ms);
  };
  clock.disarm = () => clearTimeout(clock.timer);
  // What a rejected fetch or read means: the caller stopped it, the clock did, or the network.
  clock.explain = (err, lost) => {
    if (signal?.aborted) return err;
    if (clock.timedOut)
      return failure("timed_out", `no answer from the server in ${clock.ms / 1000} s`, clock.ms);
    return failure(lost, `the server could not be reached (${err?.message || err})`);
  };
  return clock;
}

const RETRY_AFTER_MAX_S = 5; // a longer wait is the learner's to choose, with the Retry button

async function send(url, body, accept, clock) {
  for (let retried = false; ; retried = true) {
    let response;
    try {
      response = await fetch(url, {
        method: "POST",
        signal: clock.signal,
        body: JSON.stringify(body),
        headers: { "Content-Type": "application/json", Accept: accept },
      });
    } catch (err) {
      throw clock.explain(err, "unreachable");
    }
    const wait = Number(response.headers.get("Retry-After"));
    if (retried) busyNotice(response.ok ? "net.busy.answered" : "net.busy.again");
    const refused = response.status === 503 || response.status === 429; // busy, or too many of ours
    if (retried || !refused || !(wait >= 0) || wait > RETRY_AFTER_MAX_S) return response;
    busyNotice("net.busy.waiting", { seconds: wait });
    await new Promise((resolve) => {
      const timer = setTimeout(resolve, wait * 1000);
      clock.signal.addEventListener(
        "abort",
        () => {
          clearTimeout(timer);
          resolve();
        },
        { once: true },
      );
    });
  }
}

// One line at the foot of the page, read out by screen readers, that says what the retry does.
function busyNotice(key, params = {}) {
  let note = document.getElementById("net-notice");
  if (!note) {
    note = document.createElement("p");
    note.id = "net-notice";
    note.setAttribute("role", "status");
    document.body.append(note);
  }
  note.textContent = t(key, params);
  note.hidden = false;
  clearTimeout(note.timer);
  if (key !== "net.busy.waiting")
    note.timer = setTimeout(() => {
      note.hidden = true;
    }, 6000);
}

async function refusal(response) {
  let data = null;
  try {
    data = await response.json();
  } catch {
    // A proxy's HTML error page, or an empty body: described below by the status alone.
  }
  const envelope = data?.error;
  if (response.status === 503)
    return new ApiError({ ...envelope, type: "busy", message: envelope?.message ?? "503" }, 503);
  // A proxy in front of a server that is down answers 502 or 504 without our envelope.
  if (!envelope && (response.status === 502 || response.status === 504)) {
    return failure("unreachable", `${response.status} ${response.statusText}`);
  }
  return new ApiError(
    envelope ?? { type: "http_error", message: `${response.status} ${response.statusText}` },
    response.status,
    data?.partial ?? null,
  );
}

export async function postJSON(url, body, { timeout = TIMEOUT_MS, signal } = {}) {
  const clock = deadline(signal);
  clock.arm(timeout);
  try {
    const response = await send(url, body, "application/json", clock);
    if (!response.ok) throw await refusal(response);
    try {
      return await response.json();
    } catch (err) {
      throw clock.explain(err, "interrupted");
    }
  } finally {
    clock.disarm();
  }
}

// A POSTed text/event-stream (EventSource can only GET): yields each event's data, parsed; an
// `error` event throws the envelope it carries. `timeout` bounds the wait for the first event,
// `stall` the silence between two.
export async function* postEvents(
  url,
  body,
  { timeout = TIMEOUT_MS, stall = STALL_MS, signal } = {},
) {
  const clock = deadline(signal);
  clock.arm(timeout);
  try {
    const response = await send(url, body, "text/event-stream", clock);
    if (!response.ok) throw await refusal(response);
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      let chunk;
      try {
        chunk = await reader.read();
      } catch (err) {
        throw clock.explain(err, "interrupted");
      }
      if (chunk.done) return;
      clock.arm(stall);
      buffer += chunk.value;
      let cut;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const fields = {};
        for (const line of buffer.slice(0, cut).split("\n")) {
          const colon = line.indexOf(": ");
          fields[line.slice(0, colon)] = line.slice(colon + 2);
        }
        buffer = buffer.slice(cut + 2);
        const data = JSON.parse(fields.data);
        if (fields.event === "error") throw new ApiError(data.error, response.status);
        yield data;
      }
    }
  } finally {
    clock.disarm();
  }
}

// The notice for a failure of the connection, in the page's language (t is the page's strings),
// with a Retry button that repeats what failed. When a Retry fails again, focus lands on the new
// button, so a keyboard user can press it again.
export function renderFailure(box, err, t, retry) {
  const focus = document.activeElement;
  const hadFocus =
    box.contains(focus) || (box.dataset.retried === "1" && (!focus || focus === document.body));
  delete box.dataset.retried;
  const title = document.createElement("p");
  title.className = "net-title";
  title.textContent = t(`net.${err.type}.title`);
  const text = document.createElement("p");
  text.textContent = t(`net.${err.type}`, { seconds: err.seconds ?? "" });
  const button = document.createElement("button");
  button.type = "button";
  button.className = "retry";
  button.textContent = t("net.retry");
  button.addEventListener("click", () => {
    box.dataset.retried = "1";
    button.disabled = true;
    button.textContent = t("net.retrying");
    retry();
  });
  box.replaceChildren(title, text, button);
  box.hidden = false;
  if (hadFocus) button.focus();
}

// A result that no longer answers the latest request stays on screen, dimmed and labelled.
export function markStale(el, label) {
  el.classList.toggle("stale", Boolean(label));
  el.querySelector(":scope > .stale-note")?.remove();
  if (!label) return;
  const note = document.createElement("p");
  note.className = "stale-note";
  note.textContent = label;
  el.prepend(note);
}
