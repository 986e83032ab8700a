// Plotly.react, Plotly.relayout and el.on() for the figures static/graph/draw.js builds, drawn
// as SVG. A notebook's output cannot carry plotly.js (4.8 MB) and has no server to fetch it
// from, yet it must draw with the page's own drawing code: draw.js builds the same figure, and
// this draws it. Only what draw.js asks of Plotly is here:
//  - scatter traces: lines (closed and filled with fill: "toself"), arrow markers at the points
//    given a size, and markers+text labels with hover text and customdata for clicks;
//  - layout shapes (rect, circle, path) and annotations (text on a box), in data coordinates;
//  - axis ranges with scaleanchor (one data unit is as wide as it is tall), the y axis reversed;
//  - pan by dragging, zoom with Ctrl (or ⌘) and the wheel (the wheel alone scrolls the
//    notebook), and the plotly_click and plotly_relayout events.
// Sizes Plotly takes in pixels (fonts, markers) become data units at the zoom of each drawing;
// line widths stay in pixels at any zoom (non-scaling strokes), as Plotly's do.

const SVG = "http://www.w3.org/2000/svg";
const DASH = { solid: null, dash: "6 4", dot: "2 3" };

function svg(tag, attrs = {}, parent = null) {
  const el = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs))
    if (value !== null && value !== undefined) el.setAttribute(key, value);
  if (parent) parent.append(el);
  return el;
}

// draw.js writes label and hover text as escaped HTML with <b> and <br>: lines of runs, each
// bold or not, put in with textContent.
function parseText(html) {
  const unescape = (s) =>
    s
      .replace(/&lt;/g, "<")
      .replace(/&gt;/g, ">")
      .replace(/&quot;/g, '"')
      .replace(/&amp;/g, "&");
  return String(html ?? "")
    .split(/<br\s*\/?>/i)
    .map(
      (line) =>
        line.split(/(<\/?b>)/i).reduce(
          (acc, part) => {
            if (/^<b>$/i.test(part)) acc.bold = true;
            else if (/^<\/b>$/i.test(part)) acc.bold = false;
            else if (part)
              acc.runs.push({ text: unescape(part.replace(/<[^>]*>/g, "")), bold: acc.bold });
            return acc;
          },
          { runs: [], bold: false },
        ).runs,
    );
}

const plainText = (html) =>
  parseText(html)
    .map((runs) => runs.map((r) => r.text).join(""))
    .join("\n");

// Lines of text centred on (x, y), `size` data units tall.
function textBlock(parent, x, y, html, size, color, attrs = {}) {
  const lines = parseText(html);
  const text = svg(
    "text",
    {
      x,
      y,
      "font-size": size,
      fill: color,
      "text-anchor": "middle",
      "dominant-baseline": "central",
      ...attrs,
    },
    parent,
  );
  lines.forEach((runs, i) => {
    runs.forEach((run, j) => {
      const span = svg(
        "tspan",
        j === 0 ? { x, dy: i === 0 ? `${-(lines.length - 1) * 0.6}em` : "1.2em" } : {},
        text,
      );
      if (run.bold) span.setAttribute("font-weight", "bold");
      span.textContent = run.text;
    });
    if (!runs.length)
      svg("tspan", { x, dy: i === 0 ? `${-(lines.length - 1) * 0.6}em` : "1.2em" }, text);
  });
  return text;
}

// Each run of points between nulls.
function runs(xs, ys) {
  const out = [[]];
  xs.forEach((x, i) => {
    if (x === null || ys[i] === null) out.push([]);
    else out.at(-1).push({ x, y: ys[i], i });
  });
  return out.filter((r) => r.length);
}

const pathOf = (points, close) =>
  points.map((p, i) => `${i ? "L" : "M"}${p.x},${p.y}`).join("") + (close ? "Z" : "");

function stroke(line = {}) {
  return {
    stroke: line.color ?? "#444",
    "stroke-width": line.width ?? 2,
    "stroke-dasharray": DASH[line.dash] ?? null,
    "vector-effect": "non-scaling-stroke",
    "stroke-linejoin": "round",
  };
}

// The ranges the element shows: the ones asked for, widened along one axis to the element's
// shape, so that one unit of x is one of y (scaleanchor), as Plotly widens them.
function shown(layout, width, height) {
  const [x0, x1] = layout.xaxis.range;
  const [ya, yb] = layout.yaxis.range;
  const w = Math.abs(x1 - x0) || 1;
  const h = Math.abs(ya - yb) || 1;
  const px = Math.min(width / w, height / h); // pixels per data unit
  const [cx, cy] = [(x0 + x1) / 2, (ya + yb) / 2];
  const [hw, hh] = [width / px / 2, height / px / 2];
  return { x: [cx - hw, cx + hw], y: [cy + hh, cy - hh], px };
}

