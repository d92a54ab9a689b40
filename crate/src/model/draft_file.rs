//! A trained draft of any shape (lecture §4.2, learned speculators): its shape, parsed from
//! `a`, `b` or `d,layers,heads,d_ff` and bounded so that it fits the page's memory, and its file
//! — Burnpack with the shape's one fact that the tensors do not hold (the head count) in the
//! metadata, so that a file alone gives back the draft. Reading a file checks everything before
//! a tensor is built: a corrupt or foreign file is refused with what is wrong.

use super::weights::{self, burnpack_says, check_store, WeightFile};
use super::{Decoder, DecoderConfig, ModelKind};
use crate::error::{Error, Range, Text};
use crate::likesworld::{MAX_LEN, VOCAB};
use burn::store::burn_pack::{Bytes, Reader};
use burn::store::{BurnpackStore, ModuleSnapshot};
use burn::tensor::Device;

/// The widths, depths and head counts a trained draft may have: up to ≈ 3.2 M parameters
/// (12.8 MB as a file, under the 16 MiB a weights file may have; training keeps a few copies of
/// it, within a browser tab).
pub const D_MODEL: Range = Range::new("d", 4.0, 256.0);
pub const LAYERS: Range = Range::new("layers", 1.0, 4.0);
pub const HEADS: Range = Range::new("heads", 1.0, 16.0);
pub const D_FF: Range = Range::new("d_ff", 4.0, 1024.0);

/// The largest weight a draft file may hold (trained ones stay within a few units): with every
/// weight within it, LayerNorm keeps the activations and so the logits finite.
const MAX_WEIGHT: f32 = 1e4;

/// The metadata key that marks a draft file and the one that holds its head count.
const MARK: (&str, &str) = ("specdec", "likesworld-draft");
const HEADS_KEY: &str = "n_heads";

/// A draft's shape: `a` or `b` (the shipped drafts' shapes) or `d,layers,heads,d_ff`.
pub fn shape(text: &str) -> Result<DecoderConfig, Error> {
    let named = match text.trim() {
        "a" | "A" | "draft-a" => Some(ModelKind::DraftA),
        "b" | "B" | "draft-b" => Some(ModelKind::DraftB),
        _ => None,
    };
    if let Some(kind) = named {
        return Ok(kind.config());
    }
    let bad = |why: Text| Error::Parse {
        what: "draft shape",
        text: text.into(),
        why,
    };
    let parts: Vec<&str> = text.split(',').map(str::trim).collect();
    let [d, layers, heads, d_ff] = parts.as_slice() else {
        return Err(bad(Text::new(
            "expected a, b or d,layers,heads,d_ff (four numbers)",
            "应为 a、b 或 d,layers,heads,d_ff（四个数）",
        )));
    };
    let mut values = [0usize; 4];
    for (v, (s, range)) in values.iter_mut().zip([
        (d, &D_MODEL),
        (layers, &LAYERS),
        (heads, &HEADS),
        (d_ff, &D_FF),
    ]) {
        let digits = !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
        let n: usize = match s.parse() {
            Ok(n) => n,
            // All digits but too long for a number: out of the range, said as such.
            Err(_) if digits => {
                return Err(range.check(s.parse().unwrap_or(f64::INFINITY)).unwrap_err())
            }
            Err(_) => {
                return Err(bad(Text::new(
                    format!("{} {s:?} is not a whole number", range.name),
                    format!("{} {s:?} 不是整数", range.name),
                )))
            }
        };
        range.check(n as f64)?;
        *v = n;
    }
    let [d, layers, heads, d_ff] = values;
    if d % heads != 0 {
        return Err(bad(Text::new(
            format!("d {d} is not a multiple of heads {heads}"),
            format!("d {d} 不是 heads {heads} 的倍数"),
        )));
    }
    Ok(DecoderConfig::new(VOCAB, d, layers, heads, d_ff))
}

/// The shape written back as [`shape`] reads it.
pub fn shape_name(c: &DecoderConfig) -> String {
    format!("{},{},{},{}", c.d_model, c.n_layers, c.n_heads, c.d_ff)
}

