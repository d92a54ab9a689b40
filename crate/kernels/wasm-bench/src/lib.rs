//! The kernels crate's matmul and calibrations as plain wasm exports over pointers into the
//! module's memory, for `tests/bench-kernel.mjs` (which lays the buffers out past the heap).

/// `y = x · w` for `rows` rows (`x` rows × d_in, `w` d_in × d_out, `y` rows × d_out), no bias.
///
/// # Safety
/// The pointers address that many floats in this module's memory.
#[no_mangle]
pub unsafe extern "C" fn matmul(
    x: *const f32,
    rows: usize,
    w: *const f32,
    d_in: usize,
    d_out: usize,
    y: *mut f32,
) {
    // SAFETY: the caller's.
    let (x, w, y) = unsafe {
        (
            core::slice::from_raw_parts(x, rows * d_in),
            core::slice::from_raw_parts(w, d_in * d_out),
            core::slice::from_raw_parts_mut(y, rows * d_out),
        )
    };
    specdec_kernels::matmul_few_rows(x, rows, w, d_in, d_out, None, y);
}

/// The streaming sum of `n` floats at `p`.
///
/// # Safety
/// `p` addresses `n` floats.
#[no_mangle]
pub unsafe extern "C" fn stream_sum(p: *const f32, n: usize) -> f32 {
    // SAFETY: the caller's.
    specdec_kernels::stream_sum(unsafe { core::slice::from_raw_parts(p, n) })
}

/// Floating-point operations of `iterations` rounds of the FMA peak loop.
#[no_mangle]
pub extern "C" fn fma_peak(iterations: usize) -> u64 {
    specdec_kernels::fma_peak(iterations)
}

/// `w` (d_in × d_out) packed for [`matmul_packed`]: a handle to free with [`unpack`].
///
/// # Safety
/// `w` addresses d_in × d_out floats.
#[no_mangle]
pub unsafe extern "C" fn pack(
    w: *const f32,
    d_in: usize,
    d_out: usize,
) -> *mut specdec_kernels::Packed {
    // SAFETY: the caller's.
    let w = unsafe { core::slice::from_raw_parts(w, d_in * d_out) };
    Box::into_raw(Box::new(specdec_kernels::Packed::new(w, d_in, d_out)))
}

/// Frees what [`pack`] returned.
///
/// # Safety
/// `p` came from [`pack`] and is not used again.
#[no_mangle]
pub unsafe extern "C" fn unpack(p: *mut specdec_kernels::Packed) {
    // SAFETY: the caller's.
    drop(unsafe { Box::from_raw(p) });
}

/// `y = x · w` for `rows` rows over weights [`pack`]ed.
///
/// # Safety
/// `x` and `y` address rows × d_in and rows × d_out floats; `p` came from [`pack`].
#[no_mangle]
pub unsafe extern "C" fn matmul_packed(
    x: *const f32,
    rows: usize,
    p: *const specdec_kernels::Packed,
    y: *mut f32,
) {
    // SAFETY: the caller's.
    let (p, x, y) = unsafe {
        let p = &*p;
        (
            p,
            core::slice::from_raw_parts(x, rows * p.d_in()),
            core::slice::from_raw_parts_mut(y, rows * p.d_out()),
        )
    };
    specdec_kernels::matmul_packed(x, rows, p, None, y);
}
