//! The matmul over weights packed once, at load (few rows or many): each strip of [`STRIP`] output columns
//! holds its inputs one after another, so that a strip is read as one sequential stream and a
//! thread's share of the strips as one stream too (what onnxruntime's MLAS does with a constant
//! weight matrix). The accumulators of a tile stay in registers over all the inputs, so `y` is
//! written once, and the tile's inner loop is a weight row of the strip: two vectors, broadcast
//! against two rows of `x`.
//!
//! It beat [`matmul_few_rows`](super::matmul_few_rows) over the same weights unpacked at 1 to 8
//! rows: the row-major layout reads a block of eight weight rows as eight interleaved streams,
//! which the prefetcher follows worse, and loads and stores `y` once per block (measurements:
//! docs/performance.md, section "Figures once in the module headers",
//! `crate/kernels/src/matmul/packed.rs`). Each column is summed by one thread over the inputs in
//! order, from the bias, so the result has the same bits whatever the threads and whatever the
//! rows beside it. The cost is a second copy of the
//! weights, so the models pack only what is worth it (`specdec::model::matmul`).

use alloc::vec::Vec;
use core::ops::Range;

use super::lanes::{Kernel, Lanes, LANES};
use super::over_strips;

/// Output columns per strip: two vectors of eight.
pub const STRIP: usize = 2 * LANES;

/// A `d_in × d_out` weight matrix packed for [`matmul_packed`]: `data[(s · d_in + i) · STRIP +
/// j] = w[i][s · STRIP + j]`, zeros past `d_out`.
pub struct Packed {
    data: Vec<f32>,
    d_in: usize,
    d_out: usize,
}

impl core::fmt::Debug for Packed {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "Packed({} × {})", self.d_in, self.d_out)
    }
}

impl Packed {
    /// `w` (`d_in × d_out`, row-major: burn's `Linear` layout) packed.
    ///
    /// # Panics
    /// If `w` does not hold `d_in × d_out` values.
    pub fn new(w: &[f32], d_in: usize, d_out: usize) -> Packed {
        assert_eq!(
            w.len(),
            d_in * d_out,
            "Packed::new: w is not {d_in} × {d_out}"
        );
        let strips = d_out.div_ceil(STRIP);
        let mut data = alloc::vec![0.0; strips * d_in * STRIP];
        for (s, strip) in data.chunks_exact_mut((d_in * STRIP).max(1)).enumerate() {
            let cols = STRIP.min(d_out - s * STRIP);
            for (i, row) in strip.chunks_exact_mut(STRIP).enumerate() {
                let from = i * d_out + s * STRIP;
                row[..cols].copy_from_slice(&w[from..from + cols]);
            }
        }
        Packed { data, d_in, d_out }
    }

    pub fn d_in(&self) -> usize {
        self.d_in
    }

    pub fn d_out(&self) -> usize {
        self.d_out
    }

    fn strips(&self) -> usize {
        self.d_out.div_ceil(STRIP)
    }
}

/// The strips of share `share` of `of`, as even as can be, in order.
fn strip_share(strips: usize, share: usize, of: usize) -> Range<usize> {
    strips * share / of..strips * (share + 1) / of
}

/// y\[m\]\[o\] = bias\[o\] + Σᵢ x\[m\]\[i\] · w\[i\]\[o\] for m in 0..rows, `w` packed. In the
/// threaded wasm module a matmul of at least [`SPLIT_WEIGHTS`](super::SPLIT_WEIGHTS) weights is
/// split by strips across the pool's threads; the bits are the same on any number of threads.
///
/// # Panics
/// If a slice's length does not match the dimensions.
#[inline(never)]
pub fn matmul_packed(x: &[f32], rows: usize, w: &Packed, bias: Option<&[f32]>, y: &mut [f32]) {
    let (d_in, d_out) = (w.d_in, w.d_out);
    let of = crate::threads_for(d_in * d_out);
    #[cfg(all(target_arch = "wasm32", target_feature = "atomics"))]
    if of > 1 {
        use crate::pool::shared::{Futex, POOL};
        split_packed(x, rows, w, bias, y, of, |job| POOL.run::<Futex>(job));
        return;
    }
    split_packed(x, rows, w, bias, y, of.min(1), |job| job(0));
}

