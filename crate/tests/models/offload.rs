//! Offloading (issue 34, part 2; lecture §4.6): with the target's weights in host memory, every
//! forward first writes them into the parameters' GPU buffers. Natively on wgpu (lavapipe): the
//! offloaded target answers as the target does and counts a crossing per forward; the forward
//! reads what crossed (another model's weights written into the target's buffers give that
//! model's logits); the crossing is timed on its own; the CPU backends refuse it by name.

use super::{target, SENTENCE};
use burn::tensor::{read_sync, Device, Tensor, TensorData};
use specdec::likesworld::encode;
use specdec::model::device::Backend;
use specdec::model::offload::{offloaded, offloaded_from};
use specdec::model::{measure, Decoder, ModelKind};

/// The logits of every position of `SENTENCE`, one causal call (no cache).
fn logits(model: &Decoder, device: &Device) -> Vec<f32> {
    let ids: Vec<i64> = encode(SENTENCE)
        .unwrap()
        .iter()
        .map(|&t| i64::from(t))
        .collect();
    let n = ids.len();
    let out = model.forward_causal(Tensor::from_data(TensorData::new(ids, [1, n]), device));
    out.into_data().convert::<f32>().try_into_vec().unwrap()
}

fn max_abs(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len());
    a.iter()
        .zip(b)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

#[cfg(feature = "wgpu")]
#[test]
fn an_offloaded_target_answers_as_the_target_and_crosses_before_every_forward() {
    let (model, device) = target(Backend::Wgpu);
    let expected = logits(&model, &device);
    assert!(model.host_weights().is_none());
    let off = read_sync(offloaded(&model)).unwrap();
    let host = off.host_weights().expect("offloaded");
    let params = burn::module::Module::num_params(&model);
    assert_eq!(
        host.bytes(),
        4 * params,
        "every parameter's f32 bytes cross"
    );
    assert_eq!(host.crossings(), 0);
    for i in 1..=3 {
        let got = logits(&off, &device);
        assert_eq!(host.crossings(), i, "one crossing per forward");
        assert!(max_abs(&expected, &got) <= 1e-5, "the same weights crossed");
    }
    // The crossing alone, timed; a model that is not offloaded has none to time.
    let clock = specdec::clock::native_clock();
    let t = read_sync(measure::transfer(&off, 1.0, &clock))
        .unwrap()
        .unwrap();
    assert_eq!(t.bytes, 4 * params);
    assert!(t.crossing.median_us > 0.0 && t.gb_per_s > 0.0, "{t:?}");
    assert!(host.crossings() > 3, "the timing crossed");
    assert!(read_sync(measure::transfer(&model, 1.0, &clock))
        .unwrap()
        .is_none());
}

#[cfg(feature = "wgpu")]
#[test]
fn the_forward_reads_the_weights_that_crossed() {
    let (model, device) = target(Backend::Wgpu);
    let own = logits(&model, &device);
    // A model of the target's shape with other weights (a fresh initialisation) as the host copy:
    // written into the target's buffers before the forward, they are what it computes with.
    let other = ModelKind::Target.config().init(&device);
    let theirs = logits(&other, &device);
    assert!(max_abs(&own, &theirs) > 0.1, "the two models differ");
    let off = read_sync(offloaded_from(&model, &other)).unwrap();
    let got = logits(&off, &device);
    assert!(
        max_abs(&theirs, &got) <= 1e-5,
        "the crossed weights computed"
    );
    // A host copy of another shape is refused.
    let draft = ModelKind::DraftA.config().init(&device);
    let e = read_sync(offloaded_from(&model, &draft))
        .unwrap_err()
        .to_string();
    assert!(e.contains("offloading"), "{e}");
}

#[test]
fn the_cpu_backends_refuse_offloading_by_name() {
    for backend in [Backend::Flex, Backend::Ndarray] {
        let (model, _) = target(backend);
        let e = read_sync(offloaded(&model)).unwrap_err().to_string();
        assert!(
            e.contains("offloading") && e.contains("host memory") && e.contains("wgpu"),
            "{backend:?}: {e}"
        );
    }
}