/// The file's bytes: Burnpack with the mark and the head count in its metadata.
pub fn to_bytes(model: &Decoder, config: &DecoderConfig) -> Result<Vec<u8>, Error> {
    let mut store = store(BurnpackStore::from_bytes(None), config);
    model
        .save_into(&mut store)
        .map_err(|e| file_bad("memory", e.to_string().into()))?;
    Ok(store
        .get_bytes()
        .map_err(|e| file_bad("memory", e.to_string().into()))?
        .to_vec())
}

/// Writes the draft's file at `path` (native).
#[cfg(not(target_arch = "wasm32"))]
pub fn save(model: &Decoder, config: &DecoderConfig, path: &std::path::Path) -> Result<(), Error> {
    let bytes = to_bytes(model, config)?;
    std::fs::write(path, bytes)
        .map_err(|e| file_bad(&path.display().to_string(), e.to_string().into()))
}

fn store(s: BurnpackStore, config: &DecoderConfig) -> BurnpackStore {
    s.metadata(MARK.0, MARK.1)
        .metadata(HEADS_KEY, config.n_heads.to_string())
}

/// Reads a draft file: its shape from the tensors and the metadata, every parameter checked
/// against that shape, then loaded on `device`. `name` names the file in messages.
pub fn from_bytes(
    bytes: &[u8],
    name: &str,
    device: &Device,
) -> Result<(Decoder, DecoderConfig), Error> {
    let config = read_shape(bytes, name)?;
    let mut store = BurnpackStore::from_bytes(Some(Bytes::from_bytes_vec(bytes.to_vec())));
    check_store(&mut store, &config, name, |why| file_bad(name, why))?;
    let mut model = config.init(device);
    model
        .load_from(&mut store)
        .map_err(|e| file_bad(name, burnpack_says(e)))?;
    Ok((model, config))
}

/// The shape a draft file holds: d, layers and d_ff from its tensors, the heads from its
/// metadata; refused unless the file is marked as a draft's and the shape is one [`shape`]
/// accepts.
pub fn read_shape(bytes: &[u8], name: &str) -> Result<DecoderConfig, Error> {
    let bad = |why: Text| file_bad(name, why);
    if bytes.len() > weights::MAX_WEIGHTS_BYTES {
        return Err(bad(Text::new(
            format!(
                "{} bytes is over the limit of {}",
                bytes.len(),
                weights::MAX_WEIGHTS_BYTES
            ),
            format!(
                "{} 字节，超出上限 {}",
                bytes.len(),
                weights::MAX_WEIGHTS_BYTES
            ),
        )));
    }
    let reader = Reader::from_bytes(Bytes::from_bytes_vec(bytes.to_vec())).map_err(|e| {
        bad(Text::new(
            format!("not a Burnpack file (the reader says: {e})"),
            format!("不是 Burnpack 文件（读取器报告：{e}）"),
        ))
    })?;
    if reader.metadata().get(MARK.0).map(String::as_str) != Some(MARK.1) {
        return Err(bad(Text::new(
            "not a draft written by specdec train (its metadata has no specdec mark)",
            "不是 specdec train 写出的草稿（元数据里没有 specdec 标记）",
        )));
    }
    let heads: usize = reader
        .metadata()
        .get(HEADS_KEY)
        .and_then(|h| h.parse().ok())
        .ok_or_else(|| bad(Text::new("the head count is missing", "缺少头数")))?;
    let names = reader.tensor_names();
    let layers = (0..)
        .take_while(|l| names.contains(&format!("blocks.{l}.qkv.weight").as_str()))
        .count();
    let tensors = reader.into_tensors().map_err(|e| bad(burnpack_says(e)))?;
    let dims = |n: &str| {
        tensors
            .iter()
            .find(|t| t.name == n)
            .map(|t| t.shape.to_vec())
            .ok_or_else(|| {
                bad(Text::new(
                    format!("the tensor {n} is missing"),
                    format!("缺少张量 {n}"),
                ))
            })
    };
    let token = dims("token.weight")?;
    let up = dims("blocks.0.up.weight")?;
    let position = dims("position.weight")?;
    if token.len() != 2 || up.len() != 2 || position.len() != 2 {
        return Err(bad(Text::new(
            "tensors of the wrong rank",
            "张量的维数不对",
        )));
    }
    if token[0] != VOCAB || position[0] < MAX_LEN {
        return Err(bad(Text::new(
            format!("vocabulary {} and {} positions: not a LikesWorld draft (vocabulary {VOCAB}, ≥ {MAX_LEN} positions)", token[0], position[0]),
            format!("词表 {}、{} 个位置：不是 LikesWorld 草稿（词表 {VOCAB}、至少 {MAX_LEN} 个位置）", token[0], position[0]),
        )));
    }
    // A trained draft's weights are small numbers; non-finite or huge ones would make its
    // distributions NaN, which no verification rule should be handed.
    for t in &tensors {
        let bytes = t.to_bytes().map_err(|e| bad(burnpack_says(e)))?;
        let wild = bytes
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .find(|w| !w.is_finite() || w.abs() > MAX_WEIGHT);
        if let Some(w) = wild {
            return Err(bad(Text::new(
                format!(
                    "{} holds {w}: a trained draft's weights are finite and within ±{MAX_WEIGHT}",
                    t.name
                ),
                format!(
                    "{} 里有 {w}：训练出的草稿权重应是有限值，且在 ±{MAX_WEIGHT} 以内",
                    t.name
                ),
            )));
        }
    }
    let text = format!("{},{layers},{heads},{}", token[1], up[1]);
    let mut config = shape(&text).map_err(|e| bad(e.to_string().into()))?;
    config.max_positions = position[0];
    Ok(config)
}

