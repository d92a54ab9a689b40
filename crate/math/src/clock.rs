//! The time and progress of long jobs, as the core sees them: a clock passed in by the caller
//! and a progress callback. They live apart from the engine and the models because both use
//! them (the engine times each call, the model benchmark times blocks of calls) and neither
//! should import the other for it. A clock is a plain function so that the core never asks
//! where it runs: `std::time::Instant` natively, `performance.now()` in a browser (where
//! `Instant` is unavailable).

/// A clock in microseconds.
pub type Clock<'a> = &'a dyn Fn() -> f64;

/// Reports progress of a long job: (done, total), as numbers; the caller words them.
pub type Progress<'a> = &'a mut dyn FnMut(usize, usize);

/// The native clock.
#[cfg(not(target_arch = "wasm32"))]
pub fn native_clock() -> impl Fn() -> f64 {
    let origin = std::time::Instant::now();
    move || origin.elapsed().as_secs_f64() * 1e6
}

/// Progress of the `k`-th of several runs of `each` units, under one callback for all `total`.
pub fn part<'a>(
    progress: &'a mut dyn FnMut(usize, usize),
    k: usize,
    each: usize,
    total: usize,
) -> impl FnMut(usize, usize) + 'a {
    move |done, _| progress(k * each + done, total)
}
