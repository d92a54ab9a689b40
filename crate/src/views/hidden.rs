//! The figures of the drafts on the target's hidden states (lecture §5.1–5.2) and of the §6
//! table: two proposals' trees side by side, coloured by the draft's confidence and by what the
//! target accepts, and every method's speedup on one wall-clock axis, measured beside predicted.

use crate::i18n::Lang;
use crate::lab::hidden::Pictured;
use crate::lab::methods::MethodsReport;
use crate::likesworld;
use crate::plot::diagrams::fitted_labels;
use crate::plot::{colors, ellipsize, render, text_width, wrap, Align, MARGIN};

/// Two proposals for one context side by side (static beside dynamic): each node coloured by the
/// draft's confidence in its path, ringed orange where the target's greedy verification accepts
/// it; a row per depth (Medusa: per head).
pub fn hidden_svg(trees: &[Pictured], l: Lang, w: u32) -> String {
    // One picture per tree, so that a phone stacks them and a wide screen sets them side by side;
    // each drawn `w` px wide (a phone's room, or its own 420).
    let h = 390;
    let label = l.pick(
        "Two trees for the same context, static beside dynamic",
        "同一上下文的两棵树：静态与动态并排",
    );
    let picture = |t: &crate::lab::hidden::Pictured| {
        render(w, h, label, |cv| {
            let panel = w as i32;
            {
                let x0 = 0;
                let medusa = t.method.starts_with("Medusa");
                // The method's first two parts ("EAGLE-2, a dynamic tree of 16 nodes").
                let cut = t
                    .method
                    .char_indices()
                    .filter(|&(_, c)| c == ',' || c == '，')
                    .nth(1)
                    .map_or(t.method.len(), |(i, _)| i);
                let title = &t.method[..cut];
                cv.text(
                    (x0 + panel / 2, 8),
                    title,
                    12,
                    colors::INK,
                    Align::Middle,
                    true,
                );
                // The context's last words that fit the figure: the tree hangs off the last.
                let mut context: Vec<&str> =
                    t.context.iter().map(|&x| likesworld::word(x)).collect();
                while context.len() > 1
                    && text_width(&format!("… {}", context.join(" ")), 11) > panel - 2 * MARGIN
                {
                    context.remove(0);
                }
                cv.text(
                    (x0 + panel / 2, 26),
                    &format!("… {}", context.join(" ")),
                    11,
                    colors::AXIS,
                    Align::Middle,
                    true,
                );
                let depth = t.depths.iter().copied().max().unwrap_or(0);
                let row_h = ((h as i32 - 130) / depth.max(1) as i32).min(48);
                let top = 56;
                // Leaves evenly spaced in depth-first order, parents over the middle of their children.
                let n = t.tokens.len();
                let children = |p: Option<usize>| (0..n).filter(move |&i| t.parents[i] == p);
                let mut x = vec![0.0f64; n];
                let mut order = Vec::new();
                let mut stack: Vec<usize> = children(None).collect::<Vec<_>>();
                stack.reverse();
                while let Some(i) = stack.pop() {
                    order.push(i);
                    let mut c: Vec<usize> = children(Some(i)).collect();
                    c.reverse();
                    stack.extend(c);
                }
                let leaves = (0..n)
                    .filter(|&i| children(Some(i)).next().is_none())
                    .count()
                    .max(1);
                let mut next = 0.0;
                let span = f64::from(panel - 60);
                for &i in order.iter().rev() {
                    let c: Vec<usize> = children(Some(i)).collect();
                    x[i] = if c.is_empty() {
                        next += 1.0;
                        span * (leaves as f64 - next + 0.5) / leaves as f64
                    } else {
                        c.iter().map(|&j| x[j]).sum::<f64>() / c.len() as f64
                    };
                }
                let root = (x0 + panel / 2, top);
                let pos = |i: usize| {
                    (
                        x0 + 40 + x[i].round() as i32,
                        top + t.depths[i] as i32 * row_h,
                    )
                };
                for d in 1..=depth {
                    let name = match (medusa, l) {
                        (true, Lang::En) => format!("head {d}"),
                        (true, Lang::Zh) => format!("头 {d}"),
                        (false, Lang::En) => format!("depth {d}"),
                        (false, Lang::Zh) => format!("深度 {d}"),
                    };
                    cv.text(
                        (x0 + 4, top + d as i32 * row_h - 6),
                        &name,
                        10,
                        colors::AXIS,
                        Align::Start,
                        true,
                    );
                }
                for i in 0..n {
                    let from = t.parents[i].map_or(root, pos);
                    let color = if t.accepted[i] {
                        colors::ORANGE
                    } else {
                        colors::GREY
                    };
                    cv.line(&[from, pos(i)], color, if t.accepted[i] { 2 } else { 1 });
                }
                cv.circle(root, 5, colors::INK, true);
                let positions: Vec<(i32, i32)> = (0..n).map(pos).collect();
                let words: Vec<&str> = t.tokens.iter().map(|&x| likesworld::word(x)).collect();
                let labels = fitted_labels(&words, &positions, 10, panel);
                for (i, label) in labels.iter().enumerate() {
                    let p = pos(i);
                    let fill = crate::plot::diagrams::ramp(colors::BLUE, t.values[i].sqrt());
                    cv.rect_rgba((p.0 - 6, p.1 - 6), (p.0 + 6, p.1 + 6), fill);
                    let ring = if t.accepted[i] {
                        colors::ORANGE
                    } else {
                        colors::GREY
                    };
                    cv.circle(p, 8, ring, false);
                    if !label.is_empty() {
                        cv.text((p.0, p.1 + 10), label, 10, colors::INK, Align::Middle, true);
                    }
                }
            }
            let y = cv.legend(
                (20, h as i32 - 40),
                &[
                    (
                        l.pick("accepted by the target", "被目标模型接受"),
                        colors::ORANGE,
                    ),
                    (l.pick("rejected", "被拒绝"), colors::GREY),
                ],
            );
            cv.legend(
                (20, (y + 18).max(h as i32 - 22)),
                &[(
                    l.pick(
                        "fill: the draft’s confidence in the path",
                        "填充：草稿对路径的置信度",
                    ),
                    colors::BLUE,
                )],
            );
        })
    };
    trees.iter().map(picture).collect()
}

