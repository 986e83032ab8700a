// What every page shares, once: the data the server put in the page, its strings in the page's
// language, numbers as a learner reads them, and a "Copy link" that always answers.
// (Fetching is api.js's; the address is urlstate.js's.)

export const page = JSON.parse(document.getElementById("page-data")?.textContent || "{}");

// The page's string for `key`, with {name} filled from params; `fallback` when it has none.
export function t(key, params = {}, fallback = key) {
  const text = page.strings?.[key];
  if (text === undefined) return fallback;
  return text.replace(/\{(\w+)\}/g, (m, name) => (name in params ? String(params[name]) : m));
}

// The time in ms: in a class, the server's clock as room.js reads it, so that every screen
// plays a race from the moment the teacher pressed Play; alone, this machine's.
export const now = () => (window.gradientLabClock ?? Date.now)();

// JSON has no NaN or infinity: the server spells them "NaN", "Infinity", "-Infinity".
export const num = (v) => (typeof v === "number" ? v : Number(v));

// One number as torch would print it to a learner: integers whole, others to `digits`
// significant digits, very large or small ones in e-notation, nan and inf as Python spells them.
export function fmtNumber(x, digits = 4) {
  if (typeof x === "boolean") return x ? "True" : "False";
  if (x === null || x === undefined) return "—";
  if (typeof x === "string" && !/^-?(NaN|Infinity|[\d.e+-]+)$/.test(x)) return x;
  const n = num(x);
  if (Number.isNaN(n)) return "nan";
  if (!Number.isFinite(n)) return n > 0 ? "inf" : "-inf";
  if (Number.isInteger(n) && Math.abs(n) < 1e9) return String(n);
  const a = Math.abs(n);
  const text =
    a >= 1e-3 && a < 1e4 ? n.toPrecision(digits) : n.toExponential(Math.max(1, digits - 2));
  // 2.500 → 2.5, 1.20e-5 → 1.2e-5
  return text.includes("e")
    ? text.replace(/\.?0+e/, "e")
    : text.replace(/(\.\d*?)0+$/, "$1").replace(/\.$/, "");
}

// Copy `url` and say so next to `button`. The clipboard API exists only on https and localhost;
// on a classroom LAN's plain http the page copies through a selection, and where even that
// fails it shows the link, selected, for the teacher to copy or read out.
export async function copyLink(button, url) {
  let copied = false;
  if (navigator.clipboard && window.isSecureContext) {
    copied = await navigator.clipboard.writeText(url).then(
      () => true,
      () => false,
    );
  }
  if (!copied) copied = copyBySelection(url);
  const note = noteFor(button);
  const field = document.createElement("input");
  field.type = "text";
  field.readOnly = true;
  field.value = url;
  field.setAttribute("aria-label", t("link.field"));
  const text = document.createElement("span");
  text.textContent = copied ? t("link.copied") : t("link.select");
  note.replaceChildren(text, field);
  note.hidden = false;
  note.dataset.copied = copied ? "1" : "0";
  if (!copied) field.select();
  clearTimeout(note.timer);
  note.timer = setTimeout(
    () => {
      note.hidden = true;
    },
    copied ? 4000 : 30000,
  );
}

function copyBySelection(text) {
  const area = document.createElement("textarea");
  area.value = text;
  area.setAttribute("readonly", "");
  area.style.position = "fixed";
  area.style.opacity = "0";
  document.body.append(area);
  const focus = document.activeElement;
  area.select();
  let ok = false;
  try {
    ok = document.execCommand("copy");
  } catch {
    ok = false;
  }
  area.remove();
  focus?.focus?.();
  return ok;
}

// The feedback line that belongs to a Copy link button: made once, just after it.
function noteFor(button) {
  const id = `${button.id}-note`;
  let note = document.getElementById(id);
  if (!note) {
    note = document.createElement("span");
    note.id = id;
    note.className = "link-note";
    note.setAttribute("role", "status");
    button.after(note);
  }
  return note;
}
