//! Exercise 4 of the lecture (§10, on §1.2 and §2.5): on the roofline, the largest number of
//! tokens k each request can verify per step while the step stays memory-bound.

use super::{check, number, Exercise, Judged};
use crate::error::Error;
use crate::i18n::Lang;
use crate::roofline::{self, Bound, Workload};

pub(super) fn exercise(l: Lang) -> Result<Exercise, Error> {
    let gpu = roofline::gpu("a100-40gb")?;
    let model = roofline::model("opt-13b")?;
    let (batch, context) = (32, 512);
    let at = |k| -> Result<roofline::Step, Error> {
        Ok(roofline::step(
            &gpu,
            &model,
            &Workload::new(batch, context, k, roofline::DEFAULT_OVERHEAD_MS)?,
        ))
    };
    let one = at(1)?;
    let mut last_memory = 1;
    for k in 1..=64 {
        if at(k)?.bound == Bound::Memory {
            last_memory = k;
        }
    }
    let (intensity, knee) = (one.intensity, gpu.knee());
    let statement = l.pick(
        format!(
            "{} on {}, batch {batch}, context {context}: plain decoding has an arithmetic \
             intensity of about {intensity:.1} FLOP/byte; the GPU's knee is about {knee:.0}. At \
             most how many tokens k can each request verify per step while the step stays \
             memory-bound? (A whole number.)",
            model.label, gpu.label,
        ),
        format!(
            "{} 在 {} 上，批 {batch}、上下文 {context} 时普通解码的算术强度约 {intensity:.1} \
             FLOPs / 字节，GPU 的拐点约 {knee:.0}。每个请求每步最多验证几个 token（k）还保持\
             访存受限？（一个整数。）",
            model.label, gpu.label,
        ),
    );
    let judge = move |text: &str| -> Judged {
        let x = number(text, l)?;
        if x.fract() != 0.0 || !(1.0..=1024.0).contains(&x) {
            return Err(l
                .pick(
                    "Type a whole number of tokens from 1 to 1024.",
                    "请输入 1 到 1024 之间的整数个 token。",
                )
                .to_string());
        }
        let k = x as u32;
        if k == last_memory {
            return Ok(Ok(()));
        }
        let s = roofline::step(
            &gpu,
            &model,
            &Workload::new(batch, context, k, roofline::DEFAULT_OVERHEAD_MS)
                .expect("1 ≤ k ≤ 1024 was checked above"),
        );
        let i = s.intensity;
        Ok(Err(match s.bound {
            Bound::Compute => l.pick(
                format!(
                    "At k = {k} the intensity is {i:.1} FLOP/byte, past the knee: the step is \
                     already compute-bound. Processing k tokens multiplies the FLOPs by about k \
                     while the bytes read barely change."
                ),
                format!(
                    "k = {k} 时算术强度是 {i:.1} FLOPs / 字节，已经过了拐点：这一步已经是\
                     算力受限。处理 k 个 token 让运算量大约变成 k 倍，而读的字节数几乎不变。"
                ),
            ),
            Bound::Memory => l.pick(
                format!(
                    "At k = {k} the step is still memory-bound (intensity {i:.1}), so \
                     verification is still almost free: try a larger k."
                ),
                format!(
                    "k = {k} 时这一步仍然访存受限（算术强度 {i:.1}），验证几乎还是免费的：\
                     试试更大的 k。"
                ),
            ),
        }))
    };
    let below = at(last_memory)?;
    let above = at(last_memory + 1)?;
    let checks = vec![check(
        l.pick("largest k still memory-bound", "仍然访存受限的最大 k"),
        judge,
    )];
    let (ratio, next, gamma) = (
        knee / intensity,
        last_memory + 1,
        last_memory.saturating_sub(1).max(1),
    );
    let overhead = roofline::DEFAULT_OVERHEAD_MS;
    let (bt, bi, at_, ai) = (
        below.time_ms,
        below.intensity,
        above.time_ms,
        above.intensity,
    );
    let solution = l.pick(
        format!(
            "The intensity grows about k-fold: {intensity:.1}·k < {knee:.0} gives k < \
             {ratio:.1}. In the roofline model, k = {last_memory} is still memory-bound \
             ({bt:.2} ms, intensity {bi:.1}) and k = {next} is compute-bound ({at_:.2} ms, \
             intensity {ai:.1}; the step times include the fixed {overhead} ms, as in the \
             roofline widget): at batch {batch}, γ of about {gamma} keeps verification nearly \
             free."
        ),
        format!(
            "算术强度大约随 k 成倍增长：{intensity:.1}·k < {knee:.0} 得 k < {ratio:.1}。在 \
             roofline 模型里，k = {last_memory} 仍然访存受限（{bt:.2} ms，算术强度 {bi:.1}），\
             k = {next} 则算力受限（{at_:.2} ms，算术强度 {ai:.1}；步时含固定开销 {overhead} ms，\
             与 roofline 组件一致）：批 {batch} 时，γ 取 {gamma} 左右，验证几乎是免费的。"
        ),
    );
    Ok((statement, checks, solution))
}
