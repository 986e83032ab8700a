// A race's setup from the page's state: the surface to ask for and its ranges, the start, the
// runs, a story's setup, and a surface's formula as it can be typed back. Plain functions.

import { page } from "../page.js";

export const SURFACES = Object.fromEntries(page.surfaces.map((s) => [s.name, s]));
export const PRESETS = Object.fromEntries(page.presets.map((p) => [p.id, p]));
const CUSTOM_RANGE = [-3, 3];

// The fields a story sets (its surface, start, steps and runs).
export function presetState(id) {
  const preset = PRESETS[id];
  if (!preset) return {};
  return {
    preset: id,
    surface: preset.surface,
    expr: "",
    noise: preset.noise ?? 0,
    sweep: false,
    steps: preset.steps,
    start: preset.start.join(","),
    runs: JSON.stringify(preset.runs),
    param: preset.params && SURFACES[preset.surface] ? String(Object.values(preset.params)[0]) : "",
  };
}

export function surfaceBody(state) {
  if (state.surface === "custom") return { surface: { expr: state.expr } };
  const surface = SURFACES[state.surface];
  const names = Object.keys(surface.params);
  const value = Number(state.param);
  const params =
    names.length && state.param !== "" && Number.isFinite(value) ? { [names[0]]: value } : {};
  return { surface: state.surface, params };
}

export function ranges(state) {
  const surface = SURFACES[state.surface];
  return surface
    ? { x_range: surface.x_range, y_range: surface.y_range }
    : { x_range: CUSTOM_RANGE, y_range: CUSTOM_RANGE };
}

export function startPoint(state) {
  const parts = state.start.split(",").map(Number);
  if (parts.length === 2 && parts.every(Number.isFinite)) return parts;
  return SURFACES[state.surface]?.start ?? [1, 1];
}

export function runsList(state) {
  try {
    const runs = JSON.parse(state.runs || "[]");
    if (Array.isArray(runs) && runs.length) return runs;
  } catch {
    /* a hand-edited link: fall back to one plain run */
  }
  return [{ optimizer: "adam", lr: 0.05 }];
}

// The formula as it can be typed back: a parameter's name replaced by its value.
export function formulaOf(surface, param) {
  let text = surface.formula;
  const given = Number(param);
  for (const [name, value] of Object.entries(surface.params)) {
    text = text.replace(
      new RegExp(`\\b${name}\\b`, "g"),
      String(param !== "" && Number.isFinite(given) ? given : value),
    );
  }
  return text;
}
