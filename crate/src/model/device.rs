//! The one place that chooses a burn device. Models take a `&Device` and never ask which
//! backend it is; everything else names a [`Backend`] and awaits [`Backend::device`].
//!
//! The CPU devices are ready at once. The GPU device needs an adapter, which a browser hands out
//! only asynchronously (`navigator.gpu.requestAdapter()`), so acquiring a device is `async`
//! everywhere; native callers block on it with [`Backend::device_blocking`].

use crate::error::{Error, Text};
use burn::tensor::Device;
#[cfg(feature = "wgpu")]
use std::sync::Mutex;

/// The backends this project offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Backend {
    /// burn's flex CPU backend (the default: ≈ 3.4× faster per op than ndarray in wasm, SPEC §1).
    Flex,
    /// burn's ndarray CPU backend (the user's card; deprecated upstream in favour of flex).
    Ndarray,
    /// burn's wgpu backend: WebGPU in a browser, Vulkan/Metal/DX12 natively.
    Wgpu,
}

/// The GPU device once acquired, or why there is none: acquired once per process (burn refuses
/// to initialise its wgpu runtime twice), and a missing adapter is not looked for again.
#[cfg(feature = "wgpu")]
static GPU: Mutex<Option<Result<Device, String>>> = Mutex::new(None);

impl Backend {
    pub const ALL: [Backend; 3] = [Backend::Flex, Backend::Ndarray, Backend::Wgpu];

    pub fn name(self) -> &'static str {
        match self {
            Backend::Flex => "flex",
            Backend::Ndarray => "ndarray",
            Backend::Wgpu => "wgpu",
        }
    }

    pub fn parse(name: &str) -> Result<Backend, Error> {
        match name {
            "flex" | "cpu" => Ok(Backend::Flex),
            "ndarray" => Ok(Backend::Ndarray),
            "wgpu" | "webgpu" | "gpu" => Ok(Backend::Wgpu),
            _ => Err(Error::Unknown {
                what: "backend",
                name: name.into(),
                known: "flex, ndarray, wgpu".into(),
            }),
        }
    }

    /// The device of this backend; for [`Backend::Wgpu`], an [`Error::Unavailable`] when the
    /// machine or browser has no usable GPU adapter.
    pub async fn device(self) -> Result<Device, Error> {
        match self {
            #[cfg(feature = "flex")]
            Backend::Flex => Ok(Device::flex()),
            #[cfg(not(feature = "flex"))]
            Backend::Flex => Err(Error::Unavailable {
                what: "flex backend",
                why: Text::new(
                    "this build has no flex backend (the page's CPU module has it)",
                    "这个构建没有 flex 后端（页面的 CPU 模块有）",
                ),
            }),
            #[cfg(feature = "ndarray")]
            #[allow(deprecated)]
            // offered on purpose, beside flex, to show the difference
            Backend::Ndarray => Ok(Device::ndarray()),
            #[cfg(not(feature = "ndarray"))]
            Backend::Ndarray => Err(Error::Unavailable {
                what: "ndarray backend",
                why: Text::new(
                    "this build has no ndarray backend (the page's CPU module has it)",
                    "这个构建没有 ndarray 后端（页面的 CPU 模块有）",
                ),
            }),
            Backend::Wgpu => gpu().await,
        }
    }

    /// [`Backend::device`] for native callers.
    #[cfg(not(target_arch = "wasm32"))]
    pub fn device_blocking(self) -> Result<Device, Error> {
        burn::tensor::read_sync(self.device())
    }
}

/// No GPU: `why` is wgpu's own message (or ours in both languages).
fn unavailable(why: impl Into<Text>) -> Error {
    Error::Unavailable {
        what: "WebGPU/wgpu device",
        why: why.into(),
    }
}

#[cfg(not(feature = "wgpu"))]
async fn gpu() -> Result<Device, Error> {
    Err(unavailable(Text::new(
        "this build has no wgpu backend (the page loads its GPU module for WebGPU)",
        "这个构建没有 wgpu 后端（页面为 WebGPU 加载它的 GPU 模块）",
    )))
}

#[cfg(feature = "wgpu")]
async fn gpu() -> Result<Device, Error> {
    if let Some(known) = GPU.lock().expect("not poisoned").clone() {
        return known.map_err(unavailable);
    }
    // Up to 128 kernels per submitted command (cubecl's default is 32): one submit per forward
    // of our models, whose inputs are all uploaded before their first kernel.
    let init = || Device::wgpu_options().tasks_max(128).init_async();
    // Natively, tests on several threads may ask at once, and two adapter searches at once can
    // panic inside wgpu's GL backend (EGL's make_current: BadAccess): one search at a time.
    #[cfg(not(target_arch = "wasm32"))]
    let acquired = {
        static SEARCH: Mutex<()> = Mutex::new(());
        let _one_at_a_time = SEARCH.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(known) = GPU.lock().expect("not poisoned").clone() {
            return known.map_err(unavailable);
        }
        burn::tensor::read_sync(init()).map_err(|e| e.to_string())
    };
    #[cfg(target_arch = "wasm32")]
    let acquired = init().await.map_err(|e| e.to_string());
    let mut slot = GPU.lock().expect("not poisoned");
    // Two callers may race to the first acquisition (the worker interleaves jobs at awaits):
    // the first one to finish wins, and the other's "already initialised" error is dropped.
    if slot.as_ref().is_none_or(|s| s.is_err() && acquired.is_ok()) {
        *slot = Some(acquired);
    }
    slot.clone().expect("just set").map_err(unavailable)
}