/// [`matmul_packed`] for `of` threads: the strips in `of` shares, handed to `run` as one job that
/// each thread runs (`job(share)` once for every share in 0..of, on any threads, returning when
/// all have; a share past them does nothing). Each share writes its own strips' columns of `y`,
/// so `run` must not run one share twice at once: private, for the pool and the tests.
///
/// # Panics
/// If a slice's length does not match the dimensions.
fn split_packed(
    x: &[f32],
    rows: usize,
    w: &Packed,
    bias: Option<&[f32]>,
    y: &mut [f32],
    of: usize,
    run: impl FnOnce(&(dyn Fn(usize) + Sync)),
) {
    assert_eq!(
        x.len(),
        rows * w.d_in,
        "matmul_packed: x is not {rows} × {}",
        w.d_in
    );
    assert_eq!(
        y.len(),
        rows * w.d_out,
        "matmul_packed: y is not {rows} × {}",
        w.d_out
    );
    if let Some(b) = bias {
        assert_eq!(
            b.len(),
            w.d_out,
            "matmul_packed: bias has not {} values",
            w.d_out
        );
    }
    let (out, strips, of) = (Out(y.as_mut_ptr()), w.strips(), of.max(1));
    let job = move |share: usize| {
        if share >= of {
            return;
        }
        // SAFETY: the lengths were checked above; the shares' strips, hence their columns of y,
        // are disjoint.
        unsafe { over_strips(x, rows, w, bias, strip_share(strips, share, of), out.at()) };
    };
    run(&job);
}

/// `y`'s pointer, shared by threads that write disjoint columns of it.
#[derive(Clone, Copy)]
struct Out(*mut f32);
// SAFETY: each share writes only its own strips' columns, and the caller of `matmul_packed`
// holds `y` mutably until all have finished.
unsafe impl Sync for Out {}
unsafe impl Send for Out {}

impl Out {
    /// The pointer (a method, so that a closure captures the `Sync` wrapper, not the field).
    fn at(self) -> *mut f32 {
        self.0
    }
}

/// [`matmul_packed`] on the portable back-end and one thread: the tests' reference.
#[cfg(test)]
pub(super) fn matmul_packed_portable(
    x: &[f32],
    rows: usize,
    w: &Packed,
    bias: Option<&[f32]>,
    y: &mut [f32],
) {
    assert_eq!((x.len(), y.len()), (rows * w.d_in, rows * w.d_out));
    // SAFETY: the lengths were just checked; the portable back-end needs no CPU feature.
    unsafe { strips_with::<[f32; LANES]>(x, rows, w, bias, 0..w.strips(), y.as_mut_ptr()) };
}

