//! A pool of threads that share one job at a time: the caller runs share 0, each helper the share
//! of its id, and the caller returns once all are done. What splits a weight-streaming matmul by
//! its inputs across the threads of the page's threaded module (lecture §1.2: a memory-bound
//! step costs its weights' bytes over the bandwidth, and one wasm thread does not reach that
//! bandwidth, so the other core's share of it is lost).
//!
//! The protocol needs only atomics and a way to sleep on one (`Park`): in the threaded wasm
//! module, `memory.atomic.wait32` / `notify` on shared memory (the helpers are Web Workers that
//! the page starts and that call [`Pool::helper`], which never returns); in the native tests,
//! spinning threads. A job is published as a pointer to the caller's closure, which lives on
//! the caller's stack until every helper has finished with it:
//! - the caller stores the job, sets `pending` to the helpers' count, bumps `epoch` and wakes
//!   the helpers; it runs share 0, then waits until `pending` is 0;
//! - a helper waits until `epoch` moves past the last one it served, runs its share, and
//!   decrements `pending`, waking the caller when it was the last.
//!
//! Each helper serves every epoch once, and the caller publishes the next job only after all have
//! finished, so a helper never reads a job that is being replaced. The threads granted are set
//! once ([`Pool::start`]) before any job; a helper whose id is beyond them leaves, and so does a
//! second helper with an id already in. A helper that dies poisons the pool
//! ([`Pool::poison`]): the caller panics rather than waiting for it forever.

use core::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, Ordering};

/// The most threads a pool grants (the page asks for at most the browser's cores).
pub const MAX_THREADS: usize = 16;

/// Polls of an atomic before sleeping on it (≈ 1 ms in a browser): a helper between two
/// matmuls of one forward pass (an attention or a LayerNorm apart, tens of µs) catches the next
/// job without a sleep and a wake-up, which cost tens of µs in a browser; a helper idle longer
/// (while the draft runs on the caller's thread, between tokens) sleeps.
const SPIN: u32 = 1 << 20;

/// How a thread sleeps until an atomic changes, and wakes the sleepers.
pub trait Park {
    /// Returns when `a` may no longer hold `expected` (spuriously too), or after `timeout_ms`
    /// (`None`: no limit).
    fn wait(a: &AtomicU32, expected: u32, timeout_ms: Option<u32>);
    /// Wakes every thread waiting on `a`.
    fn wake(a: &AtomicU32);
}

/// The pool's shared state. One `static` per process (see [`POOL`] in the threaded module).
pub struct Pool {
    epoch: AtomicU32,
    pending: AtomicU32,
    /// Bit `id` set: helper `id` has entered [`Pool::helper`].
    helpers: AtomicU32,
    /// Threads granted by [`Pool::start`], the caller's included: 1 until then.
    threads: AtomicU32,
    /// [`Pool::start`] has run: a helper beyond the threads it granted leaves.
    started: AtomicBool,
    /// The job: a pointer to the caller's `&(dyn Fn(usize) + Sync)`.
    job: AtomicPtr<()>,
    stop: AtomicBool,
    /// A helper died ([`Pool::poison`]): a job waiting for it would wait forever.
    poisoned: AtomicBool,
}

type Job<'a> = &'a (dyn Fn(usize) + Sync);

/// How long the caller sleeps at a time while it waits for the helpers, in ms: it then checks
/// whether one died.
const CHECK_MS: u32 = 1000;

/// Checks after which the caller stops waiting for a helper and panics (30 s).
const GIVE_UP: u32 = 30;

impl Pool {
    pub const fn new() -> Pool {
        Pool {
            epoch: AtomicU32::new(0),
            pending: AtomicU32::new(0),
            helpers: AtomicU32::new(0),
            threads: AtomicU32::new(1),
            started: AtomicBool::new(false),
            job: AtomicPtr::new(core::ptr::null_mut()),
            stop: AtomicBool::new(false),
            poisoned: AtomicBool::new(false),
        }
    }

    /// The helpers in [`Pool::helper`] now, or that were: bit `id` for helper `id`.
    pub fn helpers_in(&self) -> u32 {
        self.helpers.load(Ordering::Acquire)
    }

    /// Threads a job runs on: 1 until [`Pool::start`] granted more.
    pub fn threads(&self) -> usize {
        self.threads.load(Ordering::Relaxed) as usize
    }

    /// Grants `want` threads (the caller and `want − 1` helpers, ids 1..want), waiting up to
    /// `timeout_ms` for the helpers to enter [`Pool::helper`]; returns the threads granted: 1 +
    /// the helpers with ids below `want` that came in time, without a gap. Helpers beyond them
    /// leave. Call it from the thread that will run the jobs, before the first; a second call
    /// changes nothing and returns the threads granted by the first.
    pub fn start<P: Park>(&self, want: usize, timeout_ms: u32) -> usize {
        if self.started.load(Ordering::Acquire) {
            return self.threads();
        }
        let want = want.clamp(1, MAX_THREADS) as u32;
        // Threads a mask of entered helpers makes up: the caller and helpers 1, 2, … without a gap.
        let present = |mask: u32| 1 + (mask >> 1).trailing_ones();
        let mut waited = 0;
        loop {
            let mask = self.helpers.load(Ordering::Acquire);
            if present(mask) >= want || waited >= timeout_ms {
                break;
            }
            P::wait(&self.helpers, mask, Some(10));
            waited += 10;
        }
        let granted = present(self.helpers.load(Ordering::Acquire)).min(want);
        self.threads.store(granted, Ordering::Release);
        self.started.store(true, Ordering::Release);
        // Helpers not granted are waiting on the epoch: they wake, see it, and leave.
        P::wake(&self.epoch);
        granted as usize
    }