/// Lecture §6 measured: every method's speedup as a horizontal bar (a phone reads the names),
/// with the lecture's prediction (verification free) and the one on the measured cost curve;
/// drawn `w` px wide (a phone's room, or its own 460).
pub fn methods_svg(r: &MethodsReport, l: Lang, w: u32) -> String {
    let n = r.rows.len() as i32;
    let top = r
        .rows
        .iter()
        .flat_map(|x| {
            [
                x.measured_speedup,
                x.predicted_speedup,
                x.predicted_speedup_curve,
            ]
        })
        .filter(|v| v.is_finite())
        .fold(1.25f64, f64::max)
        .min(12.0);
    let top = (top * 2.0).ceil() / 2.0;
    let w = w as i32;
    let title = l.pick(
        "Lecture §6 measured: speedup over the target alone",
        "第 6 节实测：相对只用目标模型的加速比",
    );
    let lines = wrap(title, 12, w - 2 * MARGIN);
    let (row_h, y0) = (30, 40 + 15 * (lines.len() as i32 - 1));
    let h = y0 + n * row_h + 90;
    let (x0, x1) = (118, w - 50);
    let px = |v: f64| x0 + ((v.clamp(0.0, top) / top) * f64::from(x1 - x0)).round() as i32;
    // A gridline every 0.5×; a number on every step of 0.5, 1, 2 or 5 whose labels keep apart.
    let label_px = text_width(&format!("{top}×"), TICK_PX) + 6;
    let every = [0.5, 1.0, 2.0, 5.0]
        .into_iter()
        .find(|s| f64::from(x1 - x0) * s / top >= f64::from(label_px))
        .unwrap_or(10.0);
    let label = l.pick(
        "Every method's speedup, measured and predicted",
        "各方法的加速比：实测与预测",
    );
    render(w as u32, h as u32, label, |cv| {
        for (i, line) in lines.iter().enumerate() {
            cv.text(
                (w / 2, 8 + 15 * i as i32),
                line,
                12,
                colors::INK,
                Align::Middle,
                true,
            );
        }
        let bottom = y0 + n * row_h;
        // Gridlines and ticks every 0.5×, the line at 1× darker.
        let mut t = 0.0;
        while t <= top + 1e-9 {
            let x = px(t);
            let color = if (t - 1.0).abs() < 1e-9 {
                colors::AXIS
            } else {
                colors::GRID
            };
            cv.line(&[(x, y0 - 4), (x, bottom)], color, 1);
            if (t / every - (t / every).round()).abs() < 1e-9 {
                cv.text(
                    (x, bottom + 4),
                    &format!("{t}×"),
                    TICK_PX,
                    colors::AXIS,
                    Align::Middle,
                    true,
                );
            }
            t += 0.5;
        }
        for (i, x) in r.rows.iter().enumerate() {
            let y = y0 + i as i32 * row_h;
            cv.text(
                (x0 - 6, y + row_h / 2 - 10),
                &ellipsize(&x.short, 11, x0 - 10),
                11,
                colors::INK,
                Align::End,
                true,
            );
            cv.rect(
                (x0, y + 6),
                (px(x.measured_speedup), y + row_h - 6),
                colors::BLUE,
                true,
            );
            if x.predicted_speedup.is_finite() {
                cv.circle(
                    (px(x.predicted_speedup), y + row_h / 2),
                    4,
                    colors::PURPLE,
                    true,
                );
            }
            if x.predicted_speedup_curve.is_finite() {
                cv.circle(
                    (px(x.predicted_speedup_curve), y + row_h / 2),
                    4,
                    colors::ORANGE,
                    true,
                );
            }
            // τ under the method's name: beside the marks it read as one of their values. At
            // 10 px, the page's floor for figure text (it was 9).
            cv.text(
                (x0 - 6, y + row_h / 2 + 3),
                &format!("τ {:.1}", x.tokens_per_call),
                TICK_PX,
                colors::AXIS,
                Align::End,
                true,
            );
        }
        let mut y = bottom + 26;
        for (name, color) in [
            (l.pick("measured wall clock", "实测墙钟"), colors::BLUE),
            (
                l.pick(
                    "the lecture’s formula (verification free)",
                    "课上的公式（验证免费）",
                ),
                colors::PURPLE,
            ),
            (
                l.pick("on the measured cost curve", "按实测开销曲线"),
                colors::ORANGE,
            ),
        ] {
            y = cv.legend((20, y), &[(name, color)]) + 18;
        }
    })
}