function drawTrace(g, trace, k) {
  const mode = trace.mode ?? "lines";
  if (mode.includes("lines")) {
    const fill = trace.fill === "toself" ? (trace.fillcolor ?? "none") : "none";
    for (const run of runs(trace.x, trace.y)) {
      svg("path", { d: pathOf(run, trace.fill === "toself"), fill, ...stroke(trace.line) }, g);
    }
  }
  if (!mode.includes("markers") && !mode.includes("text")) return;
  const marker = trace.marker ?? {};
  const sizeOf = (i) => (Array.isArray(marker.size) ? marker.size[i] : (marker.size ?? 6));
  if (marker.symbol === "arrow") {
    // An arrowhead at each point given a size, pointing on from the point before it.
    for (const run of runs(trace.x, trace.y)) {
      run.forEach((p, j) => {
        const size = sizeOf(p.i) * k;
        if (!size || j === 0) return;
        const q = run[j - 1];
        const angle = Math.atan2(p.y - q.y, p.x - q.x);
        const back = (a) => ({
          x: p.x - size * Math.cos(angle + a),
          y: p.y - size * Math.sin(angle + a),
        });
        svg(
          "path",
          {
            d: pathOf([p, back(0.45), back(-0.45)], true),
            fill: marker.color ?? trace.line?.color ?? "#444",
          },
          g,
        );
      });
    }
    return;
  }
  // Labels: an invisible marker to hover and click, the text, and the hover text.
  const font = trace.textfont ?? {};
  trace.x.forEach((x, i) => {
    if (x === null) return;
    const y = trace.y[i];
    const point = svg("g", { class: "textpoint", "data-id": trace.customdata?.[i] ?? null }, g);
    const size = sizeOf(i) * k;
    svg(
      "rect",
      {
        x: x - size / 2,
        y: y - size / 2,
        width: size,
        height: size,
        fill: "transparent",
        class: "hit",
      },
      point,
    );
    if (mode.includes("text") && trace.text?.[i])
      textBlock(point, x, y, trace.text[i], (font.size ?? 12) * k, font.color ?? "#1f2328");
    const hover = trace.hovertext?.[i];
    if (hover) svg("title", {}, point).textContent = plainText(hover);
  });
}

function drawShape(g, shape) {
  const line = stroke(shape.line);
  const fill = shape.fillcolor ?? "none";
  if (shape.type === "path") {
    svg("path", { d: shape.path, fill: "none", ...line }, g);
  } else if (shape.type === "circle") {
    svg(
      "ellipse",
      {
        cx: (shape.x0 + shape.x1) / 2,
        cy: (shape.y0 + shape.y1) / 2,
        rx: Math.abs(shape.x1 - shape.x0) / 2,
        ry: Math.abs(shape.y1 - shape.y0) / 2,
        fill,
        ...line,
      },
      g,
    );
  } else if (shape.type === "rect") {
    svg(
      "rect",
      {
        x: Math.min(shape.x0, shape.x1),
        y: Math.min(shape.y0, shape.y1),
        width: Math.abs(shape.x1 - shape.x0),
        height: Math.abs(shape.y1 - shape.y0),
        fill,
        ...line,
      },
      g,
    );
  }
}

function drawAnnotation(g, note, k) {
  const box = svg("g", { class: "annotation" }, g);
  const size = (note.font?.size ?? 12) * k;
  const bg = svg(
    "rect",
    {
      fill: note.bgcolor ?? "none",
      stroke: note.bordercolor ?? "none",
      "vector-effect": "non-scaling-stroke",
    },
    box,
  );
  const text = textBlock(box, note.x, note.y, note.text, size, note.font?.color ?? "#1f2328");
  // The box fits the text as drawn; an element not on screen measures 0, and gets an estimate.
  let { width, height } = text.getBBox?.() ?? { width: 0, height: 0 };
  if (!width) [width, height] = [plainText(note.text).length * size * 0.6, size * 1.2];
  const pad = (note.borderpad ?? 1) * k;
  Object.entries({
    x: note.x - width / 2 - pad,
    y: note.y - height / 2 - pad,
    width: width + 2 * pad,
    height: height + 2 * pad,
  }).forEach(([key, value]) => bg.setAttribute(key, value));
}

function emit(el, name, event) {
  for (const handler of el._handlers?.[name] ?? []) handler(event);
}

