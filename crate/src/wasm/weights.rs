//! What the page hands every module it starts, the training module included: the models'
//! weights, which no module embeds (the page downloads them once, `www/weights.js`).

use super::into_error;
use crate::error::Named;
use crate::i18n::Lang;
use wasm_bindgen::prelude::*;

/// Hands this module the weights of one model (`target`, `draft-a` or `draft-b`), downloaded by
/// the page from `pkg/weights/<model>.bpk`, or of a draft on the target's features (`medusa`,
/// `eagle`, `eagle-ttt`, from `pkg/weights/hidden/`, downloaded only for those experiments), or of
/// a member of a boost-tuning pool (`pool/boost-1` … `pool/plain-4`, from `pkg/weights/pool/`, only
/// for the jobs that run them: the learned speculators, the measured choice's vectors): the
/// modules do not embed them.
#[wasm_bindgen]
pub fn provide_weights(model: &str, bytes: &[u8]) -> Result<(), JsError> {
    use crate::model::weights::{provide, HiddenKind};
    let fail = |e| into_error(e, Lang::En);
    if let Some(kind) = HiddenKind::ALL.into_iter().find(|k| k.name() == model) {
        return provide(kind, bytes).map_err(fail);
    }
    if let Some(member) = crate::model::draft_file::pool_member(model) {
        return provide(member, bytes).map_err(fail);
    }
    let kind = crate::model::ModelKind::parse(model).map_err(fail)?;
    provide(kind, bytes).map_err(fail)
}
