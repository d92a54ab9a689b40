//! The relaxed-SIMD back-end of the wasm module's FMA build: two `v128` registers of four `f32`
//! each (the eight lanes of the other back-ends) and `f32x4.relaxed_madd`, which a browser on a
//! CPU with FMA runs as one fused multiply-add (SIMD128 has only a multiply, then an add).
//!
//! A file of its own because a module that holds one relaxed-SIMD instruction does not even
//! parse in a browser without the proposal (Safari today, Firefox before 146): it is compiled
//! only with the crate's `relaxed` feature, into the page's FMA modules, which the page loads only
//! where a tiny validation module says the browser has relaxed SIMD. Like `avx2`, it implements
//! [`Lanes`] and runs any [`Kernel`] with it in one `#[target_feature]` function, [`run`],
//! knowing none of the loops; the dispatch point, `backend`, calls it in that build.

use core::arch::wasm32::{
    f32x4_add, f32x4_extract_lane, f32x4_relaxed_madd, f32x4_splat, v128, v128_load, v128_store,
};

use super::lanes::{Kernel, Lanes};

/// Eight `f32` lanes in two SIMD128 registers.
type V = [v128; 2];

impl Lanes for [v128; 2] {
    const WIDTH: usize = 8;
    #[inline(always)]
    unsafe fn zero() -> Self {
        [f32x4_splat(0.0); 2]
    }
    #[inline(always)]
    unsafe fn splat(v: f32) -> Self {
        [f32x4_splat(v); 2]
    }
    #[inline(always)]
    unsafe fn load(p: *const f32) -> Self {
        // SAFETY: the caller guarantees 8 readable values (wasm loads need no alignment).
        unsafe { [v128_load(p.cast()), v128_load(p.add(4).cast())] }
    }
    #[inline(always)]
    unsafe fn store(self, p: *mut f32) {
        // SAFETY: the caller guarantees 8 writable values.
        unsafe {
            v128_store(p.cast(), self[0]);
            v128_store(p.add(4).cast(), self[1]);
        }
    }
    #[inline(always)]
    unsafe fn mul_add(self, a: Self, b: Self) -> Self {
        [
            f32x4_relaxed_madd(a[0], b[0], self[0]),
            f32x4_relaxed_madd(a[1], b[1], self[1]),
        ]
    }
    #[inline(always)]
    unsafe fn add(self, a: Self) -> Self {
        [f32x4_add(self[0], a[0]), f32x4_add(self[1], a[1])]
    }
    #[inline(always)]
    unsafe fn sum(self) -> f32 {
        // The portable back-end's order: ((a + e) + (c + g)) + ((b + f) + (d + h)).
        let s = f32x4_add(self[0], self[1]);
        let (a, b, c, d) = (
            f32x4_extract_lane::<0>(s),
            f32x4_extract_lane::<1>(s),
            f32x4_extract_lane::<2>(s),
            f32x4_extract_lane::<3>(s),
        );
        (a + c) + (b + d)
    }
}

/// `kernel` compiled with relaxed SIMD: its loop monomorphised with [`V`] and inlined here.
///
/// # Safety
/// The browser validated relaxed SIMD (or this module would not have loaded); the kernel's own
/// contract holds.
#[target_feature(enable = "simd128,relaxed-simd")]
pub(super) unsafe fn run<K: Kernel>(kernel: K) -> K::Output {
    // SAFETY: forwarded from the caller.
    unsafe { kernel.run::<V>() }
}
