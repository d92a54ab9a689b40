//! Data-space charts on a [`Canvas`]: a linear or log₁₀ scale per axis, nice ticks, grid,
//! titles, and helpers that map data points to pixels.

use super::{colors, text_width, Align, Canvas, MARGIN};
use plotters::style::RGBColor;

/// One axis: the data range and whether it is logarithmic.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scale {
    pub lo: f64,
    pub hi: f64,
    pub log: bool,
    /// Categories 0..n at unit spacing: no numeric ticks, names drawn by [`Chart::categories`].
    pub categorical: bool,
}

impl Scale {
    pub fn linear(lo: f64, hi: f64) -> Scale {
        let hi = if hi > lo { hi } else { lo + 1.0 };
        Scale {
            lo,
            hi,
            log: false,
            categorical: false,
        }
    }

    /// `n` categories, the i-th centred at i + 0.5.
    pub fn categories(n: usize) -> Scale {
        Scale {
            lo: 0.0,
            hi: n.max(1) as f64,
            log: false,
            categorical: true,
        }
    }

    /// A log₁₀ axis; the range is widened to whole decades.
    pub fn log(lo: f64, hi: f64) -> Scale {
        let lo = lo.max(1e-300).log10().floor();
        let hi = hi.max(1e-300).log10().ceil().max(lo + 1.0);
        Scale {
            lo: 10f64.powf(lo),
            hi: 10f64.powf(hi),
            log: true,
            categorical: false,
        }
    }

    /// Position of `v` in [0, 1] along the axis (clamped).
    pub fn fraction(&self, v: f64) -> f64 {
        let f = if self.log {
            (v.max(1e-300).log10() - self.lo.log10()) / (self.hi.log10() - self.lo.log10())
        } else {
            (v - self.lo) / (self.hi - self.lo)
        };
        f.clamp(0.0, 1.0)
    }

    /// About `n` round tick values inside the range.
    pub fn ticks(&self, n: usize) -> Vec<f64> {
        if self.log {
            let (a, b) = (
                self.lo.log10().round() as i32,
                self.hi.log10().round() as i32,
            );
            let step = ((b - a) as usize).div_ceil(n.max(1)).max(1);
            return (a..=b).step_by(step).map(|e| 10f64.powi(e)).collect();
        }
        let raw = (self.hi - self.lo) / n.max(1) as f64;
        let mag = 10f64.powf(raw.log10().floor());
        let step = [1.0, 2.0, 2.5, 5.0, 10.0]
            .iter()
            .map(|m| m * mag)
            .find(|s| *s >= raw)
            .unwrap_or(10.0 * mag);
        let first = (self.lo / step).ceil() as i64;
        let last = (self.hi / step + 1e-9).floor() as i64;
        (first..=last).map(|i| i as f64 * step).collect()
    }
}

/// A plot rectangle inside a canvas with its two scales.
pub struct Chart<'c, 'a> {
    pub canvas: &'c Canvas<'a>,
    /// Left, top, right, bottom pixel edges of the plot area.
    pub rect: (i32, i32, i32, i32),
    pub x: Scale,
    pub y: Scale,
    /// The y under the x axis's ticks and title: what is drawn under the chart starts here.
    pub below: i32,
    /// The y under the title's last line: a note over a tall bar stays below it.
    title_bottom: i32,
}

/// The narrowest bar drawn: a 1 px box is lost on a high-density screen and after scaling.
pub const MIN_BAR_PX: i32 = 2;

/// Pixel edges `a ≤ b` widened about their middle to at least [`MIN_BAR_PX`] (`b − a` counts the
/// pixels of a filled box from a to b).
fn at_least_min_bar(a: i32, b: i32) -> (i32, i32) {
    let (a, b) = (a.min(b), a.max(b));
    let short = MIN_BAR_PX - (b - a);
    if short <= 0 {
        (a, b)
    } else {
        (a - short / 2, b + short - short / 2)
    }
}

/// Titles of a chart.
pub struct Labels<'s> {
    pub title: &'s str,
    pub x: &'s str,
    pub y: &'s str,
}

