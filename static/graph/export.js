// The graph as drawn, as an SVG file a slide can hold: Plotly's own SVG of the figure, with
// the labels' font embedded (static/vendor/fonts: DejaVu Sans, cut to the characters a graph
// uses), so it reads the same on a machine that lacks the font.

const FONTS = [
  ["lab-sans.woff", "normal"],
  ["lab-sans-bold.woff", "bold"],
];
const FAMILY = "Gradient Lab Sans";

async function dataUrl(url) {
  const blob = await (await fetch(url)).blob();
  return new Promise((resolve) => {
    const reader = new FileReader();
    reader.onload = () => resolve(reader.result);
    reader.readAsDataURL(blob);
  });
}

// The SVG text of the figure in `el`, at its size on screen, fonts embedded.
export async function graphSvg(el, fontBase) {
  const url = await Plotly.toImage(el, {
    format: "svg",
    width: el.clientWidth,
    height: el.clientHeight,
  });
  const comma = url.indexOf(",");
  const head = url.slice(0, comma);
  const body = url.slice(comma + 1);
  let svg = head.endsWith(";base64") ? atob(body) : decodeURIComponent(body);
  const faces = await Promise.all(
    FONTS.map(
      async ([file, weight]) =>
        `@font-face{font-family:"${FAMILY}";font-weight:${weight};` +
        `src:url(${await dataUrl(fontBase + file)}) format("woff")}`,
    ),
  );
  svg = svg.replace(
    /font-family:\s*[^;"]+/g,
    `font-family: '${FAMILY}', 'DejaVu Sans', sans-serif`,
  );
  return svg.replace(/<svg[^>]*>/, (open) => `${open}<style>${faces.join("")}</style>`);
}

export async function downloadSvg(el, fontBase, filename) {
  const blob = new Blob([await graphSvg(el, fontBase)], { type: "image/svg+xml" });
  const a = document.createElement("a");
  a.href = URL.createObjectURL(blob);
  a.download = filename;
  a.click();
  URL.revokeObjectURL(a.href);
}
