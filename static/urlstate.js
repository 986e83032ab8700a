// Page state in location.hash, driven by one field table (tensorflow/playground's PROPS):
//   [{name: "lr", type: Number, default: 0.1},
//    {name: "code", type: String, default: "", compress: true}]
// Only values that differ from their default are written, so a link stays short. A field marked
// `compress` is deflated with the browser's CompressionStream when it has one and written under
// "<name>.z"; a browser without it writes and reads the plain text.
//
// The address is the view: the header's language and presentation links carry it along, and a
// page follows it when it changes (a link pasted into the tab, the class mode's teacher).

const ZIPPED = ".z";

export async function readState(fields, hash = location.hash) {
  const params = new URLSearchParams(hash.replace(/^#/, ""));
  const state = {};
  for (const field of fields) {
    let raw = params.get(field.name);
    if (field.compress && params.has(field.name + ZIPPED)) {
      raw = await inflate(params.get(field.name + ZIPPED)).catch(() => null);
    }
    state[field.name] = raw === null ? field.default : parse(field, raw);
  }
  return state;
}

export async function writeState(fields, state) {
  const params = new URLSearchParams();
  for (const field of fields) {
    const value = state[field.name];
    if (value === undefined || value === null || value === field.default) continue;
    const text = field.type === Boolean ? (value ? "1" : "0") : String(value);
    if (field.compress && "CompressionStream" in window) {
      params.set(field.name + ZIPPED, await deflate(text));
    } else {
      params.set(field.name, text);
    }
  }
  const hash = params.toString();
  const url = location.pathname + location.search + (hash ? "#" + hash : "");
  // replaceState: stepping through backward should not fill the back button's history.
  history.replaceState(null, "", url);
  carryHash();
  return url;
}

// The language and presentation links change only the query: give them this view's hash, so
// that switching either keeps the example, the step, the story and the lesson.
export function carryHash() {
  for (const link of document.querySelectorAll(".top a.lang, .top a.present-toggle")) {
    const target = new URL(link.getAttribute("href"), location.href);
    target.hash = location.hash;
    link.setAttribute("href", target.search + target.hash);
  }
}

// Call onChange(state) whenever the address changes under the page (hashchange: our own writes
// use replaceState and fire none), with the state it now holds.
export function followHash(fields, onChange) {
  window.addEventListener("hashchange", async () => {
    carryHash();
    onChange(await readState(fields));
  });
  carryHash();
}

// The names whose values differ between two states.
export function changed(fields, a, b) {
  return new Set(fields.filter((f) => a[f.name] !== b[f.name]).map((f) => f.name));
}

function parse(field, raw) {
  if (field.type === Number) {
    const n = Number(raw);
    return Number.isFinite(n) ? n : field.default;
  }
  if (field.type === Boolean) return raw === "1" || raw === "true";
  return raw;
}

async function deflate(text) {
  const stream = new Blob([text]).stream().pipeThrough(new CompressionStream("deflate-raw"));
  const bytes = new Uint8Array(await new Response(stream).arrayBuffer());
  let binary = "";
  for (const b of bytes) binary += String.fromCharCode(b);
  return btoa(binary).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

async function inflate(encoded) {
  const binary = atob(encoded.replace(/-/g, "+").replace(/_/g, "/"));
  const bytes = Uint8Array.from(binary, (c) => c.charCodeAt(0));
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate-raw"));
  return new Response(stream).text();
}
