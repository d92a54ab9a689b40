//! Trained weights: saved by `specdec train` into `crate/assets/<model>.bpk` (burn's Burnpack
//! format) and embedded in the library, so every build — the CLI, the tests, later the wasm
//! module — carries the same trained models.

use super::{Decoder, ModelKind};
use crate::error::Error;
use burn::store::{BurnpackStore, ModuleSnapshot};
use burn::tensor::Device;
use std::path::{Path, PathBuf};

/// Embedded bytes aligned to 64: Burnpack reads its f32 data in place, which needs the file's
/// start aligned (`include_bytes!` alone guarantees only 1-byte alignment).
#[repr(C)]
struct Aligned<Bytes: ?Sized> {
    _align: [Align64; 0],
    bytes: Bytes,
}

#[repr(C, align(64))]
struct Align64;

static TARGET: &Aligned<[u8]> = &Aligned {
    _align: [],
    bytes: *include_bytes!("../../assets/target.bpk"),
};
static DRAFT_A: &Aligned<[u8]> = &Aligned {
    _align: [],
    bytes: *include_bytes!("../../assets/draft-a.bpk"),
};
static DRAFT_B: &Aligned<[u8]> = &Aligned {
    _align: [],
    bytes: *include_bytes!("../../assets/draft-b.bpk"),
};

/// The shipped weights of each model.
fn embedded(kind: ModelKind) -> &'static [u8] {
    match kind {
        ModelKind::Target => &TARGET.bytes,
        ModelKind::DraftA => &DRAFT_A.bytes,
        ModelKind::DraftB => &DRAFT_B.bytes,
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
    let mut model = kind.config().init(device);
    let mut store = BurnpackStore::from_static(embedded(kind));
    model.load_from(&mut store).map_err(|e| Error::Parse {
        what: "weights",
        text: kind.name().into(),
        why: e.to_string(),
    })?;
    Ok(model)
}

/// Writes `model` to `path` (Burnpack).
pub fn save(model: &Decoder, path: &Path) -> Result<(), Error> {
    let mut store = BurnpackStore::from_file(path)
        .auto_extension(false)
        .overwrite(true);
    model.save_into(&mut store).map_err(|e| Error::Parse {
        what: "weights file",
        text: path.display().to_string(),
        why: e.to_string(),
    })
}