impl<'c, 'a> Chart<'c, 'a> {
    /// Draws grid, ticks and titles for a plot area of `rect` and returns the chart.
    pub fn new(
        canvas: &'c Canvas<'a>,
        rect: (i32, i32, i32, i32),
        x: Scale,
        y: Scale,
        labels: &Labels,
    ) -> Chart<'c, 'a> {
        let mut chart = Chart {
            canvas,
            rect,
            x,
            y,
            below: rect.3 + 18,
            title_bottom: rect.1 - 22,
        };
        let (l, t, r, b) = rect;
        // Each x label centred on its tick, but moved right of the corner, where the y axis's
        // lowest label ends (at l − 5), and left of the figure's edge; one that would touch the
        // label before it is left out (its gridline stays), as on a narrow log axis.
        let mut drawn_to = l - 5;
        for v in if x.categorical { vec![] } else { x.ticks(6) } {
            let px = chart.px(v, y.lo).0;
            canvas.line(&[(px, t), (px, b)], colors::GRID, 1);
            let label = tick_label(v);
            let half = (text_width(&label, 11) + 1) / 2;
            let cx = px.max(l - 3 + half).min(canvas.width - MARGIN - half);
            if cx - half >= drawn_to + 2 {
                canvas.text((cx, b + 4), &label, 11, colors::AXIS, Align::Middle, true);
                drawn_to = cx + half;
            }
        }
        for v in if y.categorical { vec![] } else { y.ticks(5) } {
            let py = chart.px(x.lo, v).1;
            canvas.line(&[(l, py), (r, py)], colors::GRID, 1);
            canvas.text(
                (l - 5, py),
                &tick_label(v),
                11,
                colors::AXIS,
                Align::End,
                false,
            );
        }
        canvas.line(&[(l, t), (l, b), (r, b)], colors::AXIS, 1);
        // Centred under the plot, shifted (not cut) where a narrow figure's edge would clip it,
        // and wrapped where the figure is narrower than the title.
        for (i, line) in super::wrap(labels.x, 12, canvas.width - 2 * MARGIN)
            .iter()
            .enumerate()
        {
            let half = (text_width(line, 12) + 1) / 2;
            let cx = ((l + r) / 2)
                .min(canvas.width - MARGIN - half)
                .max(MARGIN + half);
            let y = b + 20 + 15 * i as i32;
            canvas.text((cx, y), line, 12, colors::INK, Align::Middle, true);
            chart.below = y + 15;
        }
        canvas.reach(chart.below);
        canvas.text_vertical((l - 42, (t + b) / 2), labels.y, 12, colors::INK);
        chart.title_bottom = canvas.title(l, t, labels.title, 14);
        chart
    }

    /// Data → pixel.
    pub fn px(&self, x: f64, y: f64) -> (i32, i32) {
        let (l, t, r, b) = self.rect;
        let fx = self.x.fraction(x);
        let fy = self.y.fraction(y);
        (
            (f64::from(l) + fx * f64::from(r - l)).round() as i32,
            (f64::from(b) - fy * f64::from(b - t)).round() as i32,
        )
    }

    pub fn polyline(&self, points: &[(f64, f64)], color: RGBColor, width: u32) {
        let px: Vec<(i32, i32)> = points
            .iter()
            .filter(|(x, y)| x.is_finite() && y.is_finite())
            .map(|&(x, y)| self.px(x, y))
            .collect();
        self.canvas.line(&px, color, width);
    }

    pub fn dots(&self, points: &[(f64, f64)], color: RGBColor, radius: i32) {
        for &(x, y) in points
            .iter()
            .filter(|(x, y)| x.is_finite() && y.is_finite())
        {
            self.canvas.circle(self.px(x, y), radius, color, true);
        }
    }

    /// A vertical bar from the bottom of the axis up to `y`, between data x₀ and x₁.
    pub fn bar(&self, x0: f64, x1: f64, y: f64, color: RGBColor) {
        let (a, top) = self.px(x0, y);
        let (b, _) = self.px(x1, y);
        self.canvas.rect((a, top), (b, self.rect.3), color, true);
    }

    /// A filled box between data x₀…x₁ and y₀…y₁, at least [`MIN_BAR_PX`] wide so that a very
    /// short interval (a draft call among long target calls) is still seen.
    pub fn span(&self, (x0, x1): (f64, f64), (y0, y1): (f64, f64), color: RGBColor) {
        let (a, top) = self.px(x0, y1);
        let (b, bottom) = self.px(x1, y0);
        let (a, b) = at_least_min_bar(a, b);
        self.canvas.rect((a, top), (b, bottom), color, true);
    }

    pub fn hline(&self, y: f64, color: RGBColor) {
        let (_, py) = self.px(self.x.lo, y);
        self.canvas
            .line(&[(self.rect.0, py), (self.rect.2, py)], color, 1);
    }

    pub fn vline(&self, x: f64, color: RGBColor) {
        let (px, _) = self.px(x, self.y.lo);
        self.canvas
            .line(&[(px, self.rect.1), (px, self.rect.3)], color, 1);
    }

