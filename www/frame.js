// Layout is read once a frame for every widget on the page, never once per widget. A widget asks
// for what it must measure (its view's width, whether its boxes scroll) and says what it will
// then write; one requestAnimationFrame runs every widget's reads first, against a single layout,
// then every write. Measured per widget, each read came after another widget's write and forced
// a layout of the whole page: 212–380 ms of long tasks at every load of the course page.

import { tr } from './i18n.js';

const queued = new Map(); // key → { read, write }: the latest asked for each key this frame
let asked = false;

/**
 * Runs `read()` in the next frame's reading pass and `write(value)` with what it returned in the
 * writing pass after it; a second request under the same `key` before that frame replaces the
 * first.
 */
export function inNextFrame(key, read, write) {
  queued.set(key, { read, write });
  if (asked) return;
  asked = true;
  requestAnimationFrame(() => {
    asked = false;
    const jobs = [...queued.values()];
    queued.clear();
    const values = jobs.map((j) => j.read());
    jobs.forEach((j, i) => j.write(values[i]));
  });
}

/**
 * The room for a figure in `view` (its width less a figure's border), in CSS px; undefined while
 * the view is not laid out (hidden, or not yet in the page). A read: call it in a reading pass,
 * or where nothing was written since the last layout.
 */
export function figureRoom(view) {
  return view.clientWidth > 0 ? Math.floor(view.clientWidth) - 2 : undefined;
}

/**
 * A box that scrolls sideways (a wide table, the heat map) says so while more of it lies out of
 * view: a “scroll →” hint and a fade at its right edge (widget.css); Tab reaches it, and the arrow
 * keys scroll it. A box whose content fits is left plain. Marked in the next frame, with every
 * other view's boxes, in the language `speak` runs in.
 */
export function markScrollers(view, speak) {
  inNextFrame(view, () => [...view.querySelectorAll('.table-scroll, .stack, .scroll-x')]
    .map((box) => [box, box.scrollWidth > box.clientWidth + 1]), speak((boxes) => {
    for (const [box, more] of boxes) {
      if (more === box.classList.contains('scrolls')) continue;
      box.classList.toggle('scrolls', more);
      if (more) {
        box.tabIndex = 0;
        box.setAttribute('role', 'region');
        box.setAttribute('aria-label', box.classList.contains('stack') ? tr('figure, scrolls sideways', '图，可左右滑动') : tr('table, scrolls sideways', '表格，可左右滑动'));
        box.dataset.hint = tr('scroll →', '左右滑动 →');
        box.onscroll = () => box.classList.toggle('at-end', box.scrollLeft + box.clientWidth >= box.scrollWidth - 1);
      } else {
        for (const a of ['tabindex', 'role', 'aria-label', 'data-hint']) box.removeAttribute(a);
        box.onscroll = null;
      }
    }
  }));
}
