//! How a CPU module runs its matmuls here: the pool of threads of the threaded module
//! (`specdec_kernels::pool`), started by the page's worker, and what this build is.
//!
//! The page builds the CPU module four ways (`scripts/build-wasm.sh`): with or without shared
//! memory and threads (a nightly toolchain, `+atomics`), with or without relaxed-SIMD FMA (the
//! `relaxed` feature). Its worker (`www/worker.js`) picks one, starts `threads − 1` helper
//! workers on the same module and memory, each of which calls [`pool_helper`] and stays there,
//! and then [`pool_start`]. A module without threads answers [`pool_start`] with 1.

use wasm_bindgen::prelude::*;

/// A helper's loop, on its own Web Worker: serves the pool as share `id` (≥ 1) and never returns
/// while the page runs. In a module without threads, an error.
#[wasm_bindgen]
pub fn pool_helper(id: usize) -> Result<(), JsError> {
    #[cfg(target_feature = "atomics")]
    {
        use specdec_kernels::pool::shared::{Futex, POOL};
        POOL.helper::<Futex>(id);
        Ok(())
    }
    #[cfg(not(target_feature = "atomics"))]
    Err(JsError::new(&format!(
        "pool helper {id}: this CPU module has no threads (it was built without shared memory)"
    )))
}

/// Grants the pool `want` threads (this one and helpers 1..want), waiting up to `timeout_ms` for
/// the helpers to come in; returns the threads granted (1 in a module without threads). Call it
/// once, from the worker that runs the jobs, after starting the helpers.
#[wasm_bindgen]
pub fn pool_start(want: usize, timeout_ms: u32) -> usize {
    #[cfg(target_feature = "atomics")]
    {
        use specdec_kernels::pool::shared::{Futex, POOL};
        POOL.start::<Futex>(want, timeout_ms)
    }
    #[cfg(not(target_feature = "atomics"))]
    {
        let _ = (want, timeout_ms);
        1
    }
}

/// Says that a helper died (its worker caught the trap): a job waiting for it panics instead of
/// waiting forever, and the page's worker restarts with a fresh instance.
#[wasm_bindgen]
pub fn pool_poison() {
    #[cfg(target_feature = "atomics")]
    {
        use specdec_kernels::pool::shared::{Futex, POOL};
        POOL.poison::<Futex>();
    }
}

/// What this module is and runs on now: `{ pool, split_from, threaded, fma, kernel }` — the
/// threads a large matmul is split across, the weights from which a matmul is split, whether the
/// build has threads at all, whether its multiply-adds are fused, and the matmul's back-end in
/// words.
#[wasm_bindgen]
pub fn execution() -> JsValue {
    let o = js_sys::Object::new();
    let set = |k: &str, v: JsValue| {
        let _ = js_sys::Reflect::set(&o, &k.into(), &v);
    };
    set("pool", (specdec_kernels::threads() as u32).into());
    set(
        "split_from",
        (specdec_kernels::matmul::SPLIT_WEIGHTS as u32).into(),
    );
    set("threaded", cfg!(target_feature = "atomics").into());
    set("fma", specdec_kernels::fused().into());
    set("kernel", specdec_kernels::kernel_path().into());
    o.into()
}
