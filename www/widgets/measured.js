// The roofline measured on this device (lecture §1.2, demo 1 measured): the time of one call of
// the target against the tokens k it feeds, beside the floor and the slope that this device's own
// bandwidth and peak draw under it. The target can be widened (its answers stay the trained
// target's) until one call reads as many bytes as a real model's step. Runs in a worker, and only
// when asked: a measurement takes this device's CPU for a while and is disturbed by other work.
import { fmt, table, escapeHtml } from '../html.js';
import { runInWorker } from '../runbar.js';
import { tr } from '../i18n.js';
import { backendOptions, declare, menuOptions, targetSize, widthOptions } from '../engine.js';
import { crossingHtml, offloads, weightsControl } from './offload.js';

/** µs in a table: one decimal below 100 µs, none above. */
const num = (t) => t.toFixed(t >= 100 ? 0 : 1);
const us = (t) => (t >= 10_000 ? `${fmt(t / 1000, 1)} ms` : `${fmt(t, 0)} µs`);

/** "verification is almost free up to k ≈ N", from the measured knee. */
function kneeSentence(v) {
  const last = Math.max(...v.rows.map((p) => p.k));
  if (v.knee_k == null) {
    return tr(`On this device verification is almost free <b>beyond k = ${last}</b>: no call of up to ${last} tokens took 1.25× the time of a one-token call.`,
      `在这台设备上，验证直到 <b>k = ${last} 以后</b>都几乎不要钱：最多 ${last} 个 token 的调用，没有一次用到一个 token 调用的 1.25 倍时间。`);
  }
  if (v.knee_k < 2) {
    return tr('On this device verification is <b>not free</b>: already two tokens in a call cost more than 1.25× one.',
      '在这台设备上，验证<b>并不免费</b>：一次调用里放两个 token，花的时间就已经是一个 token 的 1.25 倍以上。');
  }
  const n = fmt(v.knee_k, 1);
  return tr(`On this device verification is almost free <b>up to k ≈ ${n}</b>, where T(k) reaches 1.25·T(1) (the red line): until there, a call of k tokens costs less than 1.25× a call of one.`,
    `在这台设备上，验证<b>直到 k ≈ ${n}</b> 都几乎不要钱，在那里 T(k) 达到 1.25·T(1)（红线）：在那之前，k 个 token 的一次调用不到一个 token 调用的 1.25 倍。`);
}

/** Why T(1) sits where it does against the memory floor, in the student's words. Whether the extra
 * tokens are free is the knee sentence's to say: this one speaks of k = 1 only. */
export function floorSentence(v) {
  const t1 = v.rows.find((p) => p.k === 1)?.median_us;
  if (t1 == null) return '';
  if (v.transfer) {
    return tr(`With the weights offloaded, every call first pays their crossing (below); the memory floor and the column “× memory floor” count only reading the weights already on the device.`,
      '权重卸载时，每次调用都要先付一次传输（见下）；访存下限和“× 访存下限”这一列只算读取已经在设备上的权重。');
  }
  const over = t1 / v.memory_floor_us;
  if (over > 3 && v.backend === 'wgpu') {
    return tr(`A one-token call takes ${fmt(over, 1)}× the memory floor: on a GPU a call’s fixed work (its submission, some twenty kernels, the read-back) outweighs reading ${fmt(v.weight_bytes / 1e6, 1)} MB of weights.`,
      `一个 token 的调用用了访存下限的 ${fmt(over, 1)} 倍：在 GPU 上，一次调用的固定工作（提交、约二十个内核、读回结果）比读 ${fmt(v.weight_bytes / 1e6, 1)} MB 权重更费时。`);
  }
  if (over > 3 && v.width > 1) {
    // A widened target's weights are far larger than a CPU's caches: not the reason here.
    return tr(`A one-token call takes ${fmt(over, 1)}× the memory floor: reading ${fmt(v.weight_bytes / 1e6, 1)} MB of weights explains only part of it; the rest is the call’s other work (attention, the head, small kernels), or this device was busy while it was timed — measure again when it is quiet.`,
      `一个 token 的调用用了访存下限的 ${fmt(over, 1)} 倍：读 ${fmt(v.weight_bytes / 1e6, 1)} MB 权重只解释了其中一部分；其余是调用的其他工作（注意力、输出头、小算子），或者计时时设备正忙——等设备空闲时再测一次。`);
  }
  if (over > 3) {
    return tr(`A one-token call takes ${fmt(over, 1)}× the memory floor: at ${fmt(v.weight_bytes / 1e6, 2)} MB these weights stay in the CPU’s caches, so what a call costs is its fixed work (small kernels, the read-back), not reading the weights. Widen the target to see the floor.`,
      `一个 token 的调用用了访存下限的 ${fmt(over, 1)} 倍：${fmt(v.weight_bytes / 1e6, 2)} MB 的权重一直待在 CPU 的缓存里，所以一次调用的开销是它的固定工作（小算子、读回结果），而不是读权重。把目标模型加宽，就能看到这条下限。`);
  }
  return tr(`A one-token call takes ${fmt(over, 2)}× the memory floor: reading ${fmt(v.weight_bytes / 1e6, 1)} MB of weights is most of what it costs (memory-bound).`,
    `一个 token 的调用用了访存下限的 ${fmt(over, 2)} 倍：读 ${fmt(v.weight_bytes / 1e6, 1)} MB 权重就是它开销的大头（访存受限）。`);
}

