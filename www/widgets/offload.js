// Where the models live when the target runs on WebGPU, shared by the widgets that time it.
// Offloading (lecture §4.6; FlexGen, SpecInfer's offloading mode): the control that keeps the
// target's weights in host memory, so that they cross to the GPU before every target call, and the
// sentence that reports the measured crossing. The drafts beside the GPU target (issue 31): on the
// CPU in the worker, where a draft call costs its arithmetic, or on the GPU, where every call pays
// the GPU's fixed cost of a call (c ≈ 0.8 for the trained target on SwiftShader).
import { escapeHtml, fmt } from '../html.js';
import { tr } from '../i18n.js';
import { declare, menuOptions } from '../declare.js';

/** The weights control: on the GPU, or in host memory (WebGPU only: on a CPU backend the weights
 * already live in host memory). `shown(s)` adds the widget's own condition. */
export function weightsControl(shown = () => true) {
  return declare({
    key: 'weights', label: 'target’s weights', label_zh: '目标模型的权重', type: 'select', value: 'gpu',
    showIf: (s) => s.backend === 'wgpu' && shown(s),
  }, menuOptions('gpu.weights'));
}

/** Whether a run with the widget's state `s` offloads the target's weights. */
export const offloads = (s, shown = () => true) => s.backend === 'wgpu' && shown(s) && s.weights === 'host';

/** The measured crossing (`transfer` of a report) beside a one-token target call of `callUs` µs. */
export function crossingHtml(t, callUs) {
  if (!t) return '';
  const ms = fmt(t.crossing.median_us / 1000, 1);
  const mb = fmt(t.bytes / 1e6, t.bytes < 1e7 ? 2 : 1);
  // A call includes its crossing: timed apart (and drained), the crossing may come out longer.
  const share = callUs > 0 ? Math.min(100, Math.round((100 * t.crossing.median_us) / callUs)) : null;
  const of = share == null ? '' : tr(`, ${share}% of a one-token target call`, `，占一次单 token 目标调用的 ${share}%`);
  // A few MB cross in about the time the queue takes to start and finish: latency, not bandwidth.
  const small = t.bytes < 4e6
    ? tr(' At this size the crossing is mostly the queue’s fixed latency, not bandwidth: widen the target (×16: 76 MB) to measure the link.',
      '在这么小的规模下，传输时间主要是队列的固定延迟而不是带宽：把目标模型加宽（×16：76 MB）才能测出链路带宽。')
    : '';
  return `<p class="numbers offload-note">${tr(
    `<b>Offloaded:</b> the target’s ${mb} MB of weights (every parameter, embeddings included) crossed from host memory to the GPU before every target call: ${ms} ms a crossing (${fmt(t.gb_per_s, 2)} GB/s)${of}. Every call saved is a crossing saved (lecture §4.6).${small}`,
    `<b>权重卸载：</b>每次目标调用前，目标模型的 ${mb} MB 权重（全部参数，包括嵌入）从主机内存传到 GPU：每次传输 ${ms} ms（${fmt(t.gb_per_s, 2)} GB/s）${of}。少一次调用就少一次传输（讲义 §4.6）。${small}`)}</p>`;
}

/** The drafts' place beside a WebGPU target: on the CPU (flex, the default) or on the GPU.
 * `shown(s)` adds the widget's own condition (experiments that run a draft model). */
export function draftsControl(shown = () => true) {
  return declare({
    key: 'drafts', label: 'draft models', label_zh: '草稿模型', type: 'select', value: 'cpu',
    showIf: (s) => s.backend === 'wgpu' && shown(s),
  }, menuOptions('gpu.drafts'));
}

/** The drafts' backend for a run with the widget's state `s` (undefined: the target's). */
export const draftsOn = (s, shown = () => true) => (s.backend === 'wgpu' && shown(s) && s.drafts !== 'gpu' ? 'flex' : undefined);

/** What a timed report `r` says when its drafts ran apart from the target (`r.drafts_on`). */
export function draftsHtml(r) {
  if (!r?.drafts_on) return '';
  return `<p class="numbers drafts-note">${tr(
    `<b>Drafts on the CPU:</b> the draft ran on ${escapeHtml(r.drafts_on)} in this worker while the target ran on WebGPU, so c = ${fmt(r.c, 3)} is a draft’s CPU time over the target’s GPU step. With the drafts on the GPU too, a draft call pays the fixed cost of a GPU call as the target’s does: run it again that way to compare.`,
    `<b>草稿在 CPU 上：</b>草稿在这个 worker 里的 ${escapeHtml(r.drafts_on)} 上运行，目标模型在 WebGPU 上运行，所以 c = ${fmt(r.c, 3)} 是草稿的 CPU 时间比目标模型的一步 GPU 时间。草稿也放在 GPU 上时，每次草稿调用都要像目标模型一样付一次 GPU 调用的固定开销：那样再跑一次来对比。`)}</p>`;
}
