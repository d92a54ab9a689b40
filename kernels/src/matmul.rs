//! Matrix multiply for a few rows that streams the weights once, and two calibration kernels
//! (memory bandwidth, peak FMA rate) that say what "memory-bound" means on this machine.
//!
//! A decoder step multiplies a handful of rows (1 for plain decoding, k for verifying k draft
//! tokens) by weight matrices far larger than the caches. The time is then the weights' bytes over
//! the memory bandwidth, whatever k is, provided every weight byte is read from memory once per
//! call and not once per row: that is what makes verification nearly free. The weights are
//! `[d_in, d_out]` row-major (burn's `Linear` layout), so the kernel takes the "axpy" form: a block
//! of `BLOCK` consecutive weight rows (that many sequential streams, which the hardware
//! prefetcher follows), and for each column chunk of that block and each group of up to
//! `GROUP` output rows, `y`'s chunk is loaded into registers, gets `BLOCK × GROUP` broadcast
//! multiply-adds, and is stored back. The weight chunk is read from memory by the first row group
//! and from L1 by the others. `y` is worked on in column panels copied into a 16 KiB buffer with
//! padded rows: in place, with `d_out` a multiple of 1024, every row's chunk maps to the same L1
//! set and the rows evict each other (T(16) was 35 ms instead of 20–23 ms on the benchmark). The
//! panels read each weight row in pieces, so the AVX2 back-end prefetches `AHEAD` rows ahead
//! when a panel is narrower than the matrix (a full-width panel reads whole rows, which the
//! hardware prefetcher follows better unaided).
//!
//! One algorithm, two back-ends behind the `Lanes` trait: AVX2 + FMA intrinsics on x86_64 (chosen
//! at run time, the answer cached), and fixed-size lane arrays everywhere else, which the compiler
//! turns into SIMD where it has some (SIMD128 on wasm, without FMA). The portable back-end is also
//! the reference the tests compare the fast one against.

use core::hint::black_box;

/// The most rows [`matmul_few_rows`] is meant for: beyond it the weights are no longer the
/// bottleneck and a general GEMM (with packing, register blocking over rows) is faster. It stays
/// correct for any number of rows.
pub const FEW_ROWS: usize = 16;

/// Consecutive weight rows (inputs) handled per pass over `y`: the number of parallel memory
/// streams, and how many multiply-adds each `y` load and store is shared between.
const BLOCK: usize = 8;

/// Vectors per column chunk of the register tile.
const VECTORS: usize = 2;

/// How many weight rows ahead of the current block the AVX2 back-end prefetches: the panels
/// read each weight row in pieces, which the hardware prefetcher does not foresee.
const AHEAD: usize = 4 * BLOCK;

/// Output rows per register tile: `GROUP × VECTORS` = 12 accumulators, the two weight vectors
/// and a broadcast take 15 of the 16 AVX registers. Six rows were faster than four at k = 8–16
/// (fewer weight reloads per multiply-add) and no slower below.
const GROUP: usize = 6;

/// y\[m\]\[o\] = bias\[o\] + Σᵢ x\[m\]\[i\] · w\[i\]\[o\], for m in 0..rows.
///
/// `x`: rows × d_in row-major; `w`: d_in × d_out row-major (burn's `Linear` weight layout
/// `[d_input, d_output]`); `bias`: d_out values or `None` (zero); `y`: rows × d_out, overwritten.
/// No alignment is assumed. Every weight is read once per call, whatever `rows` is; meant for
/// rows ≤ [`FEW_ROWS`], correct for any.
///
/// # Panics
/// If a slice's length does not match the dimensions.
#[inline(never)]
pub fn matmul_few_rows(
    x: &[f32],
    rows: usize,
    w: &[f32],
    d_in: usize,
    d_out: usize,
    bias: Option<&[f32]>,
    y: &mut [f32],
) {
    check_shapes(x, rows, w, d_in, d_out, bias, y);
    init_with_bias(y, d_out, bias);
    #[cfg(all(target_arch = "x86_64", not(target_os = "none")))]
    if avx2::available() {
        // SAFETY: the CPU has AVX2 and FMA (just checked); the lengths were checked above.
        unsafe { avx2::matmul_acc(x, rows, w, d_in, d_out, y) };
        return;
    }
    // SAFETY: the portable back-end needs no CPU feature; the lengths were checked above.
    unsafe { accumulate::<[f32; LANES]>(x, rows, w, d_in, d_out, y) };
}

