// A helper thread of the CPU module's pool (threads.js): instantiates the module the jobs' worker
// runs on the same shared memory, says so, and enters the core's pool, where it stays while the
// page runs (it is ended with that worker). If it dies there (a trap), it says
// so to the pool, whose waiting job then fails instead of waiting forever. Protocol:
//   worker → helper  { id, module, memory, js }   its share (1, 2, …), the compiled module, the
//                                                 shared memory and the URL of the module's bindings
//   helper → worker  'ready' just before it enters the pool, or { error } if it could not
// The page starts the helpers (engine.js): a helper first gets a port to the worker it serves,
// { port }, and the protocol runs over that port. One the worker had to start itself (threads.js)
// speaks it over its own messages.
let reply = (m) => self.postMessage(m);
const onShare = async ({ data }) => {
  let engine;
  try {
    engine = await import(data.js);
    await engine.default({ module_or_path: data.module, memory: data.memory });
  } catch (e) {
    reply({ error: e?.message ?? String(e) });
    return;
  }
  reply('ready');
  try {
    engine.pool_helper(data.id);
  } catch (e) {
    try { engine.pool_poison(); } catch (_) { /* nothing more to do */ }
    throw e;
  }
};
self.onmessage = ({ data }) => {
  if (data?.port) {
    reply = (m) => data.port.postMessage(m);
    data.port.onmessage = onShare;
  } else onShare({ data });
};
