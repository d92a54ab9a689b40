// The caution that every timed table carries where its own numbers are noisy: a speedup that moved
// 1.6× between two runs, or a chain of 5 timed cheaper than one token, must not be read as a
// finding. One test for a spread (the interquartile range over half the value), one for a
// difference a sentence may state (beyond both spreads), and one note, in both languages.
import { tr } from './i18n.js';

/** Whether a timed `value` spread over more than half itself (its IQR) between repeats. */
export const spread = (value, iqr) => iqr > 0.5 * Math.abs(value);

/** Whether `a` exceeds `b` by more than half of each one's spread (IQR): their middle halves,
 * centred on the medians, do not overlap; what a sentence may call larger, faster or slower. With
 * no spread known (null), any difference over 5% counts. */
export function beyond(a, aIqr, b, bIqr) {
  if (aIqr == null || bIqr == null) return a > b * 1.05;
  return a - b > (aIqr + bIqr) / 2 && a > b * 1.02;
}

/** The note before a timed table whose numbers are noisy: `what` lists, as [en, zh] pairs, what
 * was seen (empty: no note); `cls` its class; `calls`: how long one call takes (µs), which says
 * what is likely to have moved them. */
export function noisyNote(cls, what, callUs = null) {
  if (!what.length) return '';
  const en = what.map(([e]) => e).join('; ');
  const zh = what.map(([, z]) => z).join('；');
  const short = callUs != null && callUs < 1000;
  const why = short
    ? tr('Its calls take microseconds, so a busy device or the browser still compiling the engine moves them', '每次调用不到一毫秒，设备忙或浏览器还在编译引擎都会影响它')
    : tr('Something else may have used this device, or the browser was still compiling the engine', '可能有别的工作占用了设备，或者浏览器还在编译引擎');
  return tr(`<p class="note noisy ${cls}">Noisy: ${en}. ${why}; the sentences here rest on these numbers: measure again when the device is quiet, with more prompts, before reading much into them.</p>`,
    `<p class="note noisy ${cls}">噪声大：${zh}。${why}；这里的结论以这些数为依据：等设备空闲时多用些提示词再测一次，再下结论。</p>`);
}