    /// Runs `job(share)` for every share in 0..[`threads`](Pool::threads), share 0 on this
    /// thread, the others on the helpers, and returns when all have returned.
    ///
    /// # Panics
    /// If a helper died ([`Pool::poison`]) before or while it ran its share.
    pub fn run<P: Park>(&self, job: Job<'_>) {
        let n = self.threads.load(Ordering::Acquire);
        if n <= 1 {
            job(0);
            return;
        }
        assert!(
            !self.poisoned.load(Ordering::Acquire),
            "a helper thread of the matmul pool died"
        );
        let helpers = n - 1;
        // The helpers read the job through this pointer until `pending` reaches 0, below: the
        // reference it points at outlives that.
        self.job.store(
            (&job as *const Job<'_>).cast_mut().cast(),
            Ordering::Relaxed,
        );
        self.pending.store(helpers, Ordering::Relaxed);
        self.epoch.fetch_add(1, Ordering::Release);
        P::wake(&self.epoch);
        job(0);
        let (mut spins, mut checks) = (0, 0);
        loop {
            let left = self.pending.load(Ordering::Acquire);
            if left == 0 {
                break;
            }
            if spins < SPIN {
                spins += 1;
                core::hint::spin_loop();
            } else {
                // A helper that died never decrements `pending`: the job cannot finish, and this
                // thread must not return while the helpers may still read `job`. It panics (the
                // page then ends this worker, its helpers with it) rather than wait forever; no
                // share of a matmul takes anywhere near [`GIVE_UP`] checks.
                assert!(
                    !self.poisoned.load(Ordering::Acquire),
                    "a helper thread of the matmul pool died during a job"
                );
                checks += 1;
                assert!(
                    checks <= GIVE_UP,
                    "a helper thread of the matmul pool did not finish its share in {} s",
                    GIVE_UP * CHECK_MS / 1000
                );
                P::wait(&self.pending, left, Some(CHECK_MS));
            }
        }
    }

    /// A helper's loop: serves every job as share `id` (1 ≤ id < [`MAX_THREADS`]) while `id` is
    /// below the threads granted, until [`Pool::stop`]. Returns at once if helper `id` is in
    /// already, and as soon as [`Pool::start`] has granted fewer threads than `id + 1`.
    ///
    /// # Panics
    /// If `id` is 0 or not below [`MAX_THREADS`].
    pub fn helper<P: Park>(&self, id: usize) {
        assert!(
            (1..MAX_THREADS).contains(&id),
            "pool helper id {id} outside 1..{MAX_THREADS}"
        );
        let mut seen = self.epoch.load(Ordering::Acquire);
        if self.helpers.fetch_or(1 << id, Ordering::AcqRel) & (1 << id) != 0 {
            return;
        }
        P::wake(&self.helpers);
        let leave = || {
            self.stop.load(Ordering::Relaxed)
                || (self.started.load(Ordering::Acquire)
                    && id >= self.threads.load(Ordering::Acquire) as usize)
        };
        loop {
            let mut spins = 0;
            let now = loop {
                let now = self.epoch.load(Ordering::Acquire);
                if now != seen || leave() {
                    break now;
                }
                if spins < SPIN {
                    spins += 1;
                    core::hint::spin_loop();
                } else {
                    P::wait(&self.epoch, seen, None);
                }
            };
            if leave() {
                return;
            }
            seen = now;
            // SAFETY: the caller published a live `Job` before bumping the epoch (Release/Acquire)
            // and keeps it alive until `pending`, which this helper has not yet decremented,
            // reaches 0.
            let job = unsafe { *self.job.load(Ordering::Relaxed).cast::<Job<'_>>() };
            job(id);
            if self.pending.fetch_sub(1, Ordering::AcqRel) == 1 {
                P::wake(&self.pending);
            }
        }
    }

    /// Says that a helper died (its Web Worker caught the trap): the job waiting for it, and
    /// every later one, panics instead of waiting forever.
    pub fn poison<P: Park>(&self) {
        self.poisoned.store(true, Ordering::Release);
        P::wake(&self.pending);
    }

    /// Makes every helper return from [`Pool::helper`] (between jobs); later jobs run on the
    /// caller alone.
    pub fn stop<P: Park>(&self) {
        self.threads.store(1, Ordering::Release);
        self.stop.store(true, Ordering::Relaxed);
        self.epoch.fetch_add(1, Ordering::Release);
        P::wake(&self.epoch);
    }
}

impl Default for Pool {
    fn default() -> Pool {
        Pool::new()
    }
}

/// The threaded wasm module's pool and its `Park`: `memory.atomic.wait32` / `notify`, which
/// block only in a Web Worker (the page's main thread never has helpers, so never waits).
#[cfg(all(target_arch = "wasm32", target_feature = "atomics"))]
pub mod shared {
    use super::{Park, Pool};
    use core::arch::wasm32::{memory_atomic_notify, memory_atomic_wait32};
    use core::sync::atomic::AtomicU32;

    /// The module's one pool (its statics live in the shared memory every thread sees).
    pub static POOL: Pool = Pool::new();

    /// Sleeping on shared wasm memory.
    pub struct Futex;

    impl Park for Futex {
        fn wait(a: &AtomicU32, expected: u32, timeout_ms: Option<u32>) {
            let ns = timeout_ms.map_or(-1, |ms| i64::from(ms) * 1_000_000);
            // SAFETY: `a` is a live, aligned atomic in the module's shared memory.
            unsafe { memory_atomic_wait32(a.as_ptr().cast(), expected as i32, ns) };
        }
        fn wake(a: &AtomicU32) {
            // SAFETY: as above.
            unsafe { memory_atomic_notify(a.as_ptr().cast(), u32::MAX) };
        }
    }
}
