//! The few-row matmul's loops, generic over the `Lanes` back-end: `y += x · w` for up to
//! [`FEW_ROWS`] rows at a time, every weight read from memory once per call.
//!
//! The weights are `[d_in, d_out]` row-major (burn's `Linear` layout), so the kernel takes the
//! "axpy" form: a block of `BLOCK` consecutive weight rows (that many sequential streams, which
//! the hardware prefetcher follows), and for each column chunk of that block and each group of up
//! to `GROUP` output rows, `y`'s chunk is loaded into registers, gets `BLOCK × GROUP` broadcast
//! multiply-adds, and is stored back. The weight chunk is read from memory by the first row group
//! and from L1 by the others; fewer rows than a group take tiles as many vectors wide as the
//! chunk allows, so that one row's multiply-adds still do not wait on each other. `y` is worked
//! on in column panels copied into a buffer with padded rows: in place, with `d_out` a multiple
//! of 1024, every row's chunk maps to the same L1 set and the rows evict each other
//! (measurements: docs/performance.md, section "Figures once in the module headers",
//! `crate/kernels/src/matmul/blocked.rs`). A panel narrower than the matrix reads each
//! weight row in pieces, so the AVX2 back-end prefetches `AHEAD` rows ahead then (a full-width
//! panel reads whole rows, which the hardware prefetcher follows better unaided); wasm, which has
//! no prefetch, takes panels four times as large.
//!
//! The tiling has two settings, picked at compile time (`WASM`): AVX2's, and the browser's,
//! whose compiler has sixteen 128-bit registers and keeps the order of the instructions it is
//! given. The native tests check both (the `wasm-tiling` feature).
//!
//! The loops nest as [`accumulate`] (row groups and panels) → `block` (a block of weight
//! rows) → `wide` (a column chunk) → `across` (a row group's tiles across it) → `tile` (the
//! register tile), all `#[inline(always)]` so that each back-end's `#[target_feature]` function
//! compiles them into one function with its CPU features; the columns left over past the last
//! whole chunk go through `chunk`, a vector at a time. [`Accumulate`] holds a call's arguments as
//! a `Kernel`, the form in which the dispatch point hands it to a back-end; shape checks and the
//! choice of back-end are the caller's.

use core::ops::Range;

use super::lanes::{Kernel, Lanes};

/// Whether the loops are cut for the browser's compiler (sixteen SIMD128 registers, no
/// rescheduling, no prefetch instruction) rather than for AVX2: in wasm, and natively with the
/// `wasm-tiling` feature, under which the tests check this tiling too.
const WASM: bool = cfg!(any(target_arch = "wasm32", feature = "wasm-tiling"));

/// The most rows [`matmul_few_rows`](super::matmul_few_rows) is meant for: beyond it the weights
/// are no longer the bottleneck and a general GEMM (with packing, register blocking over rows) is
/// faster. It stays correct for any number of rows.
pub const FEW_ROWS: usize = 16;

/// Consecutive weight rows (inputs) handled per pass over `y`: the number of parallel memory
/// streams, and how many multiply-adds each `y` load and store is shared between.
pub(super) const BLOCK: usize = 8;

/// Vectors per register tile of a full group of [`GROUP`] rows: two natively (AVX2's sixteen
/// 256-bit registers), one in wasm, where a vector of eight lanes is two SIMD128 registers and the
/// browser's compiler has sixteen of those on x86: a native-sized tile (24 of them for the
/// accumulators alone) spilled to the stack, and 8 rows cost 3.7× one on a single thread.
const VECTORS: usize = if WASM { 1 } else { 2 };

/// Vectors per column chunk: one tile of [`VECTORS`] for a group of [`GROUP`] rows, and room for
/// fewer rows to take wider tiles (in wasm one row takes four vectors, two rows two each).
const CHUNK: usize = if WASM { 4 } else { 2 };

/// How many weight rows ahead of the current block the AVX2 back-end prefetches: the panels
/// read each weight row in pieces, which the hardware prefetcher does not foresee.
const AHEAD: usize = 4 * BLOCK;

/// Output rows per register tile: natively `GROUP × VECTORS` = 12 accumulators, the two weight
/// vectors and a broadcast take 15 of the 16 AVX registers (six rows were faster than four at
/// k = 8–16: fewer weight reloads per multiply-add, and no slower below); in wasm 4 × 1 vectors of
/// two SIMD128 registers, 8 of them, with the weights' 2 and a broadcast, 11 of 16.
const GROUP: usize = if WASM { 4 } else { 6 };

