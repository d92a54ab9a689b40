//! A matmul split by output columns into pieces that threads take in turn: each piece reads its
//! columns of the weights, so every weight byte is still read once per call in all. A piece
//! starts at a multiple of [`CHUNK`] columns, where the register tiles of a call over all of
//! them start too, so every column's sums are added in the same order: the same bits as one
//! thread. The pool that runs the threads is `crate::pool`'s; this file only cuts and hands out.

use super::{check_shapes, columns, CHUNK};
use core::ops::Range;
use core::sync::atomic::{AtomicUsize, Ordering};

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
// SAFETY: every thread writes only the columns of the pieces it took, and the caller of `split`
// holds `y` mutably until all have finished.
unsafe impl Sync for Columns {}
unsafe impl Send for Columns {}

impl Columns {
    fn get(self) -> *mut f32 {
        self.0
    }
}

/// Pieces of columns per thread for more than [`FEW`] rows: threads take pieces in turn until
/// none is left, so that a thread the system holds up (two cores, and a browser's own threads
/// beside the pool's) leaves its pieces to the others instead of making all wait for its fixed
/// share.
pub const PIECES_PER_THREAD: usize = 4;

/// Rows up to which each thread takes one piece: a call of one or two rows is bound by reading
/// the weights, and a piece reads each weight row in a segment as wide as itself; at 4 pieces a
/// thread, segments of 512 bytes made the ×16 target's one-token call slower on two threads
/// (7.99 ms) than on one (6.80 ms), in the same run.
pub const FEW: usize = 2;

/// [`matmul_few_rows`](super::matmul_few_rows) for `of` threads: the columns in
/// [`PIECES_PER_THREAD`] × `of` pieces (one a thread up to [`FEW`] rows; whole [`CHUNK`]s), handed to `run` as one job that each
/// thread runs (`job(share)` for every share in 0..of, on any threads, returning when all have),
/// taking pieces until none is left.
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
    let per_thread = if rows <= FEW { 1 } else { PIECES_PER_THREAD };
    let pieces = (of * per_thread).clamp(1, d_out.div_ceil(CHUNK).max(1));
    let next = AtomicUsize::new(0);
    let next = &next;
    let job = move |_share: usize| loop {
        let piece = next.fetch_add(1, Ordering::Relaxed);
        if piece >= pieces {
            break;
        }
        let cols = column_share(d_out, piece, pieces);
        // SAFETY: the lengths were checked above; each piece is taken once, and the pieces'
        // columns are disjoint.
        unsafe { columns(x, rows, w, d_in, d_out, bias, cols, y.get()) }
    };
    run(&job);
}
