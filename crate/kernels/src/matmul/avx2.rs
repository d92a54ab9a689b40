//! The AVX2 + FMA back-end, chosen at run time: `__m256` lanes and one `#[target_feature]`
//! function, [`run`], into which any of the generic loops is inlined.
//!
//! A file of its own because it is compiled only on x86_64 (the parent declares it under that
//! `cfg`) and holds all of the crate's intrinsics. It implements [`Lanes`] and runs a [`Kernel`]
//! (a loop of `blocked`, `packed` or `calibrate` with its arguments) with it, knowing none of
//! them; the dispatch point, `backend`, calls it after [`available`] says yes.

extern crate std;

use core::arch::x86_64::{
    __m256, _mm256_add_ps, _mm256_broadcast_ss, _mm256_castps256_ps128, _mm256_extractf128_ps,
    _mm256_fmadd_ps, _mm256_loadu_ps, _mm256_setzero_ps, _mm256_storeu_ps, _mm_add_ps, _mm_add_ss,
    _mm_cvtss_f32, _mm_movehl_ps, _mm_prefetch, _mm_shuffle_ps, _MM_HINT_T0,
};
use core::sync::atomic::{AtomicU8, Ordering};

use super::lanes::{Kernel, Lanes};

/// One AVX register of eight `f32`.
type V = __m256;

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
            let yes = std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma");
            DETECTED.store(if yes { 2 } else { 1 }, Ordering::Relaxed);
            yes
        }
        v => v == 2,
    }
}

impl Lanes for __m256 {
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

/// `kernel` compiled for AVX2 + FMA: its loop monomorphised with [`V`] and inlined here.
///
/// # Safety
/// The CPU has AVX2 and FMA; the kernel's own contract holds.
#[target_feature(enable = "avx2,fma")]
pub(super) unsafe fn run<K: Kernel>(kernel: K) -> K::Output {
    // SAFETY: forwarded from the caller.
    unsafe { kernel.run::<V>() }
}
