// The small HTML helpers that the widgets, the export menu, the widget reference and the custom
// element share: escaping text for markup, a table from rows of cells, numbers and durations
// written for a person. Nothing here touches the page or the engine; it only returns strings.
import { tr } from './i18n.js';

/** `text` cut to its first `n` characters, whole ones (an emoji is one), with "…" where it was
 * cut: how a message quotes what someone typed. */
export function clip(text, n = 40) {
  const chars = [...String(text)];
  return chars.length > n ? `${chars.slice(0, n).join('')}…` : chars.join('');
}

export function escapeHtml(s) {
  return s.replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch]);
}

/**
 * A text from the core with exponents and indices typeset: escaped, then `x^{γ+1}`, `α^i` and
 * `Σ_{i=0}` written as superscripts and subscripts, so that a reader never sees the markup.
 */
export function typeset(text) {
  return escapeHtml(String(text))
    .replace(/\^\{([^{}]*)\}/g, '<sup>$1</sup>')
    .replace(/_\{([^{}]*)\}/g, '<sub>$1</sub>')
    .replace(/(?<=[\p{L}\p{N})])\^([\p{L}\p{N}]+)/gu, '<sup>$1</sup>');
}

/** A small HTML table from rows of cells; the first row is the header. */
export function table(rows, cls = '') {
  const [head, ...body] = rows;
  const th = head.map((h) => `<th>${h}</th>`).join('');
  const tb = body.map((r) => `<tr>${r.map((c) => `<td>${c}</td>`).join('')}</tr>`).join('');
  // In a box of its own that scrolls sideways when the table is wider than the widget (a phone).
  return `<div class="table-scroll"><table class="${cls}"><thead><tr>${th}</tr></thead><tbody>${tb}</tbody></table></div>`;
}

export function fmt(x, digits = 3) {
  if (x === null || x === undefined) return '∞';
  if (x !== 0 && (Math.abs(x) < 1e-3 || Math.abs(x) >= 1e6)) return x.toExponential(2);
  return x.toFixed(digits);
}

/** How long a job took, for a person: milliseconds under a second ("0.0 s" said nothing). */
export function duration(ms) {
  if (ms < 1) return tr('under 1 ms', '不到 1 毫秒');
  if (ms < 999.5) return tr(`${Math.round(ms)} ms`, `${Math.round(ms)} 毫秒`);
  return tr(`${(ms / 1000).toFixed(1)} s`, `${(ms / 1000).toFixed(1)} 秒`);
}

