//! A matmul split by its inputs into one share a thread: each thread streams a contiguous slice
//! of the weight rows, whole, into its own partial sums, and the caller adds them up: every
//! weight byte is still read once per call in all, and each thread's reads are one sequential
//! stream. The pool that runs the threads is `crate::pool`'s; this file only cuts, hands out and
//! adds up.
//!
//! Cut by output columns instead, each thread reads every weight row in a segment as narrow as
//! its share, which the hardware prefetcher follows worse (measurements: docs/performance.md,
//! section "Cutting by inputs"). The sums
//! are no longer added in one thread's order (a share's partial sum starts from zero), so the
//! result differs from one thread's in the last bits; it does not depend on the number of rows,
//! since the cut depends only on `d_in` and the threads.

use super::blocked::BLOCK;
use super::{check_shapes, over_inputs};
use core::ops::Range;

/// The inputs of share `share` of `of`: whole blocks of the kernel's `BLOCK` inputs, as even as
/// can be, in order; the last share ends at `d_in`.
pub fn input_share(d_in: usize, share: usize, of: usize) -> Range<usize> {
    let blocks = d_in / BLOCK;
    let at = |s: usize| {
        if s >= of {
            d_in
        } else {
            blocks * s / of * BLOCK
        }
    };
    at(share)..at(share + 1)
}

/// A pointer to a buffer of partial sums that threads working on disjoint parts may share.
#[derive(Clone, Copy)]
struct Sums(*mut f32);
// SAFETY: share 0 writes only `y`, share s > 0 only its own part of the scratch buffer, and the
// caller of `split` holds both mutably until all have finished.
unsafe impl Sync for Sums {}
unsafe impl Send for Sums {}

impl Sums {
    /// The pointer `offset` floats on (no claim on the address: its use is the caller's).
    fn at(self, offset: usize) -> *mut f32 {
        self.0.wrapping_add(offset)
    }
}

/// [`matmul_few_rows`](super::matmul_few_rows) for `of` threads: the inputs in `of` shares
/// ([`input_share`]), handed to `run` as one job that each thread runs (`job(share)` for every
/// share in 0..of, on any threads, returning when all have). Share 0 writes `y` (from the bias),
/// share s > 0 its own `rows × d_out` partial sums (from zero), which are then added to `y` in
/// the order of the shares.
#[allow(clippy::too_many_arguments)]
pub fn split(
    x: &[f32],
    rows: usize,
    w: &[f32],
    d_in: usize,
    d_out: usize,
    bias: Option<&[f32]>,
    y: &mut [f32],
    of: usize,
    run: impl FnOnce(&(dyn Fn(usize) + Sync)),
) {
    check_shapes(x, rows, w, d_in, d_out, bias, y);
    let size = rows * d_out;
    let mut partial = alloc::vec![0.0f32; of.saturating_sub(1) * size];
    let (out, sums) = (Sums(y.as_mut_ptr()), Sums(partial.as_mut_ptr()));
    let job = move |share: usize| {
        let inputs = input_share(d_in, share, of);
        // SAFETY: the lengths were checked above; each share runs once and writes only its own
        // buffer: y for share 0, its part of `partial` for the others.
        unsafe {
            if share == 0 {
                over_inputs(x, rows, w, d_in, d_out, bias, inputs, out.at(0));
            } else {
                let at = sums.at((share - 1) * size);
                over_inputs(x, rows, w, d_in, d_out, None, inputs, at);
            }
        }
    };
    run(&job);
    for part in partial.chunks_exact(size.max(1)) {
        for (a, b) in y.iter_mut().zip(part) {
            *a += b;
        }
    }
}
