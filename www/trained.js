// The draft a student trained in the page (lecture §4.2, the training widget), kept in the
// browser's storage so that it survives a reload: one record in IndexedDB, { bytes (the draft's
// file, as the training module writes it), shape, teacher, steps, seed, check (its last quick
// check), saved (ms since 1970) }. The page and its workers read the same store (a worker has
// IndexedDB too): the decoding widget's worker hands the bytes to the CPU module when a job asks
// for the trained draft. Where the browser keeps no storage (a private window may refuse it),
// every call fails with a message that says so, and the page keeps working.
import { tr } from './i18n.js';

const DB = 'specdec-playground';
const STORE = 'trained-draft';
const KEY = 'draft';

function unavailable(e) {
  return new Error(tr(`this browser keeps no storage for this page (${e?.message ?? e}): the trained draft lasts until the page is closed`,
    `这个浏览器不为本页保存数据（${e?.message ?? e}）：训练好的草稿只保留到页面关闭`));
}

function open() {
  return new Promise((resolve, reject) => {
    let request;
    try {
      request = indexedDB.open(DB, 1);
    } catch (e) {
      reject(unavailable(e));
      return;
    }
    request.onupgradeneeded = () => request.result.createObjectStore(STORE);
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(unavailable(request.error));
  });
}

async function transact(mode, act) {
  const db = await open();
  try {
    return await new Promise((resolve, reject) => {
      const t = db.transaction(STORE, mode);
      const request = act(t.objectStore(STORE));
      t.oncomplete = () => resolve(request.result);
      t.onerror = () => reject(unavailable(t.error));
      t.onabort = () => reject(unavailable(t.error));
    });
  } finally {
    db.close();
  }
}

/** The kept draft's record, or null when none is kept. */
export const loadTrained = () => transact('readonly', (s) => s.get(KEY)).then((r) => r ?? null);

/** Keeps `record` (see the header) in the place of the one kept before. */
export const saveTrained = (record) => transact('readwrite', (s) => s.put(record, KEY));

/** Forgets the kept draft. */
export const forgetTrained = () => transact('readwrite', (s) => s.delete(KEY));
