// The graph as drawn, as an SVG file a slide can hold: Plotly's own SVG of the figure, with
// the labels' font embedded (static/vendor/fonts: DejaVu Sans, cut to the characters a graph
// uses), so it reads the same on a machine that lacks the font. The PNG is that SVG drawn on a
// canvas, so both files show the same letters, whatever fonts the machine has.
//
// The figure draws no UI string; Chinese in it comes from the learner's program (a tensor,
// module or Function named in Chinese). When there is some, Noto Sans CJK SC joins the same
// family for the CJK blocks only (unicode-range), cut to the characters of the lab's Chinese
// strings (scripts/cut_cjk_font.py), which are the words learners name things with. A
// character outside that cut is drawn in the viewer's own font: the export names it.

const LATIN = [
  ["lab-sans.woff", "normal"],
  ["lab-sans-bold.woff", "bold"],
];
const CJK_FONTS = [
  ["lab-sans-sc.woff", "normal"],
  ["lab-sans-sc-bold.woff", "bold"],
];
const CJK_CHARS = "lab-sans-sc.chars.txt"; // the characters the cut holds, written with it
const CJK_RANGE = "U+2E80-9FFF,U+F900-FAFF,U+FE30-FE4F,U+FF00-FFEF,U+20000-2FA1F";
// The same blocks as a character class: [\u{2E80}-\u{9FFF}...]
const CJK = new RegExp(`[${CJK_RANGE.replace(/U\+(\w+)-(\w+),?/g, "\\u{$1}-\\u{$2}")}]`, "u");
const FAMILY = "Gradient Lab Sans";

async function dataUrl(url) {
  const blob = await (await fetch(url)).blob();
  return new Promise((resolve) => {
    const reader = new FileReader();
    reader.onload = () => resolve(reader.result);
    reader.readAsDataURL(blob);
  });
}

const face = async (fontBase, [file, weight], range) =>
  `@font-face{font-family:"${FAMILY}";font-weight:${weight};` +
  (range ? `unicode-range:${range};` : "") +
  `src:url(${await dataUrl(fontBase + file)}) format("woff")}`;

// The CJK characters the figure's text draws, each once, in code point order.
function cjkOf(svg) {
  const doc = new DOMParser().parseFromString(svg, "image/svg+xml");
  const text = [...doc.querySelectorAll("text")].map((el) => el.textContent).join("");
  return [...new Set([...text].filter((c) => CJK.test(c)))].sort();
}

// The SVG text of the figure in `el`, at its size on screen, fonts embedded, and the CJK
// characters of its text that no embedded font holds.
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
  const cjk = cjkOf(svg);
  const faces = await Promise.all(LATIN.map((font) => face(fontBase, font)));
  let missing = [];
  if (cjk.length) {
    faces.push(...(await Promise.all(CJK_FONTS.map((font) => face(fontBase, font, CJK_RANGE)))));
    const held = new Set(await (await fetch(fontBase + CJK_CHARS)).text());
    missing = cjk.filter((c) => !held.has(c));
  }
  svg = svg.replace(
    /font-family:\s*[^;"]+/g,
    `font-family: '${FAMILY}', 'DejaVu Sans', sans-serif`,
  );
  svg = svg.replace(/<svg[^>]*>/, (open) => `${open}<style>${faces.join("")}</style>`);
  return { svg, missing };
}

function download(blob, filename) {
  const a = document.createElement("a");
  a.href = URL.createObjectURL(blob);
  a.download = filename;
  a.click();
  URL.revokeObjectURL(a.href);
}

// Downloads the SVG; resolves to the CJK characters drawn in the viewer's own font.
export async function downloadSvg(el, fontBase, filename) {
  const { svg, missing } = await graphSvg(el, fontBase);
  download(new Blob([svg], { type: "image/svg+xml" }), filename);
  return missing;
}

// Downloads the same SVG drawn as a PNG at `scale` times its size on screen (a slide's
// resolution); resolves to the CJK characters drawn in the viewer's own font.
export async function downloadPng(el, fontBase, filename, scale = 2) {
  const { svg, missing } = await graphSvg(el, fontBase);
  const canvas = await drawn(svg, el.clientWidth * scale, el.clientHeight * scale);
  download(await new Promise((resolve) => canvas.toBlob(resolve, "image/png")), filename);
  return missing;
}

// The SVG on a canvas of width × height. An SVG image loads its embedded fonts only once it
// lays out its text, and draws that text invisible until they have come: so it is drawn again
// each frame until two drawings agree (a second at most).
async function drawn(svg, width, height) {
  const image = new Image();
  image.src = URL.createObjectURL(new Blob([svg], { type: "image/svg+xml" }));
  await image.decode();
  const canvas = Object.assign(document.createElement("canvas"), { width, height });
  const context = canvas.getContext("2d", { willReadFrequently: true });
  let before = "";
  for (let frame = 0; frame < 60; frame++) {
    context.clearRect(0, 0, width, height);
    context.drawImage(image, 0, 0, width, height);
    const now = canvas.toDataURL();
    if (now === before) break;
    before = now;
    await new Promise((resolve) => setTimeout(resolve, 16));
  }
  URL.revokeObjectURL(image.src);
  return canvas;
}