/// The strips `range` for every row, in passes of two rows (four vectors of accumulators, the
/// most a browser's sixteen 128-bit registers hold beside the weights), the last row alone. The
/// first pass streams the strip from memory, the others read it back from L2 (a strip is
/// `d_in` × 64 bytes). Passes over a part of the strip at a time, so that the later ones read
/// it from L1, were slower: 4 rows 4.3 → 5.3 ms over 4096 × 4096 weights with parts of 128
/// inputs, 4.3 with 1024. So was touching the next strip in the last pass (a load of one value
/// a line, for the line to stream in while this strip is computed): 4 rows 5.8–6.1 → 7.5–7.6 ms
/// over the ×16 target's layers. So was a load 8, 16, 32 or 64 lines ahead in the first pass, a
/// prefetch by hand (1 row 2.4 → 2.4, 3.1, 2.8, 3.6 ms; 4 rows 5.2 → 5.2–5.7): the prefetcher
/// already follows one stream. So were passes of three rows first (twelve registers of sums: V8
/// spills), so that four rows take a streaming pass of three and one of a single row from L2
/// (×16 layers, one thread, FMA: 3 rows 5.9 → 5.3 ms, but 4 rows 6.0 → 7.6 and 8 rows 8.9 →
/// 12.8). So were strips of 8 columns, four rows in one pass (4 rows over the ×16 layers 6.2 →
/// 7.2 ms): that pass ran at the peak from L2 (52 GFLOP/s) and at 21 over streaming weights, a
/// stream's time plus its arithmetic's (docs/performance.md, "The packed kernel at any number of
/// rows"). Nor did such passes help after the streaming one, four rows over each half of the strip
/// from L2 (×16 layers, one thread, FMA, `tests/bench-kernel.mjs`: 6 rows 7.0 → 7.0 ms, 8 rows
/// 8.4 → 8.3, 9 rows 9.6 → 9.7).
///
/// # Safety
/// `x`, `bias` and `y` have the lengths `matmul_packed` asserts, `range` lies within `w`'s
/// strips; no one else touches the strips' columns of `y` meanwhile; the CPU has `V`'s features.
#[inline(always)]
pub(super) unsafe fn strips_with<V: Lanes>(
    x: &[f32],
    rows: usize,
    w: &Packed,
    bias: Option<&[f32]>,
    range: Range<usize>,
    y: *mut f32,
) {
    assert!(STRIP == 2 * V::WIDTH);
    for s in range {
        let c0 = s * STRIP;
        let cols = STRIP.min(w.d_out - c0);
        let mut start = [0.0f32; STRIP];
        if let Some(b) = bias {
            start[..cols].copy_from_slice(&b[c0..c0 + cols]);
        }
        let strip = Strip {
            w: w.data[s * w.d_in * STRIP..].as_ptr(),
            d_in: w.d_in,
            d_out: w.d_out,
            cols,
            start: &start,
        };
        let mut m = 0;
        // SAFETY (both calls): rows m..m + R lie within rows, the strip's columns within d_out.
        while m + 2 <= rows {
            unsafe { tile::<V, 2>(x[m * w.d_in..].as_ptr(), &strip, y.add(m * w.d_out + c0)) };
            m += 2;
        }
        if m < rows {
            unsafe { tile::<V, 1>(x[m * w.d_in..].as_ptr(), &strip, y.add(m * w.d_out + c0)) };
        }
    }
}

/// [`strips_with`]'s arguments, to be run on a back-end.
pub(super) struct Strips<'a> {
    pub x: &'a [f32],
    pub rows: usize,
    pub w: &'a Packed,
    pub bias: Option<&'a [f32]>,
    pub range: Range<usize>,
    pub y: *mut f32,
}

impl Kernel for Strips<'_> {
    type Output = ();

    /// # Safety
    /// As [`strips_with`].
    #[inline(always)]
    unsafe fn run<V: Lanes>(self) {
        let Strips {
            x,
            rows,
            w,
            bias,
            range,
            y,
        } = self;
        // SAFETY: forwarded from the caller.
        unsafe { strips_with::<V>(x, rows, w, bias, range, y) }
    }
}

/// One strip of the packed weights and where its columns go.
struct Strip<'a> {
    /// The strip's first weight: `d_in` rows of `STRIP` values follow.
    w: *const f32,
    d_in: usize,
    d_out: usize,
    /// The strip's columns within `d_out` (`STRIP`, or fewer in the last strip).
    cols: usize,
    /// The sums' starting values: the bias of the strip's columns, or zeros.
    start: &'a [f32; STRIP],
}