/// Floats of the `y` panel: a panel of `rows` rows is `PANEL / rows` columns wide (rounded to
/// whole chunks). Natively 16 KiB, half of a 32 KiB L1. In wasm 64 KiB, which holds four rows of
/// a 4096-wide layer (sixteen of a 1024-wide one) whole, in L2: there is no prefetch instruction
/// in wasm, and a panel narrower than the matrix reads each weight row in pieces that the hardware
/// prefetcher does not foresee (one thread, 4096 × 4096 weights, headless Chromium: 4 rows
/// 4.9 → 4.2 ms, 8 rows 9.5 → 8.0 ms against 4096 floats; 32768 or 65536 were no faster).
const PANEL: usize = if WASM { 16384 } else { 4096 };

/// Padding of each panel row, in floats: the rows' stride is then not a multiple of 4 KiB, so the
/// same chunk of different rows falls in different L1 sets (in place, with `d_out` = 1024 or
/// 3072, all sixteen rows' chunks would compete for the eight ways of one set).
const PAD: usize = 16;

// Every panel is at least one chunk wide, whatever its rows.
const _: () = assert!(PANEL / FEW_ROWS >= CHUNK * super::lanes::LANES);

/// Floats of a cache line: the panel starts on one, so that every vector access is within one.
const LINE: usize = 16;

/// `y += x[.., inputs] · w[inputs, ..]` (`y` already holds the bias, or zeros), blocked as the
/// module header describes: up to [`FEW_ROWS`] rows at a time (each such group streams the
/// weights once), and for them column panels copied into a buffer (in L1 natively, in L2 in
/// wasm), over which the inputs run in blocks. `y` is a pointer so that threads may each work on their own `y` for
/// disjoint input ranges (`split`); one thread passes `0..d_in`. A column's sums are added in
/// the same order whatever the rows.
///
/// # Safety
/// `x` and `w` have the lengths `check_shapes` asserts, `inputs` lies within `0..d_in`, `y`
/// addresses `rows × d_out` floats that no one else touches meanwhile; the CPU has `V`'s
/// features.
#[inline(always)]
pub(super) unsafe fn accumulate<V: Lanes>(
    x: &[f32],
    rows: usize,
    w: &[f32],
    d_in: usize,
    d_out: usize,
    inputs: Range<usize>,
    y: *mut f32,
) {
    let chunk = CHUNK * V::WIDTH;
    // Room for any group's panel (rr rows of at most PANEL / rr and at most d_out columns), on the
    // heap: 66 KiB in wasm, where an overflowing stack corrupts memory silently.
    let size = (PANEL + FEW_ROWS * PAD).min(FEW_ROWS.min(rows) * (d_out + PAD));
    let mut panel = alloc::vec![0.0f32; size + LINE];
    let start = panel.as_ptr().align_offset(LINE * 4).min(LINE);
    let panel = &mut panel[start..];
    let mut r0 = 0;
    while r0 < rows {
        let rr = FEW_ROWS.min(rows - r0);
        let width = (PANEL / rr / chunk * chunk).min(d_out);
        let stride = width + PAD;
        let mut c0 = 0;
        while c0 < d_out {
            let pw = width.min(d_out - c0);
            let buf = &mut panel[..rr * stride];
            for m in 0..rr {
                let row = (r0 + m) * d_out + c0;
                // SAFETY: row + pw ≤ rows × d_out, which this call owns.
                unsafe {
                    core::ptr::copy_nonoverlapping(y.add(row), buf[m * stride..].as_mut_ptr(), pw)
                };
            }
            let (xp, wp, bp) = (x[r0 * d_in..].as_ptr(), w.as_ptr(), buf.as_mut_ptr());
            let dims = Dims {
                rows: rr,
                cols: pw,
                d_in,
                d_out,
                stride,
            };
            let mut i = inputs.start;
            // SAFETY (both loops): inputs i..i + B lie within inputs ⊆ 0..d_in, so
            // x[r0 + m][i..i + B] and w[i..i + B][c0..c0 + pw] are in bounds for every m < rr; the panel holds rr rows
            // of pw values at `stride`.
            while i + BLOCK <= inputs.end {
                unsafe { block::<V, BLOCK>(xp.add(i), wp.add(i * d_out + c0), bp, dims) };
                i += BLOCK;
            }
            // The last inputs one at a time (real widths have none).
            while i < inputs.end {
                unsafe { block::<V, 1>(xp.add(i), wp.add(i * d_out + c0), bp, dims) };
                i += 1;
            }
            for m in 0..rr {
                let row = (r0 + m) * d_out + c0;
                // SAFETY: as the copy in.
                unsafe {
                    core::ptr::copy_nonoverlapping(buf[m * stride..].as_ptr(), y.add(row), pw)
                };
            }
            c0 += pw;
        }
        r0 += rr;
    }
}

