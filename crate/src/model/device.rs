//! The one place that chooses a burn device. Models take a `&Device` and never ask which
//! backend it is; everything else names a [`Backend`] and awaits [`Backend::device`].
//!
//! The CPU devices are ready at once. The GPU device needs an adapter, which a browser hands out
//! only asynchronously (`navigator.gpu.requestAdapter()`), so acquiring a device is `async`
//! everywhere; native callers block on it with [`Backend::device_blocking`].

use crate::error::{Error, Text};
use crate::i18n::Lang;
use burn::tensor::Device;
#[cfg(feature = "wgpu")]
use std::sync::Mutex;

crate::error::choices! {
    /// The backends this project offers.
    pub enum Backend("backend") {
        /// burn's flex CPU backend (the default: ≈ 3.4× faster per op than ndarray in wasm, SPEC §1).
        Flex = "flex" | "cpu",
        /// burn's ndarray CPU backend (the user's card; deprecated upstream in favour of flex).
        Ndarray = "ndarray",
        /// burn's wgpu backend: WebGPU in a browser, Vulkan/Metal/DX12 natively.
        Wgpu = "wgpu" | "webgpu" | "gpu",
    }
}

/// Why a WebGPU job ran on the CPU (flex) instead. The page's worker learns the first three from
/// the browser before it downloads the GPU module; the GPU module finds the last.
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Fallback {
    /// The browser has no WebGPU (`navigator.gpu` is missing).
    NoWebgpu,
    /// `navigator.gpu.requestAdapter()` found no adapter.
    NoAdapter,
    /// The adapter lacks `timestamp-query`, which burn's WebGPU runtime needs in a browser
    /// (cubecl-wgpu 0.11 panics on start without it), as in Firefox and Safari today.
    NoTimestamps,
    /// The adapter gave no device: the error says why.
    #[serde(skip)]
    NoDevice(Error),
}

impl Fallback {
    /// The note the page shows beside the result, in `lang`.
    pub fn note(&self, lang: Lang) -> String {
        let instead = lang.pick(
            "No WebGPU here, so the models run on the CPU (flex) instead. Details: ",
            "这里没有 WebGPU，所以模型改在 CPU（flex）上运行。详情：",
        );
        match self {
            Fallback::NoTimestamps => lang.pick(
                "WebGPU is not usable in this browser (its adapter has no timestamp-query feature, which burn’s WebGPU runtime needs in a browser), so this ran on the CPU (flex).",
                "这个浏览器里的 WebGPU 无法使用（它的适配器没有 timestamp-query 功能，而 burn 的 WebGPU 运行时在浏览器中需要它），所以这次在 CPU（flex）上运行。",
            )
            .to_string(),
            Fallback::NoAdapter => instead.to_string() + lang.pick(
                "the browser offers no WebGPU adapter (navigator.gpu.requestAdapter() found none).",
                "浏览器没有提供 WebGPU 适配器（navigator.gpu.requestAdapter() 没有找到）。",
            ),
            Fallback::NoWebgpu => instead.to_string() + lang.pick(
                "this browser has no WebGPU (navigator.gpu is missing).",
                "这个浏览器没有 WebGPU（缺少 navigator.gpu）。",
            ),
            Fallback::NoDevice(e) => instead.to_string() + &e.message(lang),
        }
    }
}

/// The GPU device once acquired, or why there is none: acquired once per process (burn refuses
/// to initialise its wgpu runtime twice), and a missing adapter is not looked for again.
#[cfg(feature = "wgpu")]
static GPU: Mutex<Option<Result<Device, String>>> = Mutex::new(None);

impl Backend {
    /// The backend as the page's backend menus offer it, in `lang`.
    pub fn label(self, lang: Lang) -> &'static str {
        match self {
            Backend::Flex => lang.pick("CPU: flex", "CPU：flex"),
            Backend::Ndarray => lang.pick("CPU: ndarray", "CPU：ndarray"),
            Backend::Wgpu => lang.pick("GPU: WebGPU", "GPU：WebGPU"),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_fallback_note_says_it_ran_on_the_cpu_in_both_languages() {
        let lost = Error::Unavailable {
            what: "WebGPU/wgpu device",
            why: "no adapter".into(),
        };
        for why in [
            Fallback::NoWebgpu,
            Fallback::NoAdapter,
            Fallback::NoTimestamps,
            Fallback::NoDevice(lost.clone()),
        ] {
            assert!(why.note(Lang::En).contains("CPU (flex)"), "{why:?}");
            assert!(why.note(Lang::Zh).contains("CPU（flex）"), "{why:?}");
        }
        let note = Fallback::NoDevice(lost.clone()).note(Lang::En);
        assert!(note.ends_with(&lost.message(Lang::En)), "{note}");
        let reason: Fallback = serde_json::from_str("\"no-timestamps\"").unwrap();
        assert!(reason.note(Lang::En).contains("timestamp-query"));
    }
}