/// The §6 figure's tick and τ labels: the page's least size for figure text.
const TICK_PX: u32 = 10;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lab::methods::MethodRow;
    use crate::plot::tests::text_clashes;

    fn report(top: f64) -> MethodsReport {
        let row = |name: &str, s: f64| MethodRow {
            method: name.into(),
            short: name.into(),
            tokens_per_call: 2.5,
            verified_nodes_per_call: 4.0,
            accepted_fraction: 0.5,
            acceptance_by_depth: vec![],
            draft_calls_per_step: 1.0,
            c: 0.1,
            verify_over_target: 1.2,
            predicted_speedup: s * 1.1,
            predicted_speedup_curve: s * 0.9,
            measured_speedup: s,
            measured_speedup_iqr: 0.1,
            limit_speedup: s * 1.5,
            auto: None,
        };
        MethodsReport {
            budget: crate::lab::params::Budget::Nodes(8),
            times_us: None,
            suffix_nodes: None,
            drafts_on: None,
            prompts: 4,
            target_width: 64,
            rows: vec![
                row("draft A γ 4", 1.4),
                row("EAGLE-2 (dynamic)", top),
                row("Prompt Lookup", 0.9),
                row("a method named at length beyond its room", 2.0),
            ],
        }
    }

    /// The two trees of §5 at a phone's width and their own, both languages: no text under
    /// 10 px (drawn 420 px wide and scaled to a phone, they were 8 px), none over another.
    #[test]
    fn the_trees_figure_is_drawn_for_its_room() {
        use crate::lab::hidden::Pictured;
        // A root's four children, each with two children of its own: eight leaves on a row.
        let mut parents = vec![None; 4];
        for p in 0..4 {
            parents.extend([Some(p), Some(p)]);
        }
        let n = parents.len();
        let depths: Vec<usize> = parents
            .iter()
            .map(|p| 1 + usize::from(p.is_some()))
            .collect();
        let tree = Pictured {
            method: "EAGLE-2, a dynamic tree of 12 nodes, greedy".into(),
            context: (0..20).collect(),
            tokens: (0..n as u32).collect(),
            parents,
            values: vec![0.5; n],
            depths,
            accepted: (0..n).map(|i| i % 3 == 0).collect(),
        };
        for w in [322, 420] {
            for l in [Lang::En, Lang::Zh] {
                let svg = hidden_svg(std::slice::from_ref(&tree), l, w);
                assert_eq!(
                    text_clashes(&svg, w as i32),
                    Vec::<String>::new(),
                    "{w} {l:?}"
                );
                assert!(svg.contains(&format!("width=\"{w}\"")));
                for size in svg.split("font-size=\"").skip(1) {
                    let px: f64 = size.split('"').next().unwrap().parse().unwrap();
                    assert!(px >= 10.0, "{px} px");
                }
            }
        }
    }

    /// The §6 figure at a phone's width and its own, with a small and a large top speedup, in
    /// both languages: no text under 10 px, none over another or past the figure's edge.
    #[test]
    fn the_methods_figure_keeps_its_texts_apart_and_readable() {
        for top in [2.0, 11.0] {
            for w in [322, 460] {
                for l in [Lang::En, Lang::Zh] {
                    let svg = methods_svg(&report(top), l, w);
                    assert_eq!(
                        text_clashes(&svg, w as i32),
                        Vec::<String>::new(),
                        "{top} {w}"
                    );
                    for size in svg.split("font-size=\"").skip(1) {
                        let px: f64 = size.split('"').next().unwrap().parse().unwrap();
                        assert!(px >= 10.0, "{px} px in {svg}");
                    }
                    assert!(svg.contains("τ 2.5"));
                }
            }
        }
    }
}