/** Points under the memory floor: the weights came from a cache faster than memory, or the bandwidth
 * was timed while the device was busy. */
function busySentence(v) {
  const under = v.rows.filter((p) => p.median_us < 0.8 * v.memory_floor_us).map((p) => p.k);
  if (!under.length) return '';
  return tr(` <b>k = ${under.join(', ')} came out under the memory floor</b>: either the ${fmt(v.weight_bytes / 1e6, 1)} MB of weights fit this ${v.backend === 'wgpu' ? 'GPU' : 'CPU'}’s last-level cache, which is faster than memory (the floor is memory’s), or the device was busy while the bandwidth was timed — measure again on a quiet device to tell.`,
    `<b>k = ${under.join('、')} 低于访存下限</b>：要么 ${fmt(v.weight_bytes / 1e6, 1)} MB 的权重装得进这颗 ${v.backend === 'wgpu' ? 'GPU' : 'CPU'} 的末级缓存，比内存快（下限是按内存算的），要么测带宽时设备正忙——在设备空闲时再测一次就能分清。`);
}

/** What makes a measurement noisy: the k whose calls spread over half their median (IQR), and the
 * steps [a, b] of k where T(k) fell by more than a fifth (more tokens cannot cost less). */
export function noisyPoints(rows) {
  const sorted = [...rows].sort((p, q) => p.k - q.k);
  return { spread: sorted.filter((p) => p.iqr_us > 0.5 * p.median_us).map((p) => p.k),
    falls: sorted.slice(1).flatMap((p, i) => (p.median_us < 0.8 * sorted[i].median_us ? [[sorted[i].k, p.k]] : [])) };
}

/** A caution before the conclusions, where the points they rest on are noisy. */
function noisySentence(v) {
  const { spread, falls } = noisyPoints(v.rows);
  if (!spread.length && !falls.length) return '';
  const what = [spread.length ? tr(`at k = ${spread.join(', ')} the calls varied by more than half their median (IQR)`, `k = ${spread.join('、')} 时调用时间的波动（IQR）超过中位数的一半`) : '',
    falls.length ? tr(`T(k) fell from ${falls.map(([a, b]) => `k = ${a} to ${b}`).join(', ')}, though more tokens cannot cost less`, `T(k) 从 ${falls.map(([a, b]) => `k = ${a} 到 ${b}`).join('、')} 反而变小了，而更多的 token 不会更便宜`) : ''].filter(Boolean);
  return tr(`<p class="note mr-noisy">Noisy: ${what.join('; ')}. Something else may have used this device, or the browser was still compiling the engine; the sentences below rest on these points: measure again when it is quiet.</p>`,
    `<p class="note mr-noisy">噪声大：${what.join('；')}。可能有别的工作占用了设备，或者浏览器还在编译引擎；下面的结论以这些点为依据：等设备空闲时再测一次。</p>`);
}

/** The roofline's ridge point (the calibration's: compute time = memory time), which may lie below one token. */
const modelKnee = (v) => (v.model_knee_k < 1 ? tr('below k = 1', '低于 k = 1') : `k ≈ ${fmt(v.model_knee_k, 1)}`);

/** The peak in words: the calibration's, or the rate of the model's own call that beat it (the
 * slope must not run above the points), and whether this page's calibration was reused. */
export function peakText(v) {
  const peak = `<b>${fmt(v.peak_gflops, 1)} GFLOP/s</b>`;
  const from = v.peak_from_k == null ? ''
    : tr(` — the rate of its own k = ${v.peak_from_k} call; the calibration reached only ${fmt(v.calibrated_peak_gflops, 1)} GFLOP/s, and a peak below a call would draw the compute slope above the points, so the slope uses the call’s rate`,
      `——这是它自己 k = ${v.peak_from_k} 那次调用的速率；校准只达到 ${fmt(v.calibrated_peak_gflops, 1)} GFLOP/s，而低于调用速率的峰值会把算力斜线画到实测点上方，所以斜线用调用的速率`);
  return peak + from;
}

