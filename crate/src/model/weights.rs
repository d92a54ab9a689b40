//! Trained weights: saved by `specdec train` into `crate/assets/<model>.bpk` (burn's Burnpack
//! format). Native builds (the CLI, the tests) embed them. The page's two wasm modules do not:
//! the page downloads the files once (`pkg/weights/`, copied there by `scripts/build-wasm.sh`)
//! and hands them to each module it starts ([`provide`]).

use super::eagle::Eagle;
use super::medusa::{Medusa, MAX_HEADS};
use super::{Decoder, DecoderConfig, ModelKind};
use crate::error::{Error, Text};
use burn::module::Module;
use burn::store::{BurnpackStore, ModuleSnapshot, ModuleStore};
use burn::tensor::Device;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Bytes aligned to 64: Burnpack reads its f32 data in place, which needs the file's start
/// aligned (`include_bytes!` and a `Vec<u8>` alone guarantee only 1-byte alignment).
#[cfg(not(target_arch = "wasm32"))]
#[repr(C)]
struct Aligned<Bytes: ?Sized> {
    _align: [Align64; 0],
    bytes: Bytes,
}

#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Align64([u8; 64]);

#[cfg(not(target_arch = "wasm32"))]
static TARGET: &Aligned<[u8]> = &Aligned {
    _align: [],
    bytes: *include_bytes!("../../assets/target.bpk"),
};
#[cfg(not(target_arch = "wasm32"))]
static DRAFT_A: &Aligned<[u8]> = &Aligned {
    _align: [],
    bytes: *include_bytes!("../../assets/draft-a.bpk"),
};
#[cfg(not(target_arch = "wasm32"))]
static DRAFT_B: &Aligned<[u8]> = &Aligned {
    _align: [],
    bytes: *include_bytes!("../../assets/draft-b.bpk"),
};

/// The shipped weights of each model: embedded in native builds.
#[cfg(not(target_arch = "wasm32"))]
fn shipped(kind: ModelKind) -> Result<&'static [u8], Error> {
    Ok(match kind {
        ModelKind::Target => &TARGET.bytes,
        ModelKind::DraftA => &DRAFT_A.bytes,
        ModelKind::DraftB => &DRAFT_B.bytes,
    })
}

/// The weights handed over by [`provide`], per model (wasm: the page downloads the three files
/// once and hands them to every module it starts, instead of each module embedding them).
#[cfg(target_arch = "wasm32")]
static PROVIDED: [std::sync::OnceLock<&'static [u8]>; 3] =
    [const { std::sync::OnceLock::new() }; 3];

#[cfg(target_arch = "wasm32")]
fn shipped(kind: ModelKind) -> Result<&'static [u8], Error> {
    kept(kind).ok_or_else(|| Error::Unavailable {
            what: "model weights",
            why: Text::new(
                format!(
                    "the weights of {} were not handed to this module yet (the page downloads them from pkg/weights/)",
                    kind.name()
                ),
                format!(
                    "{} 的权重还没有交给这个模块（页面从 pkg/weights/ 下载它们）",
                    kind.name()
                ),
            ),
        })
}

/// Longest weights file accepted (the target's is 341 kB).
pub const MAX_WEIGHTS_BYTES: usize = 16 << 20;

/// Hands the downloaded weights of `kind` to this module (wasm). They are checked before they
/// are kept ([`check`]: without a device, since the GPU module may not have its GPU yet); a
/// second call for the same model must bring the same bytes. The copy lives
/// as long as the module instance (three files, ≈ 0.5 MB in all).
pub fn provide(kind: ModelKind, bytes: &[u8]) -> Result<(), Error> {
    if let Some(kept) = kept(kind) {
        return if kept == bytes {
            Ok(())
        } else {
            Err(bad(
                kind,
                Text::new(
                    "differ from the weights this module already has for it",
                    "与这个模块已有的权重不同",
                ),
            ))
        };
    }
    if bytes.len() > MAX_WEIGHTS_BYTES {
        return Err(bad(
            kind,
            Text::new(
                format!(
                    "{} bytes is over the limit of {MAX_WEIGHTS_BYTES}",
                    bytes.len()
                ),
                format!("{} 字节，超出上限 {MAX_WEIGHTS_BYTES}", bytes.len()),
            ),
        ));
    }
    let blocks = Box::into_raw(vec![Align64([0; 64]); bytes.len().div_ceil(64)].into_boxed_slice());
    // SAFETY: `Align64` is 64 plain bytes, so the blocks are `len * 64` initialised bytes.
    let aligned: &'static mut [u8] =
        unsafe { std::slice::from_raw_parts_mut(blocks.cast::<u8>(), bytes.len()) };
    aligned.copy_from_slice(bytes);
    let aligned: &'static [u8] = aligned;
    if let Err(e) = check(kind, aligned) {
        // SAFETY: from `Box::into_raw` above, and no reference to it is left.
        drop(unsafe { Box::from_raw(blocks) });
        return Err(e);
    }
    keep(kind, aligned);
    Ok(())
}