/// [`accumulate`]'s arguments, to be run on a back-end.
pub(super) struct Accumulate<'a> {
    pub x: &'a [f32],
    pub rows: usize,
    pub w: &'a [f32],
    pub d_in: usize,
    pub d_out: usize,
    pub inputs: Range<usize>,
    pub y: *mut f32,
}

impl Kernel for Accumulate<'_> {
    type Output = ();

    /// # Safety
    /// As [`accumulate`].
    #[inline(always)]
    unsafe fn run<V: Lanes>(self) {
        let Accumulate {
            x,
            rows,
            w,
            d_in,
            d_out,
            inputs,
            y,
        } = self;
        // SAFETY: forwarded from the caller.
        unsafe { accumulate::<V>(x, rows, w, d_in, d_out, inputs, y) }
    }
}

/// The shape of one panel's work: `rows` rows of x (stride `d_in`) and of the panel (stride
/// `stride`), `cols` columns of w (stride `d_out`) and of the panel.
#[derive(Clone, Copy)]
struct Dims {
    rows: usize,
    cols: usize,
    d_in: usize,
    d_out: usize,
    stride: usize,
}

/// `y += x[.., i..i + B] · w[i..i + B, ..]` over the panel's columns and rows, where `x` points
/// at x\[0\]\[i\], `w` at w\[i\]\[c0\] and `y` at the panel: chunks of [`CHUNK`] vectors, then one,
/// then single columns.
///
/// # Safety
/// `x` addresses `d.rows` rows (stride `d.d_in`) of `B` readable values, `w` `B` rows (stride
/// `d.d_out`) of `d.cols` values, `y` `d.rows` rows (stride `d.stride`) of `d.cols` values; the
/// CPU has `V`'s features.
#[inline(always)]
unsafe fn block<V: Lanes, const B: usize>(x: *const f32, w: *const f32, y: *mut f32, d: Dims) {
    let mut c = 0;
    // SAFETY (all calls): columns c..c + width lie within d.cols.
    while c + CHUNK * V::WIDTH <= d.cols {
        if d.cols < d.d_out {
            for b in 0..B {
                // SAFETY: a prefetch of any address is sound; wrapping_add makes no claim on it.
                unsafe { V::prefetch(w.wrapping_add((b + AHEAD) * d.d_out + c)) };
            }
        }
        unsafe { wide::<V, B>(x, w.add(c), y.add(c), d) };
        c += CHUNK * V::WIDTH;
    }
    while c + V::WIDTH <= d.cols {
        unsafe { chunk::<V, B, 1>(x, w.add(c), y.add(c), d) };
        c += V::WIDTH;
    }
    for c in c..d.cols {
        for m in 0..d.rows {
            // SAFETY: m < rows, c < cols, b < B, as the caller guarantees.
            unsafe {
                let mut s = *y.add(m * d.stride + c);
                for b in 0..B {
                    s += *x.add(m * d.d_in + b) * *w.add(b * d.d_out + c);
                }
                *y.add(m * d.stride + c) = s;
            }
        }
    }
}

/// One column chunk of [`CHUNK`] vectors, for every row: groups of [`GROUP`] rows in tiles of
/// [`VECTORS`] vectors, then the rest in tiles as wide as its rows allow (`across`).
///
/// # Safety
/// As [`block`], with `CHUNK × WIDTH` columns readable at `w` and writable at `y` in every row.
#[inline(always)]
unsafe fn wide<V: Lanes, const B: usize>(x: *const f32, w: *const f32, y: *mut f32, d: Dims) {
    let mut m = 0;
    // SAFETY (all calls): rows m..m + R lie within d.rows; the tiles cover CHUNK vectors.
    while m + GROUP <= d.rows {
        unsafe { across::<V, B, VECTORS, GROUP>(x.add(m * d.d_in), w, y.add(m * d.stride), d) };
        m += GROUP;
    }
    unsafe {
        let (x, y) = (x.add(m * d.d_in), y.add(m * d.stride));
        match d.rows - m {
            1 => across::<V, B, { across_rows(1) }, 1>(x, w, y, d),
            2 => across::<V, B, { across_rows(2) }, 2>(x, w, y, d),
            3 => across::<V, B, { across_rows(3) }, 3>(x, w, y, d),
            4 => across::<V, B, { across_rows(4) }, 4>(x, w, y, d),
            5 => across::<V, B, { across_rows(5) }, 5>(x, w, y, d),
            _ => {}
        }
    }
}

