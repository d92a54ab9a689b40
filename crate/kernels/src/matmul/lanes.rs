//! The `Lanes` trait, one SIMD vector of `f32` and the few operations the kernels need, its
//! portable back-end (fixed-size lane arrays, element-wise loops of a constant length that the
//! compiler turns into SIMD where it has some: SIMD128 on wasm, AVX natively), and the `Kernel`
//! trait, a loop generic over `Lanes` together with its arguments.
//!
//! A file of its own because everything else is written against it: the matmul's loops in
//! [`super::blocked`] and [`super::packed`] and the calibrations in [`super::calibrate`], which
//! implement `Kernel`; the AVX2 and relaxed-SIMD back-ends, which implement `Lanes` and run any
//! `Kernel` with their lanes under their CPU features; and the one dispatch point, `backend`,
//! which picks the back-end a `Kernel` runs on. It uses nothing of theirs.

/// The width of the portable back-end's lane arrays (one AVX register, two SIMD128 registers).
pub(super) const LANES: usize = 8;

/// One SIMD vector of `f32` lanes and the few operations the kernels need. The methods are
/// `unsafe` because a back-end may need CPU features that the caller must have checked, and
/// because they read and write through raw pointers.
pub(super) trait Lanes: Copy {
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

/// A loop generic over [`Lanes`], with its arguments: what the dispatch point hands to a
/// back-end, which monomorphises [`run`](Kernel::run) with its lanes inside a function compiled
/// with its CPU features (the implementations are `#[inline(always)]`, like the loops they call,
/// so that each back-end's function is one piece of code with its features).
pub(super) trait Kernel {
    /// What the loop returns.
    type Output;
    /// The loop on `V`'s lanes.
    ///
    /// # Safety
    /// The CPU has `V`'s features, and the loop's own contract (its implementation's `# Safety`)
    /// holds.
    unsafe fn run<V: Lanes>(self) -> Self::Output;
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