fn file_bad(name: &str, why: Text) -> Error {
    Error::Parse {
        what: "draft file",
        text: name.into(),
        why,
    }
}

/// Members of a boost-tuning pool (lecture §4.2: the slides' 1 → 2 → 4 small models).
pub const POOL: Range = Range::new("pool", 1.0, 4.0);

/// Where `specdec train --model pool` writes the shipped pool.
#[cfg(not(target_arch = "wasm32"))]
pub fn pool_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets")
        .join("pool")
}

/// The file of member `i` (from 0) of the boost-tuned pool, or of the control's.
pub fn pool_file(boosted: bool, i: usize) -> String {
    format!("{}-{}.bpk", if boosted { "boost" } else { "plain" }, i + 1)
}

/// Member `i` (from 0) of a shipped pool, boost-tuned or the control's: a draft file, checked as
/// [`read_shape`] reads one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolMember {
    pub boosted: bool,
    pub i: usize,
}

impl WeightFile for PoolMember {
    fn file(self) -> String {
        format!(
            "pool/{}",
            pool_file(self.boosted, self.i).trim_end_matches(".bpk")
        )
    }

    fn bad(self, why: Text) -> Error {
        file_bad(&pool_file(self.boosted, self.i), why)
    }

    fn check(self, bytes: &'static [u8]) -> Result<(), Error> {
        read_shape(bytes, &pool_file(self.boosted, self.i)).map(drop)
    }
}

/// The first `n` members of the shipped pool, boost-tuned or the control (wasm: as the page
/// handed them over, from `pkg/weights/pool/`).
pub fn shipped_pool(boosted: bool, n: usize, device: &Device) -> Result<Vec<Decoder>, Error> {
    POOL.check(n as f64)?;
    (0..n)
        .map(|i| {
            let bytes = weights::bytes(PoolMember { boosted, i })?;
            from_bytes(bytes, &pool_file(boosted, i), device).map(|(m, _)| m)
        })
        .collect()
}

/// The member of a pool a page hands over by `name` (`pool/boost-1` …, as `pkg/weights/pool/`
/// holds them), or `None` for another name.
pub fn pool_member(name: &str) -> Option<PoolMember> {
    (0..POOL.max as usize)
        .flat_map(|i| [true, false].map(|boosted| PoolMember { boosted, i }))
        .find(|m| m.file() == name)
}

/// The first `n` members of a pool that `specdec train --model pool --out-dir DIR` wrote.
#[cfg(not(target_arch = "wasm32"))]
pub fn read_pool(
    dir: &std::path::Path,
    boosted: bool,
    n: usize,
    device: &Device,
) -> Result<Vec<Decoder>, Error> {
    POOL.check(n as f64)?;
    (0..n)
        .map(|i| {
            let path = dir.join(pool_file(boosted, i));
            let name = path.display().to_string();
            let bytes = std::fs::read(&path).map_err(|e| file_bad(&name, e.to_string().into()))?;
            from_bytes(&bytes, &name, device).map(|(m, _)| m)
        })
        .collect()
}
