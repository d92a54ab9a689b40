//! A gradient check for the drafts' training code: autodiff's directional derivative g·v against
//! central finite differences (L(θ + εv) − L(θ − εv)) / 2ε along a seeded random direction v over
//! every parameter. It catches what training silently tolerates: a detached path, an in-place
//! kernel that autodiff does not see, a parameter outside the graph.

use burn::module::{Module, ModuleMapper, ModuleVisitor, Param};
use burn::tensor::{Gradients, Tensor, TensorData};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

/// The i-th parameter's direction: uniform in [−1, 1], seeded by its place in visiting order.
fn direction<const D: usize>(like: &Tensor<D>, i: usize) -> Tensor<D> {
    let mut rng = StdRng::seed_from_u64(0x5eed ^ i as u64);
    let shape = like.shape();
    let n = shape.num_elements();
    let v: Vec<f32> = (0..n).map(|_| rng.random_range(-1.0..1.0)).collect();
    Tensor::from_data(TensorData::new(v, shape), &like.device())
}

struct Dot<'a> {
    grads: &'a Gradients,
    i: usize,
    sum: f64,
    missing: usize,
}

impl ModuleVisitor for Dot<'_> {
    fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
        let t = param.val();
        let v = direction(&t, self.i);
        self.i += 1;
        match t.grad(self.grads) {
            Some(g) => self.sum += f64::from((g * v).sum().into_scalar::<f32>()),
            None => self.missing += 1,
        }
    }
}

struct Shift {
    eps: f32,
    i: usize,
}

impl ModuleMapper for Shift {
    fn map_float<const D: usize>(&mut self, param: Param<Tensor<D>>) -> Param<Tensor<D>> {
        let (id, t, _) = param.consume();
        let v = direction(&t, self.i);
        self.i += 1;
        Param::initialized(id, (t.detach() + v * self.eps).detach().require_grad())
    }
}

/// (autodiff's g·v, the finite difference, parameters without a gradient) for `loss` at `model`.
pub fn directional<M: Module>(
    model: &M,
    loss: impl Fn(&M) -> Tensor<1>,
    eps: f32,
) -> (f64, f64, usize) {
    let grads = loss(model).backward();
    let mut dot = Dot {
        grads: &grads,
        i: 0,
        sum: 0.0,
        missing: 0,
    };
    model.visit(&mut dot);
    let at = |e: f32| {
        let shifted = model.clone().map(&mut Shift { eps: e, i: 0 });
        f64::from(loss(&shifted).into_scalar::<f32>())
    };
    let fd = (at(eps) - at(-eps)) / (2.0 * f64::from(eps));
    (dot.sum, fd, dot.missing)
}

/// Adds seeded uniform noise of this amplitude to every parameter (a test's starting point away
/// from a special initialisation).
pub struct Jitter(pub f32);

impl ModuleMapper for Jitter {
    fn map_float<const D: usize>(&mut self, param: Param<Tensor<D>>) -> Param<Tensor<D>> {
        let (id, t, _) = param.consume();
        let v = direction(&t, 1000 + t.shape().num_elements());
        Param::initialized(id, (t.detach() + v * self.0).detach().require_grad())
    }
}

/// A tiny target (vocabulary 12, d 8, one layer) seeded by `seed`, and two sequences with
/// padding (token 0) at the end: where the drafts' losses are checked.
pub fn tiny(
    device: &burn::tensor::Device,
    seed: u64,
) -> (crate::model::Decoder, Tensor<2, burn::tensor::Int>) {
    device.seed(seed);
    let target = crate::model::DecoderConfig::new(12, 8, 1, 2, 16).init(device);
    let t: Vec<i64> = vec![1, 5, 7, 3, 9, 2, 4, 0, 1, 6, 6, 8, 11, 3, 0, 0];
    (
        target,
        Tensor::from_data(TensorData::new(t, [2, 8]), device),
    )
}