/// [`matmul_few_rows`] on the portable back-end only, whatever the CPU: the reference the tests
/// hold the fast path to, and the baseline the benchmark compares it with.
///
/// # Panics
/// As [`matmul_few_rows`].
#[inline(never)]
pub fn matmul_few_rows_portable(
    x: &[f32],
    rows: usize,
    w: &[f32],
    d_in: usize,
    d_out: usize,
    bias: Option<&[f32]>,
    y: &mut [f32],
) {
    check_shapes(x, rows, w, d_in, d_out, bias, y);
    init_with_bias(y, d_out, bias);
    // SAFETY: the portable back-end needs no CPU feature; the lengths were checked above.
    unsafe { accumulate::<[f32; LANES]>(x, rows, w, d_in, d_out, y) };
}

/// Σ of every element of `data`, read once at the memory's streaming speed (eight independent
/// vector accumulators): a calibration kernel for "bytes / bandwidth". The order of the additions
/// differs from a left-to-right sum, so the result can differ from one in the last bits.
#[inline(never)]
pub fn stream_sum(data: &[f32]) -> f32 {
    #[cfg(all(target_arch = "x86_64", not(target_os = "none")))]
    if avx2::available() {
        // SAFETY: the CPU has AVX2 and FMA (just checked).
        return unsafe { avx2::stream_sum(data) };
    }
    // SAFETY: the portable back-end needs no CPU feature.
    unsafe { sum_with::<[f32; LANES]>(data) }
}

/// A compute-bound calibration: `iterations` rounds of [`FMA_CHAINS`] independent vector
/// multiply-adds held in registers. Returns the number of floating-point operations done (two
/// per lane per multiply-add), so that a caller timing it gets the core's peak GFLOP/s. The
/// inputs and the result pass through [`black_box`], so the loop cannot be optimised away.
#[inline(never)]
pub fn fma_peak(iterations: usize) -> u64 {
    #[cfg(all(target_arch = "x86_64", not(target_os = "none")))]
    if avx2::available() {
        // SAFETY: the CPU has AVX2 and FMA (just checked).
        return unsafe { avx2::fma_peak(iterations) };
    }
    // SAFETY: the portable back-end needs no CPU feature.
    unsafe { fma_with::<[f32; LANES]>(iterations) }
}

/// Independent multiply-add chains in [`fma_peak`]: enough to cover the FMA latency (4 cycles)
/// times the FMA units (2) of a current x86 core, with room to spare.
pub const FMA_CHAINS: usize = 10;

/// The width of the portable back-end's lane arrays (one AVX register, two SIMD128 registers).
const LANES: usize = 8;

/// Asserts that the slices' lengths agree with the dimensions.
fn check_shapes(
    x: &[f32],
    rows: usize,
    w: &[f32],
    d_in: usize,
    d_out: usize,
    bias: Option<&[f32]>,
    y: &[f32],
) {
    let size = |a: usize, b: usize| {
        a.checked_mul(b)
            .unwrap_or_else(|| panic!("matmul_few_rows: {a} × {b} overflows usize"))
    };
    assert_eq!(
        x.len(),
        size(rows, d_in),
        "matmul_few_rows: x has {} values, not rows × d_in = {rows} × {d_in}",
        x.len()
    );
    assert_eq!(
        w.len(),
        size(d_in, d_out),
        "matmul_few_rows: w has {} values, not d_in × d_out = {d_in} × {d_out}",
        w.len()
    );
    assert_eq!(
        y.len(),
        size(rows, d_out),
        "matmul_few_rows: y has {} values, not rows × d_out = {rows} × {d_out}",
        y.len()
    );
    if let Some(b) = bias {
        assert_eq!(
            b.len(),
            d_out,
            "matmul_few_rows: bias has {} values, not d_out = {d_out}",
            b.len()
        );
    }
}

