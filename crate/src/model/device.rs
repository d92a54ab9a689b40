//! The one place that chooses a burn device. Models take a `&Device` and never ask which
//! backend it is; everything else names a [`Backend`] and calls [`Backend::device`].

use crate::error::Error;
use burn::tensor::Device;

/// The backends this project offers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Backend {
    /// burn's flex CPU backend (the default: ≈ 3.4× faster per op than ndarray in wasm, SPEC §1).
    Flex,
    /// burn's ndarray CPU backend (the user's card; deprecated upstream in favour of flex).
    Ndarray,
}

impl Backend {
    pub const ALL: [Backend; 2] = [Backend::Flex, Backend::Ndarray];

    pub fn name(self) -> &'static str {
        match self {
            Backend::Flex => "flex",
            Backend::Ndarray => "ndarray",
        }
    }

    pub fn parse(name: &str) -> Result<Backend, Error> {
        match name {
            "flex" => Ok(Backend::Flex),
            "ndarray" => Ok(Backend::Ndarray),
            "wgpu" => Err(Error::Unknown {
                what: "backend (WebGPU is not built into this version yet)",
                name: name.into(),
                known: "flex, ndarray".into(),
            }),
            _ => Err(Error::Unknown {
                what: "backend",
                name: name.into(),
                known: "flex, ndarray".into(),
            }),
        }
    }

    pub fn device(self) -> Device {
        match self {
            Backend::Flex => Device::flex(),
            #[allow(deprecated)] // offered on purpose, beside flex, to show the difference
            Backend::Ndarray => Device::ndarray(),
        }
    }
}
