//! The one place that picks the instruction set: AVX2 + FMA where the CPU has them (asked at run
//! time, the answer cached), relaxed-SIMD FMA in the wasm build with the `relaxed` feature (the
//! page loads it only where the browser validates relaxed SIMD), and the portable lane arrays
//! everywhere else. [`run`] hands a `Kernel` (a generic loop with its arguments) to that
//! back-end; [`name`] and [`fused`] describe it.
//!
//! A file of its own so that the choice is written once and no loop and no back-end knows the
//! other: the loops (`blocked`, `packed`, `calibrate`) implement `Kernel`, the back-ends (`avx2`,
//! `relaxed`) run any `Kernel`, and only this file names the back-ends. The parent's entry points
//! run their loops through [`run`], a threaded call's shares through the parent's `over_inputs`
//! and `over_strips`.

#[cfg(all(target_arch = "x86_64", not(target_os = "none")))]
use super::avx2;
use super::lanes::Kernel;
#[cfg(not(all(target_arch = "wasm32", feature = "relaxed")))]
use super::lanes::LANES;
#[cfg(all(target_arch = "wasm32", feature = "relaxed"))]
use super::relaxed;

/// The back-ends this build has; only [`Backend::here`] makes one, so that holding
/// `Backend::Avx2` means the CPU has its features.
#[derive(Clone, Copy)]
enum Backend {
    /// `__m256` lanes with AVX2 + FMA intrinsics, on an x86_64 CPU that has both.
    #[cfg(all(target_arch = "x86_64", not(target_os = "none")))]
    Avx2,
    /// Two `v128` with relaxed-SIMD multiply-adds: the whole of the `relaxed` wasm build.
    #[cfg(all(target_arch = "wasm32", feature = "relaxed"))]
    Relaxed,
    /// The portable lane arrays (SIMD128 without FMA in the other wasm builds).
    #[cfg(not(all(target_arch = "wasm32", feature = "relaxed")))]
    Portable,
}

impl Backend {
    /// The best back-end here: the dispatch's one decision.
    #[inline(always)]
    fn here() -> Backend {
        #[cfg(all(target_arch = "x86_64", not(target_os = "none")))]
        if avx2::available() {
            return Backend::Avx2;
        }
        #[cfg(all(target_arch = "wasm32", feature = "relaxed"))]
        return Backend::Relaxed;
        #[cfg(not(all(target_arch = "wasm32", feature = "relaxed")))]
        Backend::Portable
    }
}

/// `kernel` on the best back-end here: its loop monomorphised with that back-end's lanes, inside
/// a function compiled with its CPU features (the portable one inlined into the caller).
///
/// # Safety
/// The kernel's own contract holds (the CPU features are this function's to check).
#[inline(always)]
pub(super) unsafe fn run<K: Kernel>(kernel: K) -> K::Output {
    match Backend::here() {
        #[cfg(all(target_arch = "x86_64", not(target_os = "none")))]
        // SAFETY: `here` chose AVX2 only because the CPU has AVX2 and FMA; the rest is the
        // caller's.
        Backend::Avx2 => unsafe { avx2::run(kernel) },
        #[cfg(all(target_arch = "wasm32", feature = "relaxed"))]
        // SAFETY: this module validated, so the browser has relaxed SIMD; the rest is the
        // caller's.
        Backend::Relaxed => unsafe { relaxed::run(kernel) },
        #[cfg(not(all(target_arch = "wasm32", feature = "relaxed")))]
        // SAFETY: the portable back-end needs no CPU feature; the rest is the caller's.
        Backend::Portable => unsafe { kernel.run::<[f32; LANES]>() },
    }
}

/// The back-end [`run`] picks, in words: "AVX2 + FMA", "SIMD128 + relaxed-SIMD FMA", "SIMD128 (no
/// FMA)", or "portable".
pub(super) fn name() -> &'static str {
    match Backend::here() {
        #[cfg(all(target_arch = "x86_64", not(target_os = "none")))]
        Backend::Avx2 => "AVX2 + FMA",
        #[cfg(all(target_arch = "wasm32", feature = "relaxed"))]
        Backend::Relaxed => "SIMD128 + relaxed-SIMD FMA",
        #[cfg(not(all(target_arch = "wasm32", feature = "relaxed")))]
        Backend::Portable => {
            if cfg!(all(target_arch = "wasm32", target_feature = "simd128")) {
                "SIMD128 (no FMA)"
            } else {
                "portable"
            }
        }
    }
}

/// Whether the back-end [`run`] picks fuses its multiply-adds.
pub(super) fn fused() -> bool {
    match Backend::here() {
        #[cfg(all(target_arch = "x86_64", not(target_os = "none")))]
        Backend::Avx2 => true,
        #[cfg(all(target_arch = "wasm32", feature = "relaxed"))]
        Backend::Relaxed => true,
        #[cfg(not(all(target_arch = "wasm32", feature = "relaxed")))]
        Backend::Portable => false,
    }
}