/// Every `d_out`-long row of `y` set to `bias` (or to zero).
fn init_with_bias(y: &mut [f32], d_out: usize, bias: Option<&[f32]>) {
    match bias {
        Some(b) if d_out > 0 => y.chunks_exact_mut(d_out).for_each(|r| r.copy_from_slice(b)),
        _ => y.fill(0.0),
    }
}

/// One SIMD vector of `f32` lanes and the few operations the kernels need. The methods are
/// `unsafe` because a back-end may need CPU features that the caller must have checked, and
/// because they read and write through raw pointers.
trait Lanes: Copy {
    /// Lanes per vector.
    const WIDTH: usize;
    /// All lanes zero.
    ///
    /// # Safety
    /// The CPU has the back-end's features.
    unsafe fn zero() -> Self;
    /// All lanes `v`.
    ///
    /// # Safety
    /// The CPU has the back-end's features.
    unsafe fn splat(v: f32) -> Self;
    /// `WIDTH` values from `p` (any alignment).
    ///
    /// # Safety
    /// `p..p + WIDTH` is readable; the CPU has the back-end's features.
    unsafe fn load(p: *const f32) -> Self;
    /// The lanes written to `p..p + WIDTH` (any alignment).
    ///
    /// # Safety
    /// `p..p + WIDTH` is writable; the CPU has the back-end's features.
    unsafe fn store(self, p: *mut f32);
    /// `self + a · b`, lane by lane (fused where the back-end has FMA).
    ///
    /// # Safety
    /// The CPU has the back-end's features.
    unsafe fn mul_add(self, a: Self, b: Self) -> Self;
    /// `self + a`, lane by lane.
    ///
    /// # Safety
    /// The CPU has the back-end's features.
    unsafe fn add(self, a: Self) -> Self;
    /// The sum of the lanes.
    ///
    /// # Safety
    /// The CPU has the back-end's features.
    unsafe fn sum(self) -> f32;
    /// A hint to bring the cache line holding `p` into the caches; `p` need not be valid
    /// (a prefetch never faults). The portable back-end does nothing.
    ///
    /// # Safety
    /// The CPU has the back-end's features.
    #[inline(always)]
    unsafe fn prefetch(_p: *const f32) {}
}

/// The portable back-end: plain lane arrays, element-wise loops of a fixed length that the
/// compiler vectorises (mul + add, as FMA cannot be assumed).
impl Lanes for [f32; LANES] {
    const WIDTH: usize = LANES;
    #[inline(always)]
    unsafe fn zero() -> Self {
        [0.0; LANES]
    }
    #[inline(always)]
    unsafe fn splat(v: f32) -> Self {
        [v; LANES]
    }
    #[inline(always)]
    unsafe fn load(p: *const f32) -> Self {
        // SAFETY: the caller guarantees LANES readable values at p.
        unsafe { p.cast::<[f32; LANES]>().read_unaligned() }
    }
    #[inline(always)]
    unsafe fn store(self, p: *mut f32) {
        // SAFETY: the caller guarantees LANES writable values at p.
        unsafe { p.cast::<[f32; LANES]>().write_unaligned(self) }
    }
    #[inline(always)]
    unsafe fn mul_add(self, a: Self, b: Self) -> Self {
        let mut r = self;
        for ((r, a), b) in r.iter_mut().zip(a).zip(b) {
            *r += a * b;
        }
        r
    }
    #[inline(always)]
    unsafe fn add(self, a: Self) -> Self {
        let mut r = self;
        for (r, a) in r.iter_mut().zip(a) {
            *r += a;
        }
        r
    }
    #[inline(always)]
    unsafe fn sum(self) -> f32 {
        let [a, b, c, d, e, f, g, h] = self;
        ((a + e) + (c + g)) + ((b + f) + (d + h))
    }
}

