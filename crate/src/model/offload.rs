//! Offloading, measured (lecture §4.6; FlexGen, SpecInfer's offloading mode): the target's
//! weights live in host memory and cross to the device before every target call, so a call costs
//! the crossing of every weight byte plus the forward; fewer target calls means fewer crossings,
//! which is where speculation gains most.
//!
//! [`offloaded`] reads a model's parameters back once into host memory (one shared, reference-
//! counted copy each) and returns the same model with an [`Offload`]: from then on every forward
//! first writes each parameter's host bytes into that parameter's device buffer — on WebGPU
//! `GPUQueue.writeBuffer` from the wasm heap, natively wgpu's queue write (or a copy into the
//! mapped buffer when the queue is idle) — and only then runs the kernels, which read what just
//! crossed. The bytes are the model's own, so the answers do not change; a test writes another
//! model's bytes into the buffers to show that the forward reads them.
//!
//! Only on a GPU (the wgpu backend): on the CPU backends the weights already live in host memory,
//! and "crossing" would be a copy inside it. `measure::transfer` times the crossing alone (every
//! parameter written, then the queue drained): the bandwidth the roofline model's PCIe link
//! stands for on this device.

use super::decoder::Decoder;
use crate::error::{Error, Text};

/// Why a model cannot be offloaded on the CPU backends.
fn on_the_cpu() -> Error {
    Error::Unavailable {
        what: "offloading",
        why: Text::new(
            "on the CPU backends (flex, ndarray) the weights already live in host memory: offloading needs a GPU (the wgpu backend, WebGPU in the page)",
            "在 CPU 后端（flex、ndarray）上权重本来就在主机内存里：卸载需要 GPU（wgpu 后端，页面里的 WebGPU）",
        ),
    }
}

/// `model` with its weights offloaded: the same parameters on the same device, whose host copies
/// cross into them before every forward.
pub async fn offloaded(model: &Decoder) -> Result<Decoder, Error> {
    offloaded_from(model, model).await
}

/// `model` offloaded with `host`'s weights as the host copy (the same shapes): the forward then
/// computes with `host`'s weights, the evidence that it reads what crossed. Not an API.
#[doc(hidden)]
pub async fn offloaded_from(model: &Decoder, host: &Decoder) -> Result<Decoder, Error> {
    #[cfg(feature = "wgpu")]
    return gpu::offloaded_from(model, host).await;
    #[cfg(not(feature = "wgpu"))]
    {
        let _ = (model, host);
        Err(on_the_cpu())
    }
}

/// The host copy and its crossing, on a cubecl device (wgpu).
#[cfg(feature = "wgpu")]
mod gpu {
    use super::on_the_cpu;
    use crate::error::{Error, Text};
    use crate::model::decoder::{Decoder, HostWeights};
    use burn::module::{Module, ModuleVisitor, Param};
    use burn::tensor::Tensor;
    use std::future::Future;
    use std::pin::Pin;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    /// A model's weights in host memory, and the device buffers they cross into before each forward.
    pub struct Offload {
        /// Each parameter's device primitive and its bytes in host memory (shared: a crossing hands
        /// the queue a reference, not a copy).
        params: Vec<(burn_cubecl::tensor::CubeTensor, HostBytes)>,
        bytes: usize,
        crossings: AtomicUsize,
    }

    type HostBytes = burn_cubecl::cubecl::bytes::Bytes;

    impl std::fmt::Debug for Offload {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.debug_struct("Offload")
                .field("bytes", &self.bytes)
                .field("crossings", &self.crossings.load(Ordering::Relaxed))
                .finish()
        }
    }

    impl HostWeights for Offload {
        fn bytes(&self) -> usize {
            self.bytes
        }

        fn crossings(&self) -> usize {
            self.crossings.load(Ordering::Relaxed)
        }

        fn cross(&self) {
            for (t, host) in &self.params {
                t.client.write(&t.handle, host.clone());
            }
            self.crossings.fetch_add(1, Ordering::Relaxed);
        }

        fn drain(&self) -> Pin<Box<dyn Future<Output = Result<(), Error>> + '_>> {
            Box::pin(async move {
                if let Some((t, _)) = self.params.first() {
                    t.client.sync().await.map_err(|e| Error::Unavailable {
                        what: "offloading",
                        why: Text::new(
                            format!("the device failed: {e:?}"),
                            format!("设备出错：{e:?}"),
                        ),
                    })?;
                }
                Ok(())
            })
        }
    }

    pub(super) async fn offloaded_from(model: &Decoder, host: &Decoder) -> Result<Decoder, Error> {
        let buffers = primitives(model).ok_or_else(on_the_cpu)?;
        let sources = flat_params(host);
        if sources.len() != buffers.len() {
            return Err(mismatch(
                "it has a different number of parameters",
                "参数个数不同",
            ));
        }
        let mut params = Vec::with_capacity(buffers.len());
        let mut bytes = 0;
        for (t, source) in buffers.into_iter().zip(sources) {
            let n = t.meta.shape().num_elements();
            // A buffer may be longer than its tensor (a device's alignment): the crossing writes
            // the tensor's bytes from its start.
            if t.dtype != burn_backend::DType::F32
                || !t.is_contiguous()
                || (t.handle.size() as usize) < 4 * n
            {
                return Err(mismatch(
                    "a parameter is not one contiguous f32 buffer",
                    "有参数不是一块连续的 f32 缓冲区",
                ));
            }
            if source.dims()[0] != n {
                return Err(mismatch("its parameters have other shapes", "参数形状不同"));
            }
            let host = HostBytes::from_elems(crate::model::floats(source).await?).shared();
            bytes += host.len();
            params.push((t, host));
        }
        Ok(model.with_host_weights(Arc::new(Offload {
            params,
            bytes,
            crossings: AtomicUsize::new(0),
        })))
    }

    fn mismatch(en: &str, zh: &str) -> Error {
        Error::Unavailable {
            what: "offloading",
            why: Text::new(
                format!("the host copy does not fit the model on the device: {en}"),
                format!("主机上的副本与设备上的模型不匹配：{zh}"),
            ),
        }
    }

    /// Every parameter of `model` as its cubecl primitive, in the module's order; `None` when the
    /// model is not on a cubecl device.
    fn primitives(model: &Decoder) -> Option<Vec<burn_cubecl::tensor::CubeTensor>> {
        struct Collect(Vec<Option<burn_cubecl::tensor::CubeTensor>>);
        impl ModuleVisitor for Collect {
            fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
                self.0.push(crate::model::gpu::cube(param.val()));
            }
        }
        let mut c = Collect(Vec::new());
        model.visit(&mut c);
        c.0.into_iter().collect()
    }

    /// Every parameter of `model` flattened, in the module's order.
    fn flat_params(model: &Decoder) -> Vec<Tensor<1>> {
        struct Collect(Vec<Tensor<1>>);
        impl ModuleVisitor for Collect {
            fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
                let t = param.val();
                let n = t.shape().num_elements();
                self.0.push(t.reshape([n]));
            }
        }
        let mut c = Collect(Vec::new());
        model.visit(&mut c);
        c.0
    }
}
