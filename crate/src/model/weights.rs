//! Trained weights: saved by `specdec train` into `crate/assets/<file>.bpk` (burn's Burnpack
//! format), and one store of every file the crate ships — the three models, the three drafts on
//! the target's features and the boost-tuning pools' members ([`WeightFile`]: each kind says
//! what its file must hold). Native builds (the CLI, the tests) embed the files. The page's wasm
//! modules do not: the page downloads them (`pkg/weights/`, copied there by
//! `scripts/build-wasm.sh`; the models once, the others when an experiment needs them) and hands
//! them to each module it starts ([`provide`]), which checks them before it keeps them.

use super::eagle::Eagle;
use super::medusa::{Medusa, MAX_HEADS};
use super::{Decoder, DecoderConfig, ModelKind};
use crate::error::{Error, Text};
use burn::module::Module;
use burn::store::{BurnpackStore, ModuleSnapshot, ModuleStore};
use burn::tensor::Device;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// A weights file the crate ships, of one kind: what its file must hold, and how it is named.
pub trait WeightFile: Copy {
    /// Its path under `assets/` without `.bpk`: the name the page hands it over by.
    fn file(self) -> String;
    /// These weights are not usable, and why.
    fn bad(self, why: Text) -> Error {
        Error::Parse {
            what: "weights",
            text: self.file(),
            why,
        }
    }
    /// Refuses bytes that are not a file of this kind, naming what is wrong; without a device,
    /// since the GPU module may not have its GPU yet when the page hands the files over.
    fn check(self, bytes: &'static [u8]) -> Result<(), Error>;
}

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

/// The store's files by [`WeightFile::file`], and natively their bytes, embedded in that order.
macro_rules! store {
    ($($file:literal),* $(,)?) => {
        const FILES: &[&str] = &[$($file),*];
        #[cfg(not(target_arch = "wasm32"))]
        static EMBEDDED: &[&Aligned<[u8]>] = &[$(&Aligned {
            _align: [],
            bytes: *include_bytes!(concat!("../../assets/", $file, ".bpk")),
        }),*];
    };
}

store![
    "target",
    "draft-a",
    "draft-b",
    "medusa",
    "eagle",
    "eagle-ttt",
    "pool/plain-1",
    "pool/plain-2",
    "pool/plain-3",
    "pool/plain-4",
    "pool/boost-1",
    "pool/boost-2",
    "pool/boost-3",
    "pool/boost-4",
];

/// The files handed over by [`provide`] (wasm), in [`FILES`]' order. A copy lives as long as the
/// module instance (≈ 0.5 MB for the models, ≈ 1.4 MB with the others).
#[cfg(target_arch = "wasm32")]
static PROVIDED: [std::sync::OnceLock<&'static [u8]>; FILES.len()] =
    [const { std::sync::OnceLock::new() }; FILES.len()];

/// The bytes this module has for `file`: embedded natively, handed over in wasm.
fn kept(file: &str) -> Option<&'static [u8]> {
    let slot = FILES.iter().position(|f| *f == file)?;
    #[cfg(not(target_arch = "wasm32"))]
    let bytes = &EMBEDDED[slot].bytes;
    #[cfg(target_arch = "wasm32")]
    let bytes = PROVIDED[slot].get().copied()?;
    Some(bytes)
}

/// The shipped bytes of `file`, or why this module has none yet (wasm: not handed over).
pub fn bytes(file: impl WeightFile) -> Result<&'static [u8], Error> {
    let name = file.file();
    kept(&name).ok_or_else(|| Error::Unavailable {
        what: "model weights",
        why: Text::new(
            format!("the weights of {name} were not handed to this module yet (the page downloads them from pkg/weights/)"),
            format!("{name} 的权重还没有交给这个模块（页面从 pkg/weights/ 下载它们）"),
        ),
    })
}

/// Longest weights file accepted (the target's is 341 kB).
pub const MAX_WEIGHTS_BYTES: usize = 16 << 20;