function render(el) {
  const { data, layout } = el._figure;
  const root = el._svg;
  root.replaceChildren();
  if (!layout.xaxis?.range || !layout.yaxis?.range) return;
  const view = shown(layout, el.clientWidth || 600, el.clientHeight || 400);
  el.layout = {
    ...layout,
    xaxis: { ...layout.xaxis, range: view.x },
    yaxis: { ...layout.yaxis, range: view.y },
  };
  root.setAttribute(
    "viewBox",
    `${view.x[0]} ${view.y[1]} ${view.x[1] - view.x[0]} ${view.y[0] - view.y[1]}`,
  );
  const k = 1 / view.px; // data units per pixel
  svg(
    "rect",
    {
      x: view.x[0],
      y: view.y[1],
      width: view.x[1] - view.x[0],
      height: view.y[0] - view.y[1],
      fill: layout.plot_bgcolor ?? "#fff",
      class: "background",
    },
    root,
  );
  const traces = svg("g", { class: "traces" }, root);
  for (const trace of data) drawTrace(traces, trace, k);
  const shapes = svg("g", { class: "shapes" }, root);
  for (const shape of layout.shapes ?? []) drawShape(shapes, shape);
  const notes = svg("g", { class: "annotations" }, root);
  for (const note of layout.annotations ?? []) drawAnnotation(notes, note, k);
}

// Drag to pan, a click to pick the label under the pointer, Ctrl/⌘ + wheel to zoom.
function interact(el) {
  let drag = null;
  let wheelTimer = null;
  const ranges = () => ({ x: [...el.layout.xaxis.range], y: [...el.layout.yaxis.range] });
  const moveTo = ({ x, y }) => {
    el._figure.layout = {
      ...el._figure.layout,
      xaxis: { ...el._figure.layout.xaxis, range: x },
      yaxis: { ...el._figure.layout.yaxis, range: y },
    };
    render(el);
  };
  const relayout = () =>
    emit(el, "plotly_relayout", {
      "xaxis.range": el.layout.xaxis.range,
      "yaxis.range": el.layout.yaxis.range,
    });
  el._svg.addEventListener("pointerdown", (e) => {
    if (!el.layout?.xaxis?.range || e.button !== 0) return;
    drag = { x: e.clientX, y: e.clientY, start: ranges(), moved: false, target: e.target };
    el._svg.setPointerCapture?.(e.pointerId);
  });
  el._svg.addEventListener("pointermove", (e) => {
    if (!drag) return;
    const [dx, dy] = [e.clientX - drag.x, e.clientY - drag.y];
    if (!drag.moved && Math.hypot(dx, dy) < 4) return;
    drag.moved = true;
    const k = (drag.start.x[1] - drag.start.x[0]) / (el.clientWidth || 600);
    moveTo({ x: drag.start.x.map((v) => v - dx * k), y: drag.start.y.map((v) => v - dy * k) });
  });
  el._svg.addEventListener("pointerup", () => {
    const done = drag;
    drag = null;
    if (!done) return;
    if (done.moved) return relayout();
    const id = done.target.closest?.(".textpoint")?.dataset.id;
    if (id) emit(el, "plotly_click", { points: [{ customdata: id }] });
  });
  el._svg.addEventListener(
    "wheel",
    (e) => {
      if (!(e.ctrlKey || e.metaKey) || !el.layout?.xaxis?.range) return;
      e.preventDefault();
      const { x, y } = ranges();
      const box = el._svg.getBoundingClientRect();
      const at = {
        x: x[0] + ((e.clientX - box.left) / box.width) * (x[1] - x[0]),
        y: y[1] + ((e.clientY - box.top) / box.height) * (y[0] - y[1]),
      };
      const f = Math.exp(Math.max(-1, Math.min(1, e.deltaY * 0.002)));
      moveTo({ x: x.map((v) => at.x + (v - at.x) * f), y: y.map((v) => at.y + (v - at.y) * f) });
      clearTimeout(wheelTimer);
      wheelTimer = setTimeout(relayout, 120);
    },
    { passive: false },
  );
}

export const Plotly = {
  react(el, data, layout, config = {}) {
    if (!el._svg) {
      el._svg = svg("svg", {
        class: "svgplot",
        width: "100%",
        height: "100%",
        preserveAspectRatio: "none",
      });
      el.append(el._svg);
      el._handlers = {};
      el.on = (name, handler) => (el._handlers[name] ??= []).push(handler);
      interact(el);
      // responsive: a new size (the notebook's pane, the iframe's first layout) draws the same
      // ranges at it, and says so, as Plotly's resize does.
      let size = [el.clientWidth, el.clientHeight];
      new ResizeObserver(() => {
        if (
          !el._figure.config.responsive ||
          (el.clientWidth === size[0] && el.clientHeight === size[1])
        )
          return;
        size = [el.clientWidth, el.clientHeight];
        render(el);
        if (el.layout?.xaxis?.range) emit(el, "plotly_relayout", { autosize: true });
      }).observe(el);
    }
    el._figure = { data, layout, config };
    render(el);
    return Promise.resolve(el);
  },

  relayout(el, update) {
    const { layout } = el._figure;
    el._figure.layout = {
      ...layout,
      xaxis: { ...layout.xaxis, range: update["xaxis.range"] ?? layout.xaxis.range },
      yaxis: { ...layout.yaxis, range: update["yaxis.range"] ?? layout.yaxis.range },
    };
    render(el);
    emit(el, "plotly_relayout", update);
    return Promise.resolve(el);
  },
};