/// Floats of the on-stack `y` panel (16 KiB, half of a 32 KiB L1): a panel of `rows` rows is
/// `PANEL / rows` columns wide (rounded to whole chunks).
const PANEL: usize = 4096;

/// Padding of each panel row, in floats: the rows' stride is then not a multiple of 4 KiB, so the
/// same chunk of different rows falls in different L1 sets (in place, with `d_out` = 1024 or
/// 3072, all sixteen rows' chunks would compete for the eight ways of one set).
const PAD: usize = 16;

/// The `y` panel, aligned to a cache line so that every vector access is within one line.
#[repr(C, align(64))]
struct Panel([f32; PANEL + FEW_ROWS * PAD]);

/// `y += x · w` (y already holds the bias), blocked as the module header describes: up to
/// [`FEW_ROWS`] rows at a time (each such group streams the weights once), and for them
/// column panels copied into an L1-resident buffer, over which all of `d_in` runs in blocks.
///
/// # Safety
/// The slices have the lengths [`check_shapes`] asserts; the CPU has `V`'s features.
#[inline(always)]
unsafe fn accumulate<V: Lanes>(
    x: &[f32],
    rows: usize,
    w: &[f32],
    d_in: usize,
    d_out: usize,
    y: &mut [f32],
) {
    let chunk = VECTORS * V::WIDTH;
    let mut panel = Panel([0.0; PANEL + FEW_ROWS * PAD]);
    let mut r0 = 0;
    while r0 < rows {
        let rr = FEW_ROWS.min(rows - r0);
        let width = (PANEL / rr / chunk * chunk).min(d_out);
        let stride = width + PAD;
        let mut c0 = 0;
        while c0 < d_out {
            let pw = width.min(d_out - c0);
            let buf = &mut panel.0[..rr * stride];
            for m in 0..rr {
                let row = (r0 + m) * d_out + c0;
                buf[m * stride..m * stride + pw].copy_from_slice(&y[row..row + pw]);
            }
            let (xp, wp, bp) = (x[r0 * d_in..].as_ptr(), w.as_ptr(), buf.as_mut_ptr());
            let dims = Dims {
                rows: rr,
                cols: pw,
                d_in,
                d_out,
                stride,
            };
            let mut i = 0;
            // SAFETY (both loops): inputs i..i + B lie within d_in, so x[r0 + m][i..i + B] and
            // w[i..i + B][c0..c0 + pw] are in bounds for every m < rr; the panel holds rr rows
            // of pw values at `stride`.
            while i + BLOCK <= d_in {
                unsafe { block::<V, BLOCK>(xp.add(i), wp.add(i * d_out + c0), bp, dims) };
                i += BLOCK;
            }
            // The last d_in % BLOCK inputs one at a time (real widths have none).
            while i < d_in {
                unsafe { block::<V, 1>(xp.add(i), wp.add(i * d_out + c0), bp, dims) };
                i += 1;
            }
            for m in 0..rr {
                let row = (r0 + m) * d_out + c0;
                y[row..row + pw].copy_from_slice(&buf[m * stride..m * stride + pw]);
            }
            c0 += pw;
        }
        r0 += rr;
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
/// at x\[0\]\[i\], `w` at w\[i\]\[c0\] and `y` at the panel: chunks of [`VECTORS`] vectors, then one,
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
    while c + VECTORS * V::WIDTH <= d.cols {
        if d.cols < d.d_out {
            for b in 0..B {
                // SAFETY: a prefetch of any address is sound; wrapping_add makes no claim on it.
                unsafe { V::prefetch(w.wrapping_add((b + AHEAD) * d.d_out + c)) };
            }
        }
        unsafe { chunk::<V, B, VECTORS>(x, w.add(c), y.add(c), d) };
        c += VECTORS * V::WIDTH;
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
/// `B` weight rows, stored back. All loops have constant bounds, so they unroll and the
/// accumulators live in registers.
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
        for b in 0..B {
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

/// Σ data with eight independent vector accumulators (so the adds do not wait on each other).
///
/// # Safety
/// The CPU has `V`'s features.
#[inline(always)]
unsafe fn sum_with<V: Lanes>(data: &[f32]) -> f32 {
    const K: usize = 8;
    let step = K * V::WIDTH;
    let split = data.len() / step * step;
    // SAFETY: every load reads step values starting below split ≤ data.len().
    unsafe {
        let mut acc = [V::zero(); K];
        let p = data.as_ptr();
        let mut i = 0;
        while i < split {
            for (k, a) in acc.iter_mut().enumerate() {
                *a = a.add(V::load(p.add(i + k * V::WIDTH)));
            }
            i += step;
        }
        let mut s = V::zero();
        for a in acc {
            s = s.add(a);
        }
        s.sum() + data[split..].iter().sum::<f32>()
    }
}

/// [`FMA_CHAINS`] chains of `a = a · m + c` (bounded: |m| < 1), `iterations` rounds.
///
/// # Safety
/// The CPU has `V`'s features.
#[inline(always)]
unsafe fn fma_with<V: Lanes>(iterations: usize) -> u64 {
    // SAFETY: register arithmetic only; the caller guarantees the features.
    unsafe {
        let m = V::splat(black_box(0.999_9));
        let c = V::splat(black_box(1.0e-3));
        let mut acc = [V::splat(black_box(0.5)); FMA_CHAINS];
        for _ in 0..black_box(iterations) {
            for a in acc.iter_mut() {
                *a = c.mul_add(*a, m);
            }
        }
        let mut s = V::zero();
        for a in acc {
            s = s.add(a);
        }
        black_box(s.sum());
    }
    (iterations * FMA_CHAINS * V::WIDTH * 2) as u64
}

/// The AVX2 + FMA back-end, chosen at run time: `__m256` lanes and `#[target_feature]` entry
/// points into which the generic kernels are inlined.
#[cfg(all(target_arch = "x86_64", not(target_os = "none")))]
mod avx2 {
    extern crate std;

    use core::arch::x86_64::{
        __m256, _mm256_add_ps, _mm256_broadcast_ss, _mm256_castps256_ps128, _mm256_extractf128_ps,
        _mm256_fmadd_ps, _mm256_loadu_ps, _mm256_setzero_ps, _mm256_storeu_ps, _mm_add_ps,
        _mm_add_ss, _mm_cvtss_f32, _mm_movehl_ps, _mm_prefetch, _mm_shuffle_ps, _MM_HINT_T0,
    };
    use core::sync::atomic::{AtomicU8, Ordering};

    /// One AVX register of eight `f32`.
    pub(super) type V = __m256;

    /// Whether the CPU has AVX2 and FMA: 0 not yet asked, 1 no, 2 yes.
    static DETECTED: AtomicU8 = AtomicU8::new(0);

    /// Whether the AVX2 + FMA back-end may run, detected once and then read from [`DETECTED`].
    #[inline(always)]
    pub(super) fn available() -> bool {
        if cfg!(all(target_feature = "avx2", target_feature = "fma")) {
            return true;
        }
        match DETECTED.load(Ordering::Relaxed) {
            0 => {
                let yes =
                    std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma");
                DETECTED.store(if yes { 2 } else { 1 }, Ordering::Relaxed);
                yes
            }
            v => v == 2,
        }
    }

    impl super::Lanes for __m256 {
        const WIDTH: usize = 8;
        #[inline(always)]
        unsafe fn zero() -> Self {
            // SAFETY: the caller guarantees AVX.
            unsafe { _mm256_setzero_ps() }
        }
        #[inline(always)]
        unsafe fn splat(v: f32) -> Self {
            // SAFETY: the caller guarantees AVX.
            unsafe { _mm256_broadcast_ss(&v) }
        }
        #[inline(always)]
        unsafe fn load(p: *const f32) -> Self {
            // SAFETY: the caller guarantees 8 readable values and AVX.
            unsafe { _mm256_loadu_ps(p) }
        }
        #[inline(always)]
        unsafe fn store(self, p: *mut f32) {
            // SAFETY: the caller guarantees 8 writable values and AVX.
            unsafe { _mm256_storeu_ps(p, self) }
        }
        #[inline(always)]
        unsafe fn mul_add(self, a: Self, b: Self) -> Self {
            // SAFETY: the caller guarantees FMA.
            unsafe { _mm256_fmadd_ps(a, b, self) }
        }
        #[inline(always)]
        unsafe fn add(self, a: Self) -> Self {
            // SAFETY: the caller guarantees AVX.
            unsafe { _mm256_add_ps(self, a) }
        }
        #[inline(always)]
        unsafe fn sum(self) -> f32 {
            // SAFETY: the caller guarantees AVX.
            unsafe {
                let q = _mm_add_ps(_mm256_castps256_ps128(self), _mm256_extractf128_ps(self, 1));
                let h = _mm_add_ps(q, _mm_movehl_ps(q, q));
                _mm_cvtss_f32(_mm_add_ss(h, _mm_shuffle_ps(h, h, 1)))
            }
        }
        #[inline(always)]
        unsafe fn prefetch(p: *const f32) {
            // SAFETY: a prefetch is a hint that never faults, whatever the address.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(p.cast()) }
        }
    }

    /// [`super::accumulate`] compiled for AVX2 + FMA.
    ///
    /// # Safety
    /// The CPU has AVX2 and FMA; the slices have the lengths `check_shapes` asserts.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn matmul_acc(
        x: &[f32],
        rows: usize,
        w: &[f32],
        d_in: usize,
        d_out: usize,
        y: &mut [f32],
    ) {
        // SAFETY: forwarded from the caller.
        unsafe { super::accumulate::<V>(x, rows, w, d_in, d_out, y) }
    }

    /// [`super::sum_with`] compiled for AVX2 + FMA.
    ///
    /// # Safety
    /// The CPU has AVX2 and FMA.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn stream_sum(data: &[f32]) -> f32 {
        // SAFETY: forwarded from the caller.
        unsafe { super::sum_with::<V>(data) }
    }

    /// [`super::fma_with`] compiled for AVX2 + FMA.
    ///
    /// # Safety
    /// The CPU has AVX2 and FMA.
    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn fma_peak(iterations: usize) -> u64 {
        // SAFETY: forwarded from the caller.
        unsafe { super::fma_with::<V>(iterations) }
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use super::*;
    use std::vec::Vec;

    /// Deterministic values in [−1, 1) from a 64-bit LCG.
    fn values(n: usize, seed: u64) -> Vec<f32> {
        let mut s = seed.wrapping_mul(6_364_136_223_846_793_005) | 1;
        (0..n)
            .map(|_| {
                s = s
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                ((s >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0
            })
            .collect()
    }

    /// The naive triple loop in f64, with Σ|bias| + Σ|x·w| per output (the scale of its rounding).
    fn naive(
        x: &[f32],
        rows: usize,
        w: &[f32],
        d_in: usize,
        d_out: usize,
        bias: Option<&[f32]>,
    ) -> (Vec<f64>, Vec<f64>) {
        let mut y = std::vec![0.0; rows * d_out];
        let mut mag = std::vec![0.0; rows * d_out];
        for m in 0..rows {
            for o in 0..d_out {
                let b = bias.map_or(0.0, |b| f64::from(b[o]));
                let (mut s, mut a) = (b, b.abs());
                for i in 0..d_in {
                    let p = f64::from(x[m * d_in + i]) * f64::from(w[i * d_out + o]);
                    s += p;
                    a += p.abs();
                }
                y[m * d_out + o] = s;
                mag[m * d_out + o] = a;
            }
        }
        (y, mag)
    }

    type Matmul = fn(&[f32], usize, &[f32], usize, usize, Option<&[f32]>, &mut [f32]);

    /// `f` against [`naive`] over rows 1..=20 and widths with every tail (1, 3, 7, 17, 64, 160,
    /// 257), with and without bias; `y` starts as garbage, which must be overwritten.
    fn check_against_naive(f: Matmul) {
        const DIMS: [usize; 7] = [1, 3, 7, 17, 64, 160, 257];
        let mut seed = 1;
        for rows in 1..=20 {
            for d_in in DIMS {
                for d_out in DIMS {
                    for with_bias in [false, true] {
                        seed += 1;
                        let x = values(rows * d_in, seed);
                        let w = values(d_in * d_out, seed + 1000);
                        let b = values(d_out, seed + 2000);
                        let bias = with_bias.then_some(&b[..]);
                        let mut y = std::vec![f32::NAN; rows * d_out];
                        f(&x, rows, &w, d_in, d_out, bias, &mut y);
                        let (want, mag) = naive(&x, rows, &w, d_in, d_out, bias);
                        for (j, (&g, (&t, &a))) in y.iter().zip(want.iter().zip(&mag)).enumerate() {
                            assert!(
                                (f64::from(g) - t).abs() <= 1e-5 * a + 1e-30,
                                "rows {rows}, {d_in} → {d_out}, bias {with_bias}, y[{j}] = {g}, \
                                 want {t}"
                            );
                        }
                    }
                }
            }
        }
    }

    /// The dispatched path (AVX2 + FMA where the CPU has it) equals the naive product.
    #[test]
    fn fast_path_equals_the_naive_product() {
        check_against_naive(matmul_few_rows);
    }

    /// The portable back-end alone equals the naive product.
    #[test]
    fn portable_path_equals_the_naive_product() {
        check_against_naive(matmul_few_rows_portable);
    }

    /// No rows, no inputs (y = bias) and no outputs are fine.
    #[test]
    fn empty_dimensions_give_the_bias() {
        let b = [1.5f32, -2.0, 3.0];
        let mut y = [9.0f32; 6];
        matmul_few_rows(&[], 2, &[], 0, 3, Some(&b), &mut y);
        assert_eq!(y, [1.5, -2.0, 3.0, 1.5, -2.0, 3.0]);
        matmul_few_rows(&[], 2, &[], 0, 3, None, &mut y);
        assert_eq!(y, [0.0; 6]);
        matmul_few_rows(&[], 0, &[1.0; 12], 4, 3, Some(&b), &mut []);
        matmul_few_rows(&[1.0; 8], 2, &[], 4, 0, None, &mut []);
    }

    /// Inconsistent lengths panic and name the offending slice.
    #[test]
    #[should_panic(expected = "w has 11 values")]
    fn a_short_weight_matrix_panics() {
        let mut y = [0.0f32; 3];
        matmul_few_rows(&[1.0; 4], 1, &[0.0; 11], 4, 3, None, &mut y);
    }

    /// Inconsistent lengths panic and name the offending slice.
    #[test]
    #[should_panic(expected = "bias has 2 values")]
    fn a_short_bias_panics() {
        let mut y = [0.0f32; 3];
        matmul_few_rows(&[1.0; 4], 1, &[0.0; 12], 4, 3, Some(&[0.0; 2]), &mut y);
    }

    /// [`stream_sum`] equals an f64 sum at every length around its 64-value steps.
    #[test]
    fn stream_sum_equals_a_plain_sum() {
        for n in (0..300).chain([4096, 100_003]) {
            let data = values(n, n as u64 + 7);
            let want: f64 = data.iter().map(|&v| f64::from(v)).sum();
            let mag: f64 = data.iter().map(|&v| f64::from(v).abs()).sum();
            let got = f64::from(stream_sum(&data));
            assert!(
                (got - want).abs() <= 1e-6 * mag + 1e-30,
                "n {n}: {got} ≠ {want}"
            );
            let portable = f64::from(unsafe { sum_with::<[f32; LANES]>(&data) });
            assert!(
                (portable - want).abs() <= 1e-6 * mag + 1e-30,
                "n {n}: {portable}"
            );
        }
    }

    /// [`fma_peak`] counts two operations per lane per multiply-add and scales with iterations.
    #[test]
    fn fma_peak_counts_its_operations() {
        assert_eq!(fma_peak(0), 0);
        assert_eq!(fma_peak(1000), 1000 * FMA_CHAINS as u64 * 8 * 2);
    }
}