/** Said where the calibrations were measured before on this page (they take seconds on an emulated GPU). */
const reusedText = (v) => (v.calibration_reused ? tr(' (calibrated once on this page, reused)', '（这个页面只校准一次，这里沿用）')
  : v.calibration?.took_us == null ? ''
    : v.backend !== 'wgpu' ? tr(`; the calibrations took ${fmt(v.calibration.took_us / 1e6, 1)} s`, `；校准用了 ${fmt(v.calibration.took_us / 1e6, 1)} 秒`)
      : tr(`; the calibrations took ${fmt(v.calibration.took_us / 1e6, 1)} s, once for this page`, `；校准用了 ${fmt(v.calibration.took_us / 1e6, 1)} 秒，这个页面只做一次`));

function clockSentence(v) {
  const coarse = v.clock_resolution_us >= 20;
  const isolated = typeof crossOriginIsolated !== 'undefined' && crossOriginIsolated;
  const why = coarse && !isolated
    ? tr(' — coarse: this page is not cross-origin isolated, so the browser rounds performance.now(); every point is timed over blocks of many calls, so it still holds.',
      '——很粗：这个页面没有跨源隔离，浏览器把 performance.now() 取整了；每个点都是对一组多次调用计时的，所以结果仍然可信。')
    : (coarse ? tr(' — coarse; every point is timed over blocks of many calls.', '——很粗；每个点都是对一组多次调用计时的。') : '');
  return tr(`Measured here on <b>${escapeHtml(v.backend)}</b>: bandwidth <b>${fmt(v.bandwidth_gbs, 1)} GB/s</b> (${v.backend === 'wgpu' ? 'one row through the model’s weight-streaming kernel over 64 MB of weights: what each more such layer adds to a call, without the call’s fixed cost' : 'one row through the weight-streaming matmul over 64 MB of weights, as a decode call reads its weights'}), peak ${peakText(v)}, clock resolution ${fmt(v.clock_resolution_us, 1)} µs${reusedText(v)}${why}`,
    `在这里的 <b>${escapeHtml(v.backend)}</b> 上实测：带宽 <b>${fmt(v.bandwidth_gbs, 1)} GB/s</b>（${v.backend === 'wgpu' ? '让一行输入流过模型自己的权重流式内核、64 MB 权重：每多一层这样的计算，调用多花的时间（不含调用的固定开销）' : '让一行输入流过 64 MB 权重的矩阵乘法，和解码调用读权重的方式一样'}），峰值 ${peakText(v)}，时钟分辨率 ${fmt(v.clock_resolution_us, 1)} µs${reusedText(v)}${why}`);
}

function resultHtml(v) {
  const t1 = v.rows.find((p) => p.k === 1)?.median_us ?? v.rows[0].median_us;
  const rows = v.rows.map((p) => [p.k, num(p.median_us), num(p.iqr_us), fmt(p.median_us / t1, 2), fmt(p.median_us / v.memory_floor_us, 2)]);
  const size = v.params >= 1e6 ? `${fmt(v.params / 1e6, 1)} M` : `${fmt(v.params / 1e3, 0)} k`;
  return noisySentence(v) + `<p class="numbers">${kneeSentence(v)}</p>`
    + `<p class="numbers">${tr(`Target ×${v.width}: ${size} parameters, ${fmt(v.weight_bytes / 1e6, 2)} MB of weights a call; memory floor ${us(v.memory_floor_us)}; the roofline’s ridge point, where its compute time equals its memory time (peak × bytes / (2 · params · bandwidth · batch)), ${modelKnee(v)} — not the red line, which is measured.`,
      `目标模型 ×${v.width}：${size} 个参数，每次调用读 ${fmt(v.weight_bytes / 1e6, 2)} MB 权重；访存下限 ${us(v.memory_floor_us)}；屋顶线的转折点（计算时间等于访存时间：峰值 × 字节 /（2 · 参数 · 带宽 · 批））${modelKnee(v)}——不是红线，红线是实测的。`)}${tr(' ', '')}${floorSentence(v)}${busySentence(v)}</p>`
    + table([tr(['k', 'median (µs)', 'IQR (µs)', 'T(k) / T(1)', '× memory floor'], ['k', '中位数（µs）', 'IQR（µs）', 'T(k) / T(1)', '× 访存下限'])].concat(rows), 'mr-rows')
    + crossingHtml(v.transfer, t1) + `<p class="numbers">${clockSentence(v)}</p>`;
}