#[cfg(target_arch = "wasm32")]
fn kept(kind: ModelKind) -> Option<&'static [u8]> {
    PROVIDED[kind as usize].get().copied()
}

#[cfg(target_arch = "wasm32")]
fn keep(kind: ModelKind, bytes: &'static [u8]) {
    let _ = PROVIDED[kind as usize].set(bytes);
}

/// Natively the weights are embedded: provided ones must be the same.
#[cfg(not(target_arch = "wasm32"))]
fn kept(kind: ModelKind) -> Option<&'static [u8]> {
    shipped(kind).ok()
}

#[cfg(not(target_arch = "wasm32"))]
fn keep(_: ModelKind, _: &'static [u8]) {}

/// What a Burnpack file for `kind` must hold: every parameter of the model, by burn's name, with
/// its shape ([`DecoderConfig`]; a test checks this against a model's own parameters).
#[cfg(test)]
fn parameters(kind: ModelKind) -> BTreeMap<String, Vec<usize>> {
    parameters_of(&kind.config())
}

/// [`parameters`] of a decoder of any shape (a trained draft's file: [`super::draft_file`]).
pub(super) fn parameters_of(config: &DecoderConfig) -> BTreeMap<String, Vec<usize>> {
    let &DecoderConfig {
        vocab,
        d_model: d,
        n_layers,
        d_ff,
        max_positions,
        ..
    } = config;
    let mut p = BTreeMap::new();
    let mut linear = |name: String, d_in: usize, d_out: usize| {
        p.insert(format!("{name}.weight"), vec![d_in, d_out]);
        p.insert(format!("{name}.bias"), vec![d_out]);
    };
    linear("head".into(), d, vocab);
    for l in 0..n_layers {
        linear(format!("blocks.{l}.qkv"), d, 3 * d);
        linear(format!("blocks.{l}.out"), d, d);
        linear(format!("blocks.{l}.up"), d, d_ff);
        linear(format!("blocks.{l}.down"), d_ff, d);
    }
    let norms = (0..n_layers)
        .flat_map(|l| {
            [
                format!("blocks.{l}.norm_attn"),
                format!("blocks.{l}.norm_mlp"),
            ]
        })
        .chain(["norm".to_string()]);
    for norm in norms {
        p.insert(format!("{norm}.gamma"), vec![d]);
        p.insert(format!("{norm}.beta"), vec![d]);
    }
    p.insert("token.weight".into(), vec![vocab, d]);
    p.insert("position.weight".into(), vec![max_positions, d]);
    p
}

/// Checks that `bytes` are a Burnpack file with exactly the parameters of `kind`: the same
/// names, shapes, f32 data of the right length. No tensor is built, so no device is needed.
fn check(kind: ModelKind, bytes: &'static [u8]) -> Result<(), Error> {
    let mut store = BurnpackStore::from_static(bytes);
    check_store(&mut store, &kind.config(), kind.name(), |why| {
        bad(kind, why)
    })
}

/// [`check`] on any store, against the parameters of `config`; `name` names the model in the
/// message, `bad` makes the error.
pub(super) fn check_store(
    store: &mut BurnpackStore,
    config: &DecoderConfig,
    name_of_model: &str,
    bad: impl Fn(Text) -> Error,
) -> Result<(), Error> {
    let found = store.get_all_tensors().map_err(|e| bad(burnpack_says(e)))?;
    let expected = parameters_of(config);
    for (name, shape) in &expected {
        let Some(t) = found.get(name) else {
            return Err(bad(Text::new(
                format!("the tensor {name} is missing"),
                format!("缺少张量 {name}"),
            )));
        };
        let n: usize = shape.iter().product();
        if t.shape.as_slice() != shape.as_slice()
            || t.dtype != burn::tensor::DType::F32
            || t.byte_len() != 4 * n
        {
            return Err(bad(Text::new(
                format!(
                    "{name} is {:?} {:?} ({} bytes), expected F32 {shape:?} ({} bytes)",
                    t.dtype,
                    t.shape.as_slice(),
                    t.byte_len(),
                    4 * n
                ),
                format!(
                    "{name} 是 {:?} {:?}（{} 字节），应为 F32 {shape:?}（{} 字节）",
                    t.dtype,
                    t.shape.as_slice(),
                    t.byte_len(),
                    4 * n
                ),
            )));
        }
    }
    if let Some(extra) = found.keys().find(|name| !expected.contains_key(*name)) {
        return Err(bad(Text::new(
            format!("the tensor {extra} is not a parameter of {name_of_model}"),
            format!("张量 {extra} 不是 {name_of_model} 的参数"),
        )));
    }
    Ok(())
}

/// What the Burnpack reader (burn's, whose messages are English only) said of a file it refused,
/// introduced in both languages so that the Chinese page says what happened in Chinese.
pub(super) fn burnpack_says(e: impl std::fmt::Display) -> Text {
    Text::new(
        format!("the Burnpack reader says: {e}"),
        format!("Burnpack 读取器报告：{e}"),
    )
}

/// The weights of `kind` are not usable, and why.
fn bad(kind: ModelKind, why: impl Into<Text>) -> Error {
    Error::Parse {
        what: "weights",
        text: kind.name().into(),
        why: why.into(),
    }
}

/// Where `specdec train` writes a model's weights.
pub fn asset_path(kind: ModelKind) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets")
        .join(format!("{}.bpk", kind.name()))
}

