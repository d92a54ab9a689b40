//! How α depends on temperature (lecture §2.6, demo 02.5): it depends on the shape of the
//! distributions. Two flat but different distributions overlap more as T rises (both tend to
//! uniform); a confident token with a long tail, on which both models agree, overlaps less as T
//! rises (the tails where they differ grow).

use super::softmax;
use crate::sampling::overlap;

/// A named pair of distributions given as logits (target, draft).
pub struct Shape {
    pub name: &'static str,
    pub target: &'static [f64],
    pub draft: &'static [f64],
}

/// The lecture's two shapes.
pub const SHAPES: [Shape; 2] = [
    Shape {
        name: "flat",
        target: &[0.4, 0.2, 0.0, -0.2, -0.4],
        draft: &[-0.4, 0.1, 0.3, 0.0, -0.1],
    },
    Shape {
        name: "peaked",
        target: &[4.0, 0.0, -0.5, -1.0, -1.5],
        draft: &[3.6, -1.5, 0.0, -0.8, -0.2],
    },
];

/// α(T) = Σ min(p_T, q_T) for each temperature.
pub fn acceptance_vs_temperature(shape: &Shape, temperatures: &[f64]) -> Vec<f64> {
    temperatures
        .iter()
        .map(|&t| overlap(&softmax(shape.target, t), &softmax(shape.draft, t)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flat_rises_and_peaked_falls_with_temperature() {
        let temps = [0.25, 0.5, 1.0, 1.5, 2.0];
        let flat = acceptance_vs_temperature(&SHAPES[0], &temps);
        let peaked = acceptance_vs_temperature(&SHAPES[1], &temps);
        assert!(flat.windows(2).all(|w| w[1] > w[0]), "{flat:?}");
        assert!(peaked.windows(2).all(|w| w[1] < w[0]), "{peaked:?}");
    }
}
