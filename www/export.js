// A widget's export menu: every figure as SVG and PNG, every table as CSV (with the UTF-8 byte
// order mark, and a column of "208 (352)" cells split in two), drawn from what the view shows now.
import { inLang, lang, tr } from './i18n.js';
import { escapeHtml } from './html.js';

/**
 * Fills `list` with what the view shows now: every figure as SVG and PNG, every table as CSV. A
 * stack of layers (a heat map and its marker) exports as one picture.
 */
export function listExports(widget, view, list) {
  list.replaceChildren();
  const language = lang(); // the widget's (i18n.js), for a failure told after the listing
  const item = (text, buttons) => {
    const li = document.createElement('li');
    li.append(text);
    for (const [label, run] of buttons) {
      const b = document.createElement('button');
      b.type = 'button';
      b.textContent = label;
      b.dataset.format = label.toLowerCase();
      b.addEventListener('click', async () => {
        try {
          await run();
        } catch (e) {
          li.append(inLang(language, () => tr(` (could not export: ${e?.message ?? e})`, `（无法导出：${e?.message ?? e}）`)));
        }
      });
      li.append(' ', b);
    }
    list.append(li);
  };
  const figures = [...view.children].flatMap((part) => (part.classList.contains('stack')
    ? [[...part.querySelectorAll(':scope > .part svg')]]
    : [...part.querySelectorAll('svg')].map((svg) => [svg])));
  figures.forEach((layers, i) => {
    const name = `${widget.name}-figure-${i + 1}`;
    const title = layers[0].getAttribute('aria-label') || tr(`figure ${i + 1}`, `图 ${i + 1}`);
    item(tr(`Figure ${i + 1}: ${title}`, `图 ${i + 1}：${title}`), [
      ['SVG', () => download(`${name}.svg`, new Blob([svgFile(layers)], { type: 'image/svg+xml' }))],
      ['PNG', async () => download(`${name}.png`, await pngOf(layers))],
    ]);
  });
  [...view.querySelectorAll('table')].forEach((table, i) => {
    item(tr(`Table ${i + 1}`, `表 ${i + 1}`), [['CSV', () => download(`${widget.name}-table-${i + 1}.csv`, new Blob([csvOf(table)], { type: 'text/csv' }))]]);
  });
  if (!list.children.length) item(tr('Nothing to export yet.', '还没有可导出的内容。'), []);
}

/** One standalone SVG file from a picture's layers (drawn in order on one canvas). */
function svgFile(layers) {
  const [first] = layers;
  const w = first.getAttribute('width');
  const h = first.getAttribute('height');
  // XML, not HTML, serialisation: an SVG file must parse as XML (no &nbsp; and the like).
  const xml = new XMLSerializer();
  const body = layers.map((svg) => {
    const inner = svg.cloneNode(true);
    inner.removeAttribute('role');
    return xml.serializeToString(inner);
  }).join('\n');
  const label = escapeHtml(first.getAttribute('aria-label') ?? '');
  return `<?xml version="1.0" encoding="UTF-8"?>\n<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}"><title>${label}</title>\n${body}\n</svg>\n`;
}

/** The picture as a PNG at twice its size, on white. */
async function pngOf(layers) {
  const text = svgFile(layers);
  const img = new Image();
  img.src = `data:image/svg+xml;charset=utf-8,${encodeURIComponent(text)}`;
  await img.decode();
  const scale = 2;
  const canvas = document.createElement('canvas');
  canvas.width = Number(layers[0].getAttribute('width')) * scale;
  canvas.height = Number(layers[0].getAttribute('height')) * scale;
  const g = canvas.getContext('2d');
  g.fillStyle = '#fff';
  g.fillRect(0, 0, canvas.width, canvas.height);
  g.drawImage(img, 0, 0, canvas.width, canvas.height);
  return new Promise((ok, fail) => canvas.toBlob((b) => (b ? ok(b) : fail(new Error(tr('the browser made no PNG', '浏览器没有生成 PNG')))), 'image/png'));
}

// A cell that shows two numbers, "208 (352)", and a header that names the second in parentheses,
// "target calls (alone)": a spreadsheet wants them in two columns.
const PAIR = /^(\S+)\s*[(（]([^()（）]+)[)）]$/;
const NAMED = /^(.+?)\s*[(（]([^()（）]+)[)）]$/;
const NUMBER = /^[-+]?\d[\d.,]*(e[-+]?\d+)?[%×]?$/i;

/**
 * A table as CSV (RFC 4180 quoting), one line per row, header first, with the UTF-8 byte order
 * mark (without it spreadsheet programs read α and γ as Latin-1). A column whose every cell is a
 * number with a second in parentheses is split in two.
 */
export function csvOf(table) {
  const rows = [...table.rows].map((r) => [...r.cells].map((c) => c.textContent.replace(/\s+/g, ' ').trim()));
  const [head, ...body] = rows;
  const pair = (t) => { const m = PAIR.exec(t); return m && NUMBER.test(m[1]) && NUMBER.test(m[2]) ? [m[1], m[2]] : null; };
  const split = (head ?? []).map((h, j) => body.length > 0 && NAMED.test(h) && body.every((r) => pair(r[j] ?? '')));
  const out = rows.map((r, i) => r.flatMap((t, j) => {
    if (!split[j]) return [t];
    if (i > 0) return pair(t);
    return [NAMED.exec(t)[1], t];
  }));
  const quote = (t) => (/[",\n]/.test(t) ? `"${t.replace(/"/g, '""')}"` : t);
  return `\uFEFF${out.map((r) => r.map(quote).join(',')).join('\r\n')}\r\n`;
}

function download(name, blob) {
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = name;
  a.hidden = true;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(a.href), 60_000);
}