/// `R` rows of one strip: the accumulators start from the bias, take every input's multiply-adds
/// in order, and are stored once.
///
/// # Safety
/// `x` addresses `R` rows (stride `d_in`) of `d_in` values, `y` `R` rows (stride `d_out`) of
/// `s.cols` writable values; the CPU has `V`'s features.
#[inline(always)]
unsafe fn tile<V: Lanes, const R: usize>(x: *const f32, s: &Strip<'_>, y: *mut f32) {
    // SAFETY: every offset below is within the bounds the caller guarantees.
    unsafe {
        let first = [
            V::load(s.start.as_ptr()),
            V::load(s.start.as_ptr().add(V::WIDTH)),
        ];
        let mut acc = [first; R];
        // A loop, not unrolled, in wasm (see `blocked::tile`): V8 runs the instructions in the
        // order it is given them.
        let inputs = if cfg!(target_arch = "wasm32") {
            core::hint::black_box(s.d_in)
        } else {
            s.d_in
        };
        for i in 0..inputs {
            let w = s.w.add(i * STRIP);
            let (w0, w1) = (V::load(w), V::load(w.add(V::WIDTH)));
            for (r, acc) in acc.iter_mut().enumerate() {
                let xv = V::splat(*x.add(r * s.d_in + i));
                acc[0] = acc[0].mul_add(xv, w0);
                acc[1] = acc[1].mul_add(xv, w1);
            }
        }
        for (r, acc) in acc.iter().enumerate() {
            let out = y.add(r * s.d_out);
            if s.cols == STRIP {
                acc[0].store(out);
                acc[1].store(out.add(V::WIDTH));
            } else {
                let mut sums = [0.0f32; STRIP];
                acc[0].store(sums.as_mut_ptr());
                acc[1].store(sums.as_mut_ptr().add(V::WIDTH));
                core::ptr::copy_nonoverlapping(sums.as_ptr(), out, s.cols);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::super::tests::{assert_naive, inputs};
    use super::*;

    /// The packed product, on the dispatched and on the portable back-end, against a sum in f64
    /// for rows 1..=20, no inputs, and widths that leave 0, 1, 3, 7, 8 and 15 columns in the last
    /// strip, with and without bias; `y` starts
    /// as garbage. And the same bits for a row whatever the rows beside it.
    #[test]
    fn the_packed_product_equals_the_naive_one() {
        let mut seed = 3;
        for rows in 1..=20 {
            for (d_in, d_out) in [
                (0, 5),
                (1, 1),
                (3, 17),
                (7, 16),
                (5, 19),
                (9, 23),
                (4, 24),
                (17, 31),
                (17, 33),
                (64, 160),
                (160, 257),
            ] {
                for with_bias in [false, true] {
                    seed += 1;
                    let (x, w, b) = inputs((rows, d_in, d_out), seed);
                    let bias = with_bias.then_some(&b[..]);
                    let packed = Packed::new(&w, d_in, d_out);
                    type Product = fn(&[f32], usize, &Packed, Option<&[f32]>, &mut [f32]);
                    for f in [matmul_packed as Product, matmul_packed_portable] {
                        let mut y = std::vec![f32::NAN; rows * d_out];
                        f(&x, rows, &packed, bias, &mut y);
                        let what = std::format!("rows {rows}, {d_in} → {d_out}, bias {with_bias}");
                        assert_naive((&x, rows), &w, (d_in, d_out), bias, &y, &what);
                        // Row m alone gives the same bits as row m among the others.
                        let last = rows - 1;
                        let mut alone = std::vec![0.0; d_out];
                        f(&x[last * d_in..], 1, &packed, bias, &mut alone);
                        assert_eq!(
                            alone[..],
                            y[last * d_out..],
                            "rows {rows}, {d_in} → {d_out}"
                        );
                    }
                }
            }
        }
    }

    /// Split across real threads, a share each, the product has the same bits as on one.
    #[test]
    fn the_packed_product_split_across_threads_has_one_threads_bits() {
        let (rows, d_in, d_out) = (5, 300, 1000);
        let (x, w, b) = inputs((rows, d_in, d_out), 1);
        let packed = Packed::new(&w, d_in, d_out);
        let mut one = std::vec![0.0; rows * d_out];
        split_packed(&x, rows, &packed, Some(&b), &mut one, 1, |job| job(0));
        for of in [2, 3, 7] {
            let mut many = std::vec![f32::NAN; rows * d_out];
            split_packed(&x, rows, &packed, Some(&b), &mut many, of, |job| {
                std::thread::scope(|s| {
                    for share in 1..of {
                        s.spawn(move || job(share));
                    }
                    job(0);
                })
            });
            assert_eq!(one, many, "{of} threads");
        }
    }

    /// The shares of strips cover them all, in order, without overlap.
    #[test]
    fn strip_shares_tile_the_strips() {
        for strips in [0, 1, 2, 5, 64, 193] {
            for of in 1..=5 {
                let mut next = 0;
                for share in 0..of {
                    let r = strip_share(strips, share, of);
                    assert_eq!(r.start, next, "{strips} / {of}: share {share}");
                    next = r.end;
                }
                assert_eq!(next, strips);
            }
        }
    }
}