/// Vectors per tile for `rows` rows within a [`CHUNK`]: enough accumulators that the
/// multiply-adds of one weight row do not wait on each other (a lone row with one vector was
/// latency-bound: each multiply-add waited four cycles for the last), never fewer than
/// [`VECTORS`], and a divisor of `CHUNK`.
const fn across_rows(rows: usize) -> usize {
    let mut n = if rows < CHUNK { CHUNK / rows } else { 1 };
    while CHUNK % n != 0 {
        n -= 1;
    }
    if n < VECTORS {
        VECTORS
    } else {
        n
    }
}

/// The `R` rows' tiles of `N` vectors side by side across one [`CHUNK`].
///
/// # Safety
/// As [`wide`], for `R` rows.
#[inline(always)]
unsafe fn across<V: Lanes, const B: usize, const N: usize, const R: usize>(
    x: *const f32,
    w: *const f32,
    y: *mut f32,
    d: Dims,
) {
    for j in 0..CHUNK / N {
        let c = j * N * V::WIDTH;
        // SAFETY: c + N × WIDTH ≤ CHUNK × WIDTH.
        unsafe { tile::<V, B, N, R>(x, w.add(c), y.add(c), d) };
    }
}

/// One column chunk of `N` vectors, for every row: groups of [`GROUP`] rows, then the rest.
///
/// # Safety
/// As [`block`], with `N × WIDTH` columns readable at `w` and writable at `y` in every row.
#[inline(always)]
unsafe fn chunk<V: Lanes, const B: usize, const N: usize>(
    x: *const f32,
    w: *const f32,
    y: *mut f32,
    d: Dims,
) {
    let mut m = 0;
    // SAFETY (all calls): rows m..m + R lie within d.rows.
    while m + GROUP <= d.rows {
        unsafe { tile::<V, B, N, GROUP>(x.add(m * d.d_in), w, y.add(m * d.stride), d) };
        m += GROUP;
    }
    unsafe {
        let (x, y) = (x.add(m * d.d_in), y.add(m * d.stride));
        match d.rows - m {
            1 => tile::<V, B, N, 1>(x, w, y, d),
            2 => tile::<V, B, N, 2>(x, w, y, d),
            3 => tile::<V, B, N, 3>(x, w, y, d),
            4 => tile::<V, B, N, 4>(x, w, y, d),
            5 => tile::<V, B, N, 5>(x, w, y, d),
            _ => {}
        }
    }
}

/// The register tile: `R` rows × `N` vectors of `y` loaded, `B × R × N` multiply-adds with the
/// `B` weight rows, stored back. The loops over rows and vectors have constant bounds, so they
/// unroll and the accumulators live in registers; the loop over the weight rows unrolls
/// natively and stays a loop in wasm.
///
/// # Safety
/// `x` addresses `R` rows (stride `d.d_in`) of `B` values, `w` `B` rows (stride `d.d_out`) of
/// `N × WIDTH` values, `y` `R` rows (stride `d.stride`) of `N × WIDTH` values; the CPU has `V`'s
/// features.
#[inline(always)]
unsafe fn tile<V: Lanes, const B: usize, const N: usize, const R: usize>(
    x: *const f32,
    w: *const f32,
    y: *mut f32,
    d: Dims,
) {
    // SAFETY: every offset below is within the bounds the caller guarantees.
    unsafe {
        let mut acc = [[V::zero(); N]; R];
        for (r, acc) in acc.iter_mut().enumerate() {
            for (n, a) in acc.iter_mut().enumerate() {
                *a = V::load(y.add(r * d.stride + n * V::WIDTH));
            }
        }
        // A loop, not unrolled, in wasm: unrolled, LLVM loaded all `B × N` weight vectors ahead of
        // the multiply-adds and chained each accumulator's `B` of them; V8, which does not
        // reschedule, ran that with spills and each multiply-add waiting on the last (one row
        // from L2 at 12 GFLOP/s; as a loop 26, 4 rows 38 of a 40 peak).
        let weight_rows = if WASM { core::hint::black_box(B) } else { B };
        for b in 0..weight_rows {
            let mut wv = [V::zero(); N];
            for (n, v) in wv.iter_mut().enumerate() {
                *v = V::load(w.add(b * d.d_out + n * V::WIDTH));
            }
            for (r, acc) in acc.iter_mut().enumerate() {
                let xv = V::splat(*x.add(r * d.d_in + b));
                for (a, &v) in acc.iter_mut().zip(&wv) {
                    *a = a.mul_add(xv, v);
                }
            }
        }
        for (r, acc) in acc.iter().enumerate() {
            for (n, &a) in acc.iter().enumerate() {
                a.store(y.add(r * d.stride + n * V::WIDTH));
            }
        }
    }
}