export default {
  name: 'measured',
  // It runs the trained models: it mounts once their engine is loaded (app.js, specdec-widget.js).
  models: true,
  title: 'The roofline, measured in this browser',
  intro: 'The same question as the roofline above, asked of this device: how long does one call of the target take when it feeds k tokens at once? '
    + 'The trained target is tiny (85 k parameters, it sits in the cache); widened, it reads as many bytes per step as a real model, and its answers stay the trained target’s. '
    + 'Under the measured points: the memory floor (weight bytes / the bandwidth measured here) and the compute slope (2 · params · k · batch / the peak measured here).',
  title_zh: '在这个浏览器里实测屋顶线',
  intro_zh: '和上面的屋顶线同一个问题，问的是这台设备：目标模型一次调用同时喂 k 个 token，要多长时间？'
    + '训练好的目标模型很小（8.5 万个参数，整个待在缓存里）；加宽以后，它每一步读的字节和真实模型一样多，而它的回答仍然是训练好的目标模型的。'
    + '实测点下面是：访存下限（权重字节 / 这里实测的带宽）和算力斜线（2 · 参数 · k · 批 / 这里实测的峰值）。',
  presets: [
    { label: '×16, batch 1', label_zh: '×16，批 1', values: { width: '16', batch: '1' }, note: '76 MB a call, as a real model’s step: do the first few extra tokens cost little on this device?', note_zh: '每次调用 76 MB，和真实模型的一步一样：在这台设备上，头几个额外的 token 是否花费很少？' },
    { label: '§4.6 · ×16 on WebGPU, weights offloaded', label_zh: '§4.6 · WebGPU 上的 ×16，权重卸载', values: { width: '16', batch: '1', backend: 'wgpu', weights: 'host' },
      note: 'every call first writes the 76 MB of weights into the GPU’s buffers: the crossing is a floor of its own, and T(k)/T(1) flattens', note_zh: '每次调用前先把 76 MB 权重写进 GPU 的缓冲区：传输成了自己的一条下限，T(k)/T(1) 变平' },
    { label: '×1 (the trained target: in cache)', label_zh: '×1（训练好的目标模型：在缓存里）', values: { width: '1', batch: '1' }, note: 'fixed costs, not bytes', note_zh: '固定开销，而不是字节' },
  ],
  controls: [
    declare({ key: 'width', label: 'target width', label_zh: '目标模型宽度', type: 'select', value: '16' }, widthOptions),
    declare({ key: 'batch', label: 'batch', label_zh: '批大小', type: 'select', value: '1' }, menuOptions('batch')),
    declare({ key: 'backend', label: 'backend', label_zh: '后端', type: 'select', value: 'flex' }, backendOptions),
    weightsControl(),
  ],
  // Timing wants a quiet device: the widget waits for Measure even on the course page; once
  // someone has measured, every change of a control measures again (runbar.js).
  asks: true,
  cost: (s) => tr(`times the ×${s.width} target (${targetSize(s.width)}) on ${s.backend} at batch ${s.batch}, for a growing number k of tokens a call: a few seconds at batch 1, up to minutes for ×16–×24 at batch 16–64 (other work on the device disturbs it)`,
    `在 ${s.backend} 上为 ×${s.width} 目标模型（${targetSize(s.width)}）计时，批 ${s.batch}，每次调用的 token 数 k 逐渐增加：批 1 时几秒钟，×16–×24 在批 16–64 时可达几分钟（设备上的其他工作会干扰它）`),
  render() {
    return [`<div class="dec-run"><button type="button" class="mr-go">${tr('Measure', '测量')}</button>
      <p class="numbers mr-status" aria-live="polite"></p>
      <progress class="mr-progress" max="1" value="0" hidden></progress> <button type="button" class="mr-cancel" hidden>${tr('Cancel', '取消')}</button></div>`,
    '<p class="note mr-note" hidden></p>', '<div class="mr-result"></div>', '<p class="numbers mr-during" hidden></p>', '<div class="plots mr-plot"></div>'];
  },
  after(s, ui, view) {
    runInWorker(ui, view, 'mr', 'roofline_measure', { backend: s.backend, width: Number(s.width), batch: Number(s.batch), offload: offloads(s), figure_width: ui.figureWidth() }, 'measure', (v) => {
      view.querySelector('.mr-plot').innerHTML = v.svg;
      view.querySelector('.mr-result').innerHTML = resultHtml(v);
      return tr(`Measured on ${v.backend}.`, `在 ${v.backend} 上测完。`);
    });
  },
};
