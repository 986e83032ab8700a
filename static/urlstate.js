// Page state in location.hash, driven by one field table (tensorflow/playground's PROPS):
//   [{name: "lr", type: Number, default: 0.1}, {name: "code", type: String, default: "", compress: true}]
// Only values that differ from their default are written, so a link stays short. A field marked
// `compress` is deflated with the browser's CompressionStream when it has one and written under
// "<name>.z"; a browser without it writes and reads the plain text.

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
  return url;
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