    /// Category names under the x-axis, one per unit; a `\n` starts a new line. A name wider
    /// than its category is wrapped to it; a word still too wide (a narrow figure) staggers the
    /// names, every other one below the rest, so that each has two categories' room, and is cut
    /// with an ellipsis beyond that. The figure grows to hold them; returns the y under the
    /// lowest line.
    pub fn categories(&self, names: &[&str]) -> i32 {
        const SIZE: u32 = 11;
        const STEP: i32 = 13;
        let pitch = if names.is_empty() {
            0
        } else {
            self.px(1.0, self.y.lo).0 - self.px(0.0, self.y.lo).0
        };
        let room = pitch - 4;
        let lines: Vec<Vec<String>> = names
            .iter()
            .map(|name| {
                name.split('\n')
                    .flat_map(|l| super::wrap_words(l, SIZE, room))
                    .collect()
            })
            .collect();
        let stagger = lines.iter().flatten().any(|l| text_width(l, SIZE) > room);
        let rows = lines.iter().map(Vec::len).max().unwrap_or(0) as i32;
        // Each name's slot: its category (two, staggered) less 2 px a side, kept right of the y
        // axis's lowest tick and inside the figure; a name is centred under its category where
        // the slot allows, moved inward at an edge, and cut with an ellipsis if still too wide.
        let slot = if stagger { 2 * pitch - 4 } else { room };
        let (least, most) = (self.rect.0 - 2, self.canvas.width - MARGIN);
        let mut bottom = self.rect.3;
        for (i, name) in lines.iter().enumerate() {
            let (px, _) = self.px(i as f64 + 0.5, self.y.lo);
            let a = px - slot / 2;
            let (a, b) = (a.max(least), (a + slot).min(most));
            let first = if stagger && i % 2 == 1 { rows } else { 0 };
            for (line, text) in name.iter().enumerate() {
                let text = super::ellipsize(text, SIZE, b - a);
                let w = text_width(&text, SIZE);
                let x = px.min(b - (w + 1) / 2).max(a + (w + 1) / 2);
                let y = self.rect.3 + 4 + STEP * (first + line as i32);
                self.canvas
                    .text((x, y), &text, SIZE, colors::INK, Align::Middle, true);
                bottom = bottom.max(y + STEP);
            }
        }
        self.canvas.reach(bottom + 2);
        bottom
    }

    /// A label over a data point, kept under the title (a wrapped title reaches down to the
    /// plot, where a tall bar's label would print over it).
    pub fn note(&self, x: f64, y: f64, text: &str, color: RGBColor, align: Align) {
        let (px, py) = self.px(x, y);
        let y = (py - 8).max(self.title_bottom + 8);
        self.canvas.text((px, y), text, 11, color, align, false);
    }
}

/// A number printed compactly for a tick label.
pub fn tick_label(v: f64) -> String {
    let a = v.abs();
    if v == 0.0 {
        "0".into()
    } else if !(1e-3..1e5).contains(&a) {
        let e = a.log10().floor() as i32;
        let m = v / 10f64.powi(e);
        if (m.abs() - 1.0).abs() < 1e-9 {
            format!("{}1e{e}", if v < 0.0 { "-" } else { "" })
        } else {
            format!("{m:.1}e{e}")
        }
    } else if (v - v.round()).abs() < 1e-9 {
        format!("{}", v.round() as i64)
    } else {
        let s = format!("{v:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tick_labels_are_short() {
        assert_eq!(tick_label(0.0), "0");
        assert_eq!(tick_label(5.0), "5");
        assert_eq!(tick_label(0.25), "0.25");
        assert_eq!(tick_label(1e-12), "1e-12");
        assert_eq!(tick_label(2.5e6), "2.5e6");
    }

    #[test]
    fn linear_ticks_are_round() {
        assert_eq!(
            Scale::linear(0.0, 10.0).ticks(5),
            vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
        );
        assert_eq!(
            Scale::linear(0.0, 1.0).ticks(4),
            vec![0.0, 0.25, 0.5, 0.75, 1.0]
        );
    }

    /// The decoding widget's lanes name their two rows on the left; a numeric y tick there would
    /// print over "plain" and "speculative" (as it once did).
    #[test]
    fn a_categorical_axis_draws_no_numeric_ticks() {
        let numbers = |y: Scale| {
            let svg = super::super::render(400, 200, "lanes", |cv| {
                let labels = Labels {
                    title: "",
                    x: "",
                    y: "",
                };
                Chart::new(
                    cv,
                    (110, 40, 380, 140),
                    Scale::linear(0.0, 10.0),
                    y,
                    &labels,
                );
            });
            svg.split("<text")
                .skip(1)
                .filter_map(|t| {
                    let body = &t[t.find('>')? + 1..t.find("</text>")?];
                    body.trim().parse::<f64>().ok()
                })
                .count()
        };
        let x_ticks = Scale::linear(0.0, 10.0).ticks(6).len();
        assert_eq!(
            numbers(Scale::categories(2)),
            x_ticks,
            "only the x axis has numbers"
        );
        assert!(
            numbers(Scale::linear(0.0, 2.0)) > x_ticks,
            "the check sees y ticks"
        );
    }

    /// A box narrower than two pixels is widened about its middle; a wider one is kept.
    #[test]
    fn bars_are_at_least_two_pixels_wide() {
        assert_eq!(at_least_min_bar(50, 50), (49, 51));
        assert_eq!(at_least_min_bar(50, 51), (50, 52));
        assert_eq!(at_least_min_bar(51, 50), (50, 52));
        assert_eq!(at_least_min_bar(10, 30), (10, 30));
        for (a, b) in [(0, 0), (7, 8), (3, 5)] {
            let (a, b) = at_least_min_bar(a, b);
            assert!(b - a >= MIN_BAR_PX);
        }
    }

    #[test]
    fn log_scale_spans_decades() {
        let s = Scale::log(3e-17, 0.4);
        assert_eq!((s.lo, s.hi), (1e-17, 1.0));
        assert!((s.fraction(1e-17)).abs() < 1e-12 && (s.fraction(1.0) - 1.0).abs() < 1e-12);
        assert!(s.ticks(6).len() <= 7);
    }
}