/// The shipped, trained model on `device`.
pub fn load(kind: ModelKind, device: &Device) -> Result<Decoder, Error> {
    from_bytes(kind, shipped(kind)?, device)
}

fn from_bytes(kind: ModelKind, bytes: &'static [u8], device: &Device) -> Result<Decoder, Error> {
    let mut model = kind.config().init(device);
    let mut store = BurnpackStore::from_static(bytes);
    model
        .load_from(&mut store)
        .map_err(|e| bad(kind, burnpack_says(e)))?;
    Ok(model)
}

/// Writes `model` to `path` (Burnpack).
pub fn save<M: Module>(model: &M, path: &Path) -> Result<(), Error> {
    let mut store = BurnpackStore::from_file(path)
        .auto_extension(false)
        .overwrite(true);
    model.save_into(&mut store).map_err(|e| Error::Parse {
        what: "weights file",
        text: path.display().to_string(),
        why: e.to_string().into(),
    })
}

/// The drafts that read the target's features (lecture §5.1–5.2), trained on the shipped target
/// by `specdec train --model medusa|eagle|eagle-ttt`. Native builds embed them; the page does
/// not download them yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum HiddenKind {
    Medusa,
    Eagle,
    /// EAGLE trained with the training-time test (HASS / EAGLE-3).
    EagleTtt,
}

impl HiddenKind {
    pub const ALL: [HiddenKind; 3] = [HiddenKind::Medusa, HiddenKind::Eagle, HiddenKind::EagleTtt];

    pub fn name(self) -> &'static str {
        match self {
            HiddenKind::Medusa => "medusa",
            HiddenKind::Eagle => "eagle",
            HiddenKind::EagleTtt => "eagle-ttt",
        }
    }

    pub fn asset_path(self) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("assets")
            .join(format!("{}.bpk", self.name()))
    }
}

#[cfg(not(target_arch = "wasm32"))]
static MEDUSA: &Aligned<[u8]> = &Aligned {
    _align: [],
    bytes: *include_bytes!("../../assets/medusa.bpk"),
};
#[cfg(not(target_arch = "wasm32"))]
static EAGLE: &Aligned<[u8]> = &Aligned {
    _align: [],
    bytes: *include_bytes!("../../assets/eagle.bpk"),
};
#[cfg(not(target_arch = "wasm32"))]
static EAGLE_TTT: &Aligned<[u8]> = &Aligned {
    _align: [],
    bytes: *include_bytes!("../../assets/eagle-ttt.bpk"),
};

