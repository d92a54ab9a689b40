// A job's status, and its wording in the page's language.
import { tr } from './i18n.js';

/**
 * A job's status, as the worker reports it: numbers and names, never words. `phase` is one of
 * 'queued', 'waiting' (in the page's queue; `for`: the names of the jobs it waits for), 'started'
 * (the worker has the job), the core's steps (`Step` in
 * crate/src/wasm/jobs.rs: 'loading', 'running', 'timing', 'widening', 'offloading', 'count' with done, total
 * and backend) and the worker's own ('gpu-download', 'weights-download', 'device-lost'), and the page's
 * 'models-download' (the models' module, which a model job waits for). The page words it
 * (`progressText`); as a string (a caption that interpolates it) it reads in the page's language.
 */
export class JobStatus {
  constructor(fields) { Object.assign(this, fields); }

  /** done / total when the job reports a count, else null. */
  get fraction() { return this.phase === 'count' ? this.done / Math.max(1, this.total) : null; }

  toString() { return progressText(this); }
}

const MODEL_NAMES_ZH = { target: '目标模型', 'draft-a': '草稿 A', 'draft-b': '草稿 B' };

/** A job's status in the page's language: "200 of 1000 on flex", "200 / 1000（flex）". */
export function progressText(st) {
  const b = st.backend;
  switch (st.phase) {
    case 'queued': return tr('queued', '排队中');
    case 'waiting': {
      const names = st.for.map((x) => `“${x}”`).join(tr(', ', '、'));
      return tr(`waiting for ${names} to finish`, `等待${names}结束`);
    }
    case 'started': return tr('starting', '正在启动');
    case 'loading': return tr(`loading the models (${b})`, `正在加载模型（${b}）`);
    case 'running': return tr(`running the models on ${b}`, `正在 ${b} 上运行模型`);
    case 'timing': return tr(`timing ${st.model} on ${b}`, `正在 ${b} 上为${MODEL_NAMES_ZH[st.model] ?? st.model}计时`);
    case 'widening': return tr(`widening the target ×${st.width}`, `正在把目标模型加宽 ×${st.width}`);
    case 'offloading': return tr('copying the target’s weights to host memory', '正在把目标模型的权重复制到主机内存');
    case 'count': return b ? tr(`${st.done} of ${st.total} on ${b}`, `${st.done} / ${st.total}（${b}）`)
      : tr(`${st.done} of ${st.total}`, `${st.done} / ${st.total}`);
    case 'gpu-download': return tr('downloading the WebGPU engine', '正在下载 WebGPU 引擎');
    case 'models-download': return tr('downloading the models’ engine and weights', '正在下载模型引擎和权重');
    case 'weights-download': return tr('downloading the drafts’ weights', '正在下载草稿模型的权重');
    case 'device-lost': return tr('the WebGPU device was lost: running again on the CPU (flex)', 'WebGPU 设备丢失：在 CPU（flex）上重新运行');
    default: return String(st.phase ?? '');
  }
}