/// Hands this module the downloaded `file` (wasm; natively the bytes must be the embedded ones).
/// They are checked ([`WeightFile::check`]) on a copy aligned for Burnpack before the copy is
/// kept; a second call for the same file must bring the same bytes.
pub fn provide(file: impl WeightFile, bytes: &[u8]) -> Result<(), Error> {
    let name = file.file();
    if let Some(kept) = kept(&name) {
        return if kept == bytes {
            Ok(())
        } else {
            Err(file.bad(Text::new(
                "differ from the weights this module already has for it",
                "与这个模块已有的权重不同",
            )))
        };
    }
    if bytes.len() > MAX_WEIGHTS_BYTES {
        return Err(file.bad(Text::new(
            format!(
                "{} bytes is over the limit of {MAX_WEIGHTS_BYTES}",
                bytes.len()
            ),
            format!("{} 字节，超出上限 {MAX_WEIGHTS_BYTES}", bytes.len()),
        )));
    }
    let blocks = Box::into_raw(vec![Align64([0; 64]); bytes.len().div_ceil(64)].into_boxed_slice());
    // SAFETY: `Align64` is 64 plain bytes, so the blocks are `len * 64` initialised bytes.
    let aligned: &'static mut [u8] =
        unsafe { std::slice::from_raw_parts_mut(blocks.cast::<u8>(), bytes.len()) };
    aligned.copy_from_slice(bytes);
    let aligned: &'static [u8] = aligned;
    if let Err(e) = file.check(aligned) {
        // SAFETY: from `Box::into_raw` above, and no reference to it is left.
        drop(unsafe { Box::from_raw(blocks) });
        return Err(e);
    }
    #[cfg(target_arch = "wasm32")]
    if let Some(slot) = FILES.iter().position(|f| *f == name) {
        let _ = PROVIDED[slot].set(aligned);
    }
    Ok(())
}

/// Where `specdec train` writes `file`.
pub fn asset_path(file: impl WeightFile) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets")
        .join(format!("{}.bpk", file.file()))
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

/// What the Burnpack reader (burn's, whose messages are English only) said of a file it refused,
/// introduced in both languages so that the Chinese page says what happened in Chinese.
pub(super) fn burnpack_says(e: impl std::fmt::Display) -> Text {
    Text::new(
        format!("the Burnpack reader says: {e}"),
        format!("Burnpack 读取器报告：{e}"),
    )
}

/// `module` with its parameters read from `file`'s `store`.
fn load_into<M: Module>(
    mut module: M,
    file: impl WeightFile,
    store: &mut BurnpackStore,
) -> Result<M, Error> {
    module
        .load_from(store)
        .map_err(|e| file.bad(burnpack_says(e)))?;
    Ok(module)
}

/// A model's weights: every parameter of its [`DecoderConfig`], checked by name and shape.
impl WeightFile for ModelKind {
    fn file(self) -> String {
        self.name().into()
    }

    fn check(self, bytes: &'static [u8]) -> Result<(), Error> {
        let mut store = BurnpackStore::from_static(bytes);
        check_store(&mut store, &self.config(), self.name(), |why| self.bad(why))
    }
}

/// The shipped, trained model on `device`.
pub fn load(kind: ModelKind, device: &Device) -> Result<Decoder, Error> {
    from_bytes(kind, bytes(kind)?, device)
}

fn from_bytes(kind: ModelKind, bytes: &'static [u8], device: &Device) -> Result<Decoder, Error> {
    load_into(
        kind.config().init(device),
        kind,
        &mut BurnpackStore::from_static(bytes),
    )
}

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

/// Checks that `store` holds exactly the parameters of `config`: the same names, shapes, f32
/// data of the right length (no tensor is built, so no device is needed). `name_of_model` names
/// the model in the message, `bad` makes the error.
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

crate::error::choices! {
    /// The drafts that read the target's features (lecture §5.1–5.2), trained on the shipped
    /// target by `specdec train --model medusa|eagle|eagle-ttt`. The page downloads them only
    /// for the experiments that run them.
    #[derive(Hash)]
    pub enum HiddenKind("hidden-state draft") {
        Medusa = "medusa",
        Eagle = "eagle",
        /// EAGLE trained with the training-time test (HASS / EAGLE-3).
        EagleTtt = "eagle-ttt",
    }
}

/// A draft's weights: checked for the draft's first tensor (its parameters' shapes follow the
/// target's, which is loaded beside it).
impl WeightFile for HiddenKind {
    fn file(self) -> String {
        self.name().into()
    }