#[cfg(not(target_arch = "wasm32"))]
fn hidden_bytes(kind: HiddenKind) -> Result<&'static [u8], Error> {
    Ok(match kind {
        HiddenKind::Medusa => &MEDUSA.bytes,
        HiddenKind::Eagle => &EAGLE.bytes,
        HiddenKind::EagleTtt => &EAGLE_TTT.bytes,
    })
}

/// The drafts' weights handed over by [`provide_hidden`] (wasm: the page downloads them from
/// `pkg/weights/hidden/` only when an experiment needs them).
#[cfg(target_arch = "wasm32")]
static PROVIDED_HIDDEN: [std::sync::OnceLock<&'static [u8]>; 3] =
    [const { std::sync::OnceLock::new() }; 3];

#[cfg(target_arch = "wasm32")]
fn hidden_bytes(kind: HiddenKind) -> Result<&'static [u8], Error> {
    PROVIDED_HIDDEN[kind as usize]
        .get()
        .copied()
        .ok_or_else(|| Error::Unavailable {
            what: "model weights",
            why: Text::new(
                format!(
                    "the weights of the {} draft were not handed to this module yet (the page downloads them from pkg/weights/hidden/)",
                    kind.name()
                ),
                format!(
                    "{} 草稿的权重还没有交给这个模块（页面从 pkg/weights/hidden/ 下载它们）",
                    kind.name()
                ),
            ),
        })
}

/// Hands this module the downloaded weights of a draft on the target's features (wasm; natively
/// they must be the embedded ones). Checked before they are kept: a Burnpack file holding the
/// draft's first tensors; a second call must bring the same bytes.
pub fn provide_hidden(kind: HiddenKind, bytes: &[u8]) -> Result<(), Error> {
    #[cfg(target_arch = "wasm32")]
    let kept = PROVIDED_HIDDEN[kind as usize].get().copied();
    #[cfg(not(target_arch = "wasm32"))]
    let kept = hidden_bytes(kind).ok();
    if let Some(kept) = kept {
        return if kept == bytes {
            Ok(())
        } else {
            Err(hidden_bad(
                kind,
                Text::new(
                    "differ from the weights this module already has for it",
                    "与这个模块已有的权重不同",
                ),
            ))
        };
    }
    if bytes.len() > MAX_WEIGHTS_BYTES {
        return Err(hidden_bad(
            kind,
            format!("{} bytes is too long", bytes.len()),
        ));
    }
    let aligned = aligned_copy(bytes);
    let first = match kind {
        HiddenKind::Medusa => "heads.0.weight",
        _ => "fc.weight",
    };
    let mut store = BurnpackStore::from_static(aligned);
    let names = store
        .get_all_tensors()
        .map_err(|e| hidden_bad(kind, burnpack_says(e)))?;
    if !names.contains_key(first) {
        return Err(hidden_bad(
            kind,
            Text::new(
                format!("the tensor {first} is missing"),
                format!("缺少张量 {first}"),
            ),
        ));
    }
    #[cfg(target_arch = "wasm32")]
    let _ = PROVIDED_HIDDEN[kind as usize].set(aligned);
    Ok(())
}

/// A copy of `bytes` aligned to 64 that lives as long as the module (Burnpack reads in place).
fn aligned_copy(bytes: &[u8]) -> &'static [u8] {
    let blocks = Box::leak(vec![Align64([0; 64]); bytes.len().div_ceil(64)].into_boxed_slice());
    // SAFETY: `Align64` is 64 plain bytes, so the blocks are `len * 64` initialised bytes.
    let aligned: &'static mut [u8] =
        unsafe { std::slice::from_raw_parts_mut(blocks.as_mut_ptr().cast::<u8>(), bytes.len()) };
    aligned.copy_from_slice(bytes);
    aligned
}

fn hidden_bad(kind: HiddenKind, why: impl Into<Text>) -> Error {
    Error::Parse {
        what: "weights",
        text: kind.name().into(),
        why: why.into(),
    }
}

