//! A matmul split by output columns into shares that threads run at once: each share reads its
//! columns of the weights, so every weight byte is still read once per call in all. A share
//! starts at a multiple of [`CHUNK`] columns, where the register tiles of a call over all of
//! them start too, so every column's sums are added in the same order: the same bits as one
//! thread. The pool that runs the shares is `crate::pool`'s; this file only cuts and hands out.

use super::{check_shapes, columns, CHUNK};
use core::ops::Range;

/// The columns of share `share` of `of`: whole [`CHUNK`]s, as even as can be, in order; the
/// last share ends at `d_out`.
pub fn column_share(d_out: usize, share: usize, of: usize) -> Range<usize> {
    let chunks = d_out.div_ceil(CHUNK);
    let at = |s: usize| (chunks * s / of * CHUNK).min(d_out);
    at(share)..at(share + 1)
}

/// A pointer to `y` that threads working on disjoint columns may share.
#[derive(Clone, Copy)]
struct Columns(*mut f32);
// SAFETY: every thread writes only its own columns (`column_share`), and the caller of `split`
// holds `y` mutably until all have finished.
unsafe impl Sync for Columns {}
unsafe impl Send for Columns {}

impl Columns {
    fn get(self) -> *mut f32 {
        self.0
    }
}

/// [`matmul_few_rows`] as `of` shares of columns, handed to `run` as one job (`job(share)` for
/// every share in 0..of, on any threads, returning when all have).
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
    let y = Columns(y.as_mut_ptr());
    let job = move |share: usize| {
        let cols = column_share(d_out, share, of);
        // SAFETY: the lengths were checked above; the shares' columns are disjoint.
        unsafe { columns(x, rows, w, d_in, d_out, bias, cols, y.get()) }
    };
    run(&job);
}
