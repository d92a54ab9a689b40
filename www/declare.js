// The core's declarations as the page's controls read them (`presets`, modules.js): option lists,
// names in the page's language, sizes, and slider fields read when first needed.
import { declarations } from './modules.js';
import { tr } from './i18n.js';

/** A list of rules the core declares (`variants`; the exactness lab's `rules`, typical acceptance too) as a select's options, as the core names them. */
export const ruleOptions = (list) => ({ options: (d) => d[list].map((v) => [v, v]), options_zh: (d) => d[list].map((v, i) => [v, d[`${list}_zh`][i]]) });
export const variantOptions = ruleOptions('variants');

/** The verification rule `name` (any of `rules`, which hold the `variants`) in the page's language, as the core names it. */
export const variantName = (name) => tr(name, declarations().rules_zh[declarations().rules.indexOf(name)] ?? name);

/** A parameter count as the page writes it: 85 k, 19 M. */
const count = (n) => (n >= 1e7 ? `${Math.round(n / 1e6)} M` : n >= 1e6 ? `${(n / 1e6).toFixed(1)} M` : `${Math.round(n / 1e3)} k`);
/** Bytes as the page writes them: 1.3 MB, 76 MB. */
const megabytes = (b) => (b >= 1e7 ? `${Math.round(b / 1e6)} MB` : `${(b / 1e6).toFixed(1)} MB`);

/**
 * The target's widths as a select's options (`declare(control, widthOptions)`), as the core
 * lists them with their sizes: "×1 (trained, 85 k parameters)", "×16 (19 M parameters, 76 MB a step)".
 */
export const widthOptions = {
  options: (d) => d.widths.map((w) => [String(w.width), w.width === 1 ? `×1 (trained, ${count(w.params)} parameters)`
    : `×${w.width} (${count(w.params)} parameters, ${megabytes(w.step_bytes)} a step)`]),
  options_zh: (d) => d.widths.map((w) => [String(w.width), w.width === 1 ? `×1（训练好的，${count(w.params)} 参数）`
    : `×${w.width}（${count(w.params)} 参数，每步读 ${megabytes(w.step_bytes)}）`]),
};

/** The core's menu `name` (`menus` in presets: a widget's own by widget and control, `roofline.tp`; one several widgets offer by its own name, `backend`, `batch`). */
function menuOf(d, name) {
  const m = d.menus?.[name];
  if (!m) throw new Error(`the core declares no menu “${name}”`);
  return m;
}

/** The core's menu `name` as a select's options, as the core lists and labels them. */
export const menuOptions = (name) => ({
  options: (d) => menuOf(d, name).map((c) => [c.name, c.en]),
  options_zh: (d) => menuOf(d, name).map((c) => [c.name, c.zh]),
});
export const backendOptions = menuOptions('backend');

/** The choice `key` of the core's menu `name` in the page's language, as the core labels it (`key` itself if the menu lacks it). */
export function menuLabel(name, key) {
  const c = menuOf(declarations(), name).find((x) => x.name === key);
  return c ? tr(c.en, c.zh) : key;
}

/** A seed field's bounds, as the core declares the seeds the page offers (`seed`). */
export const seedRange = { min: (d) => d.seed.min, max: (d) => d.seed.max };

/** The target widened ×`width` in words, as the core sizes it: "19 M parameters, 76 MB a step". */
export function targetSize(width) {
  const w = declarations().widths.find((x) => x.width === Number(width));
  if (!w) return '';
  return tr(`${count(w.params)} parameters, ${megabytes(w.step_bytes)} a step`, `${count(w.params)} 参数，每步读 ${megabytes(w.step_bytes)}`);
}

/** The token kind `name` in the page's language, as the core names it. */
export function kindName(name) {
  const k = declarations().token_kinds.find((x) => x.name === name);
  return k ? tr(k.en, k.zh) : name;
}

/**
 * Gives `control` fields read from the core's declarations when they are first needed (a widget
 * mounts once the engine is ready): `fields` maps a field (min, max, options) to a function of
 * the declarations.
 */
export function declare(control, fields) {
  for (const [key, of] of Object.entries(fields)) {
    Object.defineProperty(control, key, { get: () => of(declarations()), enumerable: true, configurable: true });
  }
  return control;
}

/**
 * A slider's fields as the core declares them for `widget` (its entry in `presets`): the bounds
 * of its range `name`, and its default, `defaults[name]` unless `value` reads it otherwise. Use
 * as `declare(control, coreRange('theory', 'alpha'))`; spread it to override one field where the
 * page offers less than the core allows.
 */
export function coreRange(widget, name, value = (defaults) => defaults[name]) {
  return { min: (d) => d[widget][name].min, max: (d) => d[widget][name].max, value: (d) => value(d[widget].defaults) };
}