    fn check(self, bytes: &'static [u8]) -> Result<(), Error> {
        let first = match self {
            HiddenKind::Medusa => "heads.0.weight",
            _ => "fc.weight",
        };
        let found = BurnpackStore::from_static(bytes)
            .get_all_tensors()
            .map_err(|e| self.bad(burnpack_says(e)))?
            .contains_key(first);
        if !found {
            return Err(self.bad(Text::new(
                format!("the tensor {first} is missing"),
                format!("缺少张量 {first}"),
            )));
        }
        Ok(())
    }
}

/// The shipped Medusa heads for `target` (the trained target: the heads read its features), as
/// many as were trained.
pub fn load_medusa(target: &Decoder, device: &Device) -> Result<Medusa, Error> {
    let kind = HiddenKind::Medusa;
    let mut store = BurnpackStore::from_static(bytes(kind)?);
    let names = store
        .get_all_tensors()
        .map_err(|e| kind.bad(burnpack_says(e)))?;
    let k = (0..=MAX_HEADS)
        .take_while(|i| names.contains_key(&format!("heads.{i}.weight")))
        .count();
    if k == 0 || k > MAX_HEADS {
        return Err(kind.bad(Text::new(
            format!("{k} heads (1 to {MAX_HEADS} expected)"),
            format!("{k} 个头（应为 1 到 {MAX_HEADS} 个）"),
        )));
    }
    load_into(Medusa::empty(k, target, device), kind, &mut store)
}

/// The shipped EAGLE draft for `target` (`EagleTtt`: the one trained with the training-time test).
pub fn load_eagle(kind: HiddenKind, target: &Decoder, device: &Device) -> Result<Eagle, Error> {
    debug_assert!(kind != HiddenKind::Medusa);
    let mut store = BurnpackStore::from_static(bytes(kind)?);
    load_into(Eagle::init(target, device), kind, &mut store)
}

#[cfg(all(test, feature = "flex"))]
mod tests {
    use super::*;

    #[test]
    fn provided_weights_must_be_the_shipped_ones_and_valid() {
        for kind in ModelKind::ALL {
            provide(kind, bytes(kind).unwrap()).unwrap();
        }
        for kind in HiddenKind::ALL {
            provide(kind, bytes(kind).unwrap()).unwrap();
            kind.check(bytes(kind).unwrap()).unwrap();
        }
        let e = provide(HiddenKind::Eagle, bytes(HiddenKind::EagleTtt).unwrap())
            .unwrap_err()
            .to_string();
        assert!(e.contains("eagle") && e.contains("differ"), "{e}");
        let e = HiddenKind::Eagle
            .check(bytes(ModelKind::Target).unwrap())
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("eagle") && e.contains("fc.weight is missing"),
            "{e}"
        );
        let mut other = bytes(ModelKind::DraftA).unwrap().to_vec();
        let middle = other.len() / 2;
        other[middle] ^= 1;
        let e = provide(ModelKind::DraftA, &other).unwrap_err().to_string();
        assert!(e.contains("draft-a") && e.contains("differ"), "{e}");
        // The target's file is not a draft's: the shapes disagree.
        let e = from_bytes(
            ModelKind::DraftA,
            bytes(ModelKind::Target).unwrap(),
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
            kind.check(bytes(kind).unwrap()).unwrap();
        }
        let e = ModelKind::DraftA
            .check(bytes(ModelKind::Target).unwrap())
            .unwrap_err()
            .to_string();
        assert!(e.contains("draft-a") && e.contains("expected F32"), "{e}");
        let mut fewer = ModelKind::Target.config();
        fewer.n_layers -= 1;
        let e = ModelKind::Target
            .check(file_of(&fewer))
            .unwrap_err()
            .to_string();
        assert!(e.contains("is missing"), "{e}");
        let mut more = ModelKind::Target.config();
        more.n_layers += 1;
        let e = ModelKind::Target
            .check(file_of(&more))
            .unwrap_err()
            .to_string();
        assert!(e.contains("is not a parameter of target"), "{e}");
        let e = ModelKind::Target
            .check(b"not a burnpack file")
            .unwrap_err()
            .to_string();
        assert!(e.contains("target"), "{e}");
    }
}