/// The shipped Medusa heads for `target` (the trained target: the heads read its features), as
/// many as were trained.
pub fn load_medusa(target: &Decoder, device: &Device) -> Result<Medusa, Error> {
    let kind = HiddenKind::Medusa;
    let bytes = hidden_bytes(kind)?;
    let mut store = BurnpackStore::from_static(bytes);
    let names = store
        .get_all_tensors()
        .map_err(|e| hidden_bad(kind, burnpack_says(e)))?;
    let k = (0..=MAX_HEADS)
        .take_while(|i| names.contains_key(&format!("heads.{i}.weight")))
        .count();
    if k == 0 || k > MAX_HEADS {
        return Err(hidden_bad(
            kind,
            Text::new(
                format!("{k} heads (1 to {MAX_HEADS} expected)"),
                format!("{k} 个头（应为 1 到 {MAX_HEADS} 个）"),
            ),
        ));
    }
    let mut heads = Medusa::empty(k, target, device);
    heads
        .load_from(&mut store)
        .map_err(|e| hidden_bad(kind, burnpack_says(e)))?;
    Ok(heads)
}

/// The shipped EAGLE draft for `target` (`EagleTtt`: the one trained with the training-time test).
pub fn load_eagle(kind: HiddenKind, target: &Decoder, device: &Device) -> Result<Eagle, Error> {
    debug_assert!(kind != HiddenKind::Medusa);
    let mut draft = Eagle::init(target, device);
    let mut store = BurnpackStore::from_static(hidden_bytes(kind)?);
    draft
        .load_from(&mut store)
        .map_err(|e| hidden_bad(kind, burnpack_says(e)))?;
    Ok(draft)
}

#[cfg(all(test, feature = "flex"))]
mod tests {
    use super::*;

    #[test]
    fn provided_weights_must_be_the_shipped_ones_and_valid() {
        for kind in ModelKind::ALL {
            provide(kind, shipped(kind).unwrap()).unwrap();
        }
        let mut other = shipped(ModelKind::DraftA).unwrap().to_vec();
        let middle = other.len() / 2;
        other[middle] ^= 1;
        let e = provide(ModelKind::DraftA, &other).unwrap_err().to_string();
        assert!(e.contains("draft-a") && e.contains("differ"), "{e}");
        // The target's file is not a draft's: the shapes disagree.
        let e = from_bytes(
            ModelKind::DraftA,
            shipped(ModelKind::Target).unwrap(),
            &Device::flex(),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("draft-a"), "{e}");
        let e = from_bytes(ModelKind::Target, b"not a burnpack file", &Device::flex())
            .unwrap_err()
            .to_string();
        assert!(e.contains("weights"), "{e}");
    }

    /// The device-free check knows every parameter of every model, as burn names it.
    #[test]
    fn the_expected_parameters_are_the_models_own() {
        for kind in ModelKind::ALL {
            let model = kind.config().init(&Device::flex());
            let own: BTreeMap<String, Vec<usize>> = model
                .collect(None, None, false)
                .into_iter()
                .map(|t| (t.name.clone(), t.shape.to_vec()))
                .collect();
            assert_eq!(parameters(kind), own, "{}", kind.name());
        }
    }

    /// A model's file saved in memory (Burnpack), leaked as the page's downloads are kept.
    fn file_of(config: &DecoderConfig) -> &'static [u8] {
        let mut store = BurnpackStore::from_bytes(None);
        store.collect_from(&config.init(&Device::flex())).unwrap();
        Vec::leak(store.get_bytes().unwrap().to_vec())
    }

    /// What [`provide`] runs on a download: each shipped file passes; another model's file, a
    /// file with a layer too few or too many, and garbage are refused, naming what is wrong.
    #[test]
    fn the_device_free_check_refuses_every_wrong_file() {
        for kind in ModelKind::ALL {
            check(kind, shipped(kind).unwrap()).unwrap();
        }
        let e = check(ModelKind::DraftA, shipped(ModelKind::Target).unwrap())
            .unwrap_err()
            .to_string();
        assert!(e.contains("draft-a") && e.contains("expected F32"), "{e}");
        let mut fewer = ModelKind::Target.config();
        fewer.n_layers -= 1;
        let e = check(ModelKind::Target, file_of(&fewer))
            .unwrap_err()
            .to_string();
        assert!(e.contains("is missing"), "{e}");
        let mut more = ModelKind::Target.config();
        more.n_layers += 1;
        let e = check(ModelKind::Target, file_of(&more))
            .unwrap_err()
            .to_string();
        assert!(e.contains("is not a parameter of target"), "{e}");
        let e = check(ModelKind::Target, b"not a burnpack file")
            .unwrap_err()
            .to_string();
        assert!(e.contains("target"), "{e}");
    }
}
