//! The training curve that `specdec train` writes beside the weights: loss per step (log) and
//! held-out answer accuracy at each evaluation.

use crate::plot::{colors, render, Chart, Labels, Scale};

/// Loss per step and held-out answer accuracy, as one SVG.
pub fn loss_svg(model: &str, losses: &[(usize, f64)], accuracy: &[(usize, f64)]) -> String {
    let steps = losses.last().map_or(1, |l| l.0).max(1) as f64;
    let (lo, hi) = losses
        .iter()
        .fold((f64::INFINITY, 0.0f64), |(lo, hi), &(_, l)| {
            (lo.min(l), hi.max(l))
        });
    // Smooth the per-step loss over a window of 1% of the run, for legibility.
    let w = (losses.len() / 100).max(1);
    let smooth: Vec<(f64, f64)> = losses
        .windows(w)
        .map(|win| {
            (
                win[w - 1].0 as f64,
                win.iter().map(|p| p.1).sum::<f64>() / w as f64,
            )
        })
        .collect();
    let acc: Vec<(f64, f64)> = accuracy.iter().map(|&(s, a)| (s as f64, a)).collect();
    render(640, 300, &format!("Training curve of {model}"), |cv| {
        let title = format!("{model}: training loss (log) and held-out answer accuracy");
        let labels = Labels {
            title: &title,
            x: "step",
            y: "cross-entropy (nats)",
        };
        let ch = Chart::new(
            cv,
            (60, 40, 300, 250),
            Scale::linear(0.0, steps),
            Scale::log(lo.max(1e-3), hi.max(lo * 10.0)),
            &labels,
        );
        ch.polyline(&smooth, colors::BLUE, 2);
        let labels = Labels {
            title: "",
            x: "step",
            y: "answer accuracy",
        };
        let ch = Chart::new(
            cv,
            (380, 40, 620, 250),
            Scale::linear(0.0, steps),
            Scale::linear(0.0, 1.0),
            &labels,
        );
        ch.polyline(&acc, colors::TEAL, 2);
        ch.dots(&acc, colors::TEAL, 3);
    })
}
