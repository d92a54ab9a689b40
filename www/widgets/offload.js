// Offloading (lecture §4.6; FlexGen, SpecInfer's offloading mode), shared by the widgets that time
// the target on WebGPU: the control that keeps its weights in host memory, so that they cross to
// the GPU before every target call, and the sentence that reports the measured crossing.
import { fmt } from '../html.js';
import { tr } from '../i18n.js';

/** The weights control: on the GPU, or in host memory (WebGPU only: on a CPU backend the weights
 * already live in host memory). `shown(s)` adds the widget's own condition. */
export function weightsControl(shown = () => true) {
  return {
    key: 'weights', label: 'target’s weights', label_zh: '目标模型的权重', type: 'select', value: 'gpu',
    options: [['gpu', 'on the GPU'], ['host', 'offloaded: cross to the GPU before every call']],
    options_zh: [['gpu', '在 GPU 上'], ['host', '卸载：每次调用前传到 GPU']],
    showIf: (s) => s.backend === 'wgpu' && shown(s),
  };
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
