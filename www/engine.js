// The wasm engine, as the widgets see it: one import for what four files do.
//   modules.js   the lecture's module and the models' CPU module on the main thread: loading,
//                calls, panic recovery, the core's declarations
//   jobs.js      jobs in Web Workers: channels, the page's one queue, timed jobs alone
//   progress.js  a job's status and its wording
//   declare.js   the declarations as the controls read them (options, names, sizes, ranges)
export {
  build, ready, startEngine, modelsReady, startModels, modelsLoaded, retry, call, declarations, panicOnNextCall, PanicError, CancelledError,
} from './modules.js';
export { LoadError, startWorker, runJob, closeChannel, loseDeviceOnNextJob, health } from './jobs.js';
export { JobStatus, progressText } from './progress.js';
export {
  ruleOptions, variantOptions, variantName, widthOptions, menuOptions, menuLabel, backendOptions, seedRange, targetSize, kindName, declare, coreRange,
} from './declare.js';
