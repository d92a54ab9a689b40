// A control's value as a person gives it, read and checked: a number clamped to its range and
// snapped to its step, a choice among its options, a text cut to what a link can carry; each
// with the note that says what was used instead (widget.js shows it in the widget's alert).
import { t, tr } from './i18n.js';
import { clip } from './html.js';

// The notes below name the control by its label in the page's language, and the value used
// instead: read from a URL or an attribute, the nearest good one (`value`); typed, the one the
// widget keeps (`kept`: the run does not change).
export function clampNumber(c, raw, kept) {
  const v = Number(raw);
  const label = t(c, 'label');
  const use = (to) => (kept === undefined ? tr(`using ${to}`, `改用 ${to}`) : tr(`the run keeps ${kept}`, `仍用 ${kept}`));
  // A number too large for a double (1e999) reads as ±Infinity: outside the range, not "not a number".
  if (raw === '' || raw === null || Number.isNaN(v)) {
    // Quoted short, as every message quotes what was typed: a pasted page made an alert 1,800 px tall.
    const typed = clip(raw ?? '');
    return { error: tr(`${label}: “${typed}” is not a number; ${use(c.value)}`, `${label}：“${typed}” 不是数字；${use(c.value)}`), value: c.value };
  }
  if (v < c.min || v > c.max) {
    // As typed: a float would echo twenty nines as 100000000000000000000.
    const [to, typed] = [Math.min(c.max, Math.max(c.min, v)), clip(String(raw).trim())];
    return { error: tr(`${label}: ${typed} is outside ${c.min}…${c.max}; ${use(to)}`, `${label}：${typed} 超出 ${c.min}…${c.max}；${use(to)}`), value: to };
  }
  // Off the control's step (gamma=2.5): snap to the nearest step, as the control itself would.
  if (c.step && c.step !== 'any') {
    const decimals = (String(c.step).split('.')[1] ?? '').length;
    const snapped = Math.min(c.max, Number((c.min + Math.round((v - c.min) / c.step) * c.step).toFixed(decimals)));
    if (Math.abs(snapped - v) > 1e-9 * Math.max(1, Math.abs(v))) {
      return { error: tr(`${label}: ${v} is not on the control’s steps of ${c.step}; ${use(snapped)}`, `${label}：${v} 不在步长为 ${c.step} 的刻度上；${use(snapped)}`), value: snapped };
    }
  }
  return { value: v };
}

/** A raw value (an attribute, a URL parameter) for control `c`: { value, error? }. */
export function parseValue(c, raw) {
  if (c.type === 'range' || c.type === 'number') return clampNumber(c, raw);
  if (c.type === 'select') {
    const ok = c.options.some(([v]) => v === raw);
    const [label, shown] = [t(c, 'label'), clip(raw)];
    // The default by its label in the page's language, and its code, which is what a URL spells;
    // Chinese sets no space before a quotation mark, and one before a bare code.
    const name = t(c, 'options').find(([v]) => v === c.value)?.[1] ?? c.value;
    const [using, usingZh] = name === c.value ? [c.value, ` ${c.value}`] : [`“${name}” (${c.value})`, `“${name}”（${c.value}）`];
    return ok ? { value: raw } : { value: c.value, error: tr(`${label}: “${shown}” is not one of the choices; using ${using}`, `${label}：“${shown}” 不是可选项之一；改用${usingZh}`) };
  }
  const r = capText(raw, c.cap, c.list);
  return r.cut ? { value: r.text, error: cutNote(c, r.text, r.atValue) } : { value: r.text };
}

// One cap for every text a person can type (a control, an exercise's answer), applied as it is
// typed as well as when it is read from a URL or an attribute: at most TEXT_MAX characters, and at
// most TEXT_URL_MAX bytes as a URL spells it. The page writes every control into its URL, and a
// server answers a URL of 16 KB or so with HTTP 431 — for good, since the page would reload it —
// so the thirteen text controls of the course page together stay under 6.5 KB, however they are typed.
// A control whose text is short by nature sets its own smaller cap (`cap`: a list of batches); a
// list of values (`list`) is cut between two values, never inside one.
export const TEXT_MAX = 500;
const TEXT_URL_MAX = 500;
const urlBytes = (ch) => (/^[A-Za-z0-9*\-._ ]$/.test(ch) ? 1 : 3 * new TextEncoder().encode(ch).length);

/**
 * `raw` cut to the cap (`max` characters and URL bytes), never inside a character; a `list` (a
 * control's values separated by commas) takes its Chinese commas as ASCII ones (a URL spells "，"
 * in nine bytes) and is never cut inside a value: { text, cut, atValue (a list cut between two
 * values) }.
 */
export function capText(raw, max = TEXT_MAX, list = false) {
  let text = '';
  let bytes = 0;
  let n = 0;
  for (const ch of list ? String(raw).replaceAll('，', ',') : String(raw)) {
    bytes += urlBytes(ch);
    if (n === max || bytes > Math.min(max, TEXT_URL_MAX)) {
      // A list is cut after its last whole value (here, or at its last comma); one without a
      // comma (one long value) is cut as any text, and refused as out of range.
      const at = text.lastIndexOf(',');
      if (list && ch === ',') return { text, cut: true, atValue: true };
      if (list && at > 0) return { text: text.slice(0, at), cut: true, atValue: true };
      return { text, cut: true, atValue: false };
    }
    text += ch;
    n += 1;
  }
  return { text, cut: false };
}

/** What a person is told when their text was cut (`label` names the field; `atValue`: a list cut between values). */
export function cutNote(c, text, atValue = false) {
  const n = [...text].length;
  const max = c.cap ?? TEXT_MAX;
  const [whole, wholeZh] = atValue ? [', after its last whole value', '，截在最后一个完整的值之后'] : ['', ''];
  return tr(`${t(c, 'label')}: the text was cut to its first ${n} characters${whole} (this field keeps at most ${max}, fewer for characters a link spells out long), so that a link to this page stays short enough to open`,
    `${t(c, 'label')}：文本被截短为前 ${n} 个字符${wholeZh}（这个文本框最多保留 ${max} 个字符，链接里写得长的字符会更少），这样指向本页的链接才不会长到打不开`);
}
