//! Charts drawn with plotters into SVG strings.
//!
//! Everything is placed in pixel space on plotters' SVG backend, with our own axes and ticks.
//! plotters' chart builder measures every label's text to lay out a mesh, and in the browser its
//! font back end does that by inserting a `<span>` and forcing a layout per label: a dozen
//! synchronous reflows per redraw, and impossible in a Web Worker. Our layout needs no text
//! metrics, so a redraw is pure string building, natively and in wasm alike.

mod axes;
pub mod diagrams;
mod text;

pub use axes::{tick_label, Chart, Labels, Scale, MIN_BAR_PX};
pub use text::{ellipsize, fit, text_width, wrap, wrap_words};

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use std::cell::Cell;

/// The palette: one colour per role, shared by every chart so that a legend means the same
/// thing everywhere (target = ink, draft/variant = orange, MSS = teal, naive = purple). The hues
/// are Okabe and Ito's, which stay apart under the common colour-vision deficiencies; red (notes
/// and markers) is their vermillion darkened to read as small text on white (4.8:1).
pub mod colors {
    use plotters::style::RGBColor;
    pub const INK: RGBColor = RGBColor(33, 37, 41);
    pub const GRID: RGBColor = RGBColor(226, 229, 233);
    pub const AXIS: RGBColor = RGBColor(120, 126, 134);
    pub const BLUE: RGBColor = RGBColor(0, 114, 178);
    pub const ORANGE: RGBColor = RGBColor(230, 159, 0);
    pub const TEAL: RGBColor = RGBColor(0, 158, 115);
    pub const PURPLE: RGBColor = RGBColor(204, 121, 167);
    pub const RED: RGBColor = RGBColor(190, 80, 0);
    pub const GREY: RGBColor = RGBColor(160, 165, 170);
}

/// Horizontal anchoring of a label.
#[derive(Debug, Clone, Copy)]
pub enum Align {
    Start,
    Middle,
    End,
}

/// A pixel-space drawing surface over an SVG string.
pub struct Canvas<'a> {
    area: DrawingArea<SVGBackend<'a>, Shift>,
    /// The figure's width: text is fitted to it.
    pub width: i32,
    /// The lowest pixel drawn so far that may lie below the height asked for (a legend that
    /// wrapped onto more rows on a narrow figure); the SVG grows to hold it.
    bottom: Cell<i32>,
}

/// The narrowest a figure is drawn: a 320 px phone's room, less the page's and widget's margins.
/// Narrower rooms scale the figure down rather than squeeze its labels further.
pub const MIN_WIDTH: u32 = 280;

/// How far a figure may grow below its height to hold a wrapped legend.
const GROW: u32 = 160;

/// The width to draw a figure designed `design` px wide in the room the page has for it, `room`
/// (CSS px; none: the design width). A figure is drawn for its room, not scaled down to it, so
/// that its labels keep their size on a phone.
pub fn figure_width(design: u32, room: Option<u32>) -> u32 {
    room.map_or(design, |r| r.clamp(MIN_WIDTH, design.max(MIN_WIDTH)))
}

/// Draws into a fresh `width × height` SVG on white and returns it, labelled for screen readers.
pub fn render(width: u32, height: u32, label: &str, draw: impl FnOnce(&Canvas)) -> String {
    draw_svg(width, height, label, true, draw)
}

/// Like [`render`] but transparent: a layer to stack over another picture of the same size, so
/// that a small change (a marker) does not make the page re-parse the picture underneath.
pub fn render_overlay(width: u32, height: u32, label: &str, draw: impl FnOnce(&Canvas)) -> String {
    draw_svg(width, height, label, false, draw)
}

fn draw_svg(
    width: u32,
    height: u32,
    label: &str,
    opaque: bool,
    draw: impl FnOnce(&Canvas),
) -> String {
    let mut svg = String::new();
    let bottom;
    {
        let area = SVGBackend::with_string(&mut svg, (width, height + GROW)).into_drawing_area();
        if opaque {
            area.fill(&WHITE)
                .expect("drawing into a String cannot fail");
        }
        let canvas = Canvas {
            area,
            width: width as i32,
            bottom: Cell::new(height as i32),
        };
        draw(&canvas);
        canvas
            .area
            .present()
            .expect("drawing into a String cannot fail");
        bottom = canvas.bottom.get().clamp(0, (height + GROW) as i32);
    }
    let label = escape(label);
    let drawn = format!(
        "height=\"{}\" viewBox=\"0 0 {width} {}\"",
        height + GROW,
        height + GROW
    );
    svg.replacen(
        &drawn,
        &format!("height=\"{bottom}\" viewBox=\"0 0 {width} {bottom}\""),
        1,
    )
    .replacen(
        "<svg ",
        &format!("<svg role=\"img\" aria-label=\"{label}\" text-rendering=\"optimizeSpeed\" "),
        1,
    )
}

/// plotters' SVG back end writes font sizes at 1/1.24 of the requested size; undo that so a
/// 12 px label is 12 px on the page.
fn font_px(size: u32) -> f64 {
    f64::from(size) * 1.24
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The least room a legend keeps right of where it starts (see [`Canvas::legend`]).
const LEGEND_ROOM: i32 = 200;

impl Canvas<'_> {
    pub fn line(&self, points: &[(i32, i32)], color: RGBColor, width: u32) {
        if points.len() >= 2 {
            let style = ShapeStyle::from(&color).stroke_width(width);
            self.area
                .draw(&PathElement::new(points.to_vec(), style))
                .expect("drawing into a String cannot fail");
        }
    }

    pub fn rect(&self, a: (i32, i32), b: (i32, i32), color: RGBColor, filled: bool) {
        let style = if filled {
            color.filled()
        } else {
            color.stroke_width(1)
        };
        self.area
            .draw(&Rectangle::new([a, b], style))
            .expect("drawing into a String cannot fail");
    }

    pub fn rect_rgba(&self, a: (i32, i32), b: (i32, i32), color: RGBAColor) {
        self.area
            .draw(&Rectangle::new([a, b], color.filled()))
            .expect("drawing into a String cannot fail");
    }

    pub fn circle(&self, c: (i32, i32), r: i32, color: RGBColor, filled: bool) {
        let style = if filled {
            color.filled()
        } else {
            color.stroke_width(2)
        };
        self.area
            .draw(&Circle::new(c, r, style))
            .expect("drawing into a String cannot fail");
    }

    /// A label whose top (`top = true`) or middle sits at `at`.
    pub fn text(
        &self,
        at: (i32, i32),
        text: &str,
        size: u32,
        color: RGBColor,
        align: Align,
        top: bool,
    ) {
        let h = match align {
            Align::Start => HPos::Left,
            Align::Middle => HPos::Center,
            Align::End => HPos::Right,
        };
        let v = if top { VPos::Top } else { VPos::Center };
        let style = TextStyle::from(("sans-serif", font_px(size)).into_font())
            .color(&color)
            .pos(Pos::new(h, v));
        self.area
            .draw(&Text::new(text.to_string(), at, style))
            .expect("drawing into a String cannot fail");
    }

    /// A label rotated a quarter turn counter-clockwise, centred on `at` (y-axis titles).
    pub fn text_vertical(&self, at: (i32, i32), text: &str, size: u32, color: RGBColor) {
        let font = ("sans-serif", font_px(size))
            .into_font()
            .transform(FontTransform::Rotate270);
        let style = TextStyle::from(font)
            .color(&color)
            .pos(Pos::new(HPos::Center, VPos::Center));
        self.area
            .draw(&Text::new(text.to_string(), at, style))
            .expect("drawing into a String cannot fail");
    }

    /// A legend: one swatch and name per entry, left to right from `at`, onto a new row below
    /// when the next entry would pass the figure's right edge; an entry too long for a row of its
    /// own wraps its name. The figure grows to hold the rows. Returns the last row's y, for what
    /// is drawn below the legend.
    pub fn legend(&self, at: (i32, i32), entries: &[(&str, RGBColor)]) -> i32 {
        let right = self.width - MARGIN;
        // A legend placed for a wide figure (right of the middle) starts at the left margin in a
        // narrow one, rather than wrapping each name into a column a few letters wide.
        let at = if right - at.0 < LEGEND_ROOM {
            (at.0.min(MARGIN), at.1)
        } else {
            at
        };
        let (mut x, mut y) = at;
        for (name, color) in entries {
            let lines = wrap(name, LEGEND_PX, right - at.0 - SWATCH);
            let wide = lines
                .iter()
                .map(|l| text_width(l, LEGEND_PX))
                .max()
                .unwrap_or(0);
            if x > at.0 && x + SWATCH + wide > right {
                (x, y) = (at.0, y + ROW);
            }
            self.rect((x, y - 5), (x + 12, y + 5), *color, true);
            for (i, line) in lines.iter().enumerate() {
                let line_y = y + i as i32 * ROW;
                self.text(
                    (x + 16, line_y),
                    line,
                    LEGEND_PX,
                    colors::INK,
                    Align::Start,
                    false,
                );
            }
            y += (lines.len() as i32 - 1) * ROW;
            x += SWATCH + 12 + wide;
            self.reach(y + ROW / 2 + 2);
        }
        y
    }

    /// Marks `y` as drawn: the figure grows to hold it.
    pub fn reach(&self, y: i32) {
        self.bottom.set(self.bottom.get().max(y));
    }

    /// A title over a plot whose top edge is at `top`, fitted to the figure's width: from `x`
    /// at `size` on one line when it fits there, else from the figure's left edge, then at 2 px
    /// smaller (not under 12 px) and wrapped, its last line just above the plot. Returns the y
    /// under its last line.
    pub fn title(&self, x: i32, top: i32, text: &str, size: u32) -> i32 {
        let x = if text_width(text, size) <= self.width - MARGIN - x {
            x
        } else {
            MARGIN
        };
        let (size, lines) = fit(text, size, self.width - MARGIN - x);
        let step = size as i32 + 3;
        // A wrapped title starts at the figure's left edge, over the y axis's labels: its last
        // line clears the top one (a text's box reaches 0.6 em under its middle).
        let last = if lines.len() == 1 { top - 22 } else { top - 15 };
        for (i, line) in lines.iter().enumerate() {
            let y = last - (lines.len() - 1 - i) as i32 * step;
            self.text((x, y), line, size, colors::INK, Align::Start, false);
        }
        if text.is_empty() {
            top - 22
        } else {
            last + (size as i32 + 1) / 2
        }
    }
}

/// Room kept free at a figure's right edge.
pub const MARGIN: i32 = 6;
/// A legend's text size, its swatch with the gap after it, and its row height.
const LEGEND_PX: u32 = 12;
const SWATCH: i32 = 16;
const ROW: i32 = 18;

/// The figures' checks, which `specdec`'s views' tests use too (its dev-dependency on this crate
/// turns on the feature `checks`).
#[cfg(any(test, feature = "checks"))]
pub mod tests {
    use super::*;

    /// A CJK character is counted a full em, a Latin one 0.62 em (rounded up).
    /// Every line of a wrapped text fits the width, and the lines say the text again: English
    /// broken between words, Chinese between characters (never before a closing mark).
    /// A text that does not fit is set 2 px smaller (not under 12 px) before it is wrapped.
    /// Every `<text>` of an SVG with its estimated left and right edges (its anchor and width).
    pub fn text_spans(svg: &str) -> Vec<(String, i32, i32)> {
        svg.split("<text")
            .skip(1)
            .map(|t| {
                let attr = |name: &str| {
                    let at = t.find(&format!(" {name}=\"")).expect(name) + name.len() + 3;
                    t[at..at + t[at..].find('"').expect("closing quote")].to_string()
                };
                let body = t[t.find('>').expect("tag end") + 1..t.find("</text>").expect("end")]
                    .trim()
                    .to_string();
                let x: f64 = attr("x").parse().expect("x");
                let size: f64 = attr("font-size")
                    .trim_end_matches("px")
                    .parse()
                    .expect("size");
                let w = f64::from(text_width(&body, size.round() as u32));
                let left = match attr("text-anchor").as_str() {
                    "middle" => x - w / 2.0,
                    "end" => x - w,
                    _ => x,
                };
                (body, left.floor() as i32, (left + w).ceil() as i32)
            })
            .collect()
    }

    /// Every `<text>` of an SVG with its estimated box, left, top, right, bottom: its width by
    /// [`text_width`] (on the wide side), its height the browser's box of DejaVu Sans (Debian's
    /// sans-serif: 0.93 em over the baseline, 0.24 em under, an ex 0.55 em) where plotters puts
    /// the baseline (`dy`), turned with it where it is turned a quarter.
    pub fn text_boxes(svg: &str) -> Vec<(String, [i32; 4])> {
        svg.split("<text")
            .skip(1)
            .map(|t| {
                let attr = |name: &str| {
                    let at = t.find(&format!(" {name}=\"")).map(|i| i + name.len() + 3)?;
                    Some(t[at..at + t[at..].find('"').expect("closing quote")].to_string())
                };
                let body = t[t.find('>').expect("tag end") + 1..t.find("</text>").expect("end")]
                    .trim()
                    .replace("&lt;", "<")
                    .replace("&gt;", ">")
                    .replace("&quot;", "\"")
                    .replace("&amp;", "&");
                let num = |name: &str| -> f64 {
                    attr(name)
                        .expect(name)
                        .trim_end_matches("px")
                        .parse()
                        .expect(name)
                };
                let (x, y, size) = (num("x"), num("y"), num("font-size"));
                let w = f64::from(text_width(&body, size.round() as u32));
                let (a, b) = match attr("text-anchor").as_deref() {
                    Some("middle") => (-w / 2.0, w / 2.0),
                    Some("end") => (-w, 0.0),
                    _ => (0.0, w),
                };
                let baseline = match attr("dy").as_deref() {
                    Some("0.76em") => 0.76,
                    Some("-0.5ex") => -0.275,
                    _ => 0.275,
                };
                let (c, d) = ((baseline - 0.93) * size, (baseline + 0.24) * size);
                let [l, t, r, bottom] = match attr("transform") {
                    // rotate(270) takes (dx, dy) to (dy, −dx).
                    Some(tr) if tr.starts_with("rotate(270") => [x + c, y - b, x + d, y - a],
                    _ => [x + a, y + c, x + b, y + d],
                };
                let edges = [l.floor(), t.floor(), r.ceil(), bottom.ceil()].map(|v| v as i32);
                (body, edges)
            })
            .collect()
    }

    /// Every two texts of an SVG whose estimated boxes ([`text_boxes`]) overlap by more than a
    /// pixel both ways, and every text that passes the figure's left or right edge (`width`), as
    /// readable lines.
    pub fn text_clashes(svg: &str, width: i32) -> Vec<String> {
        let boxes = text_boxes(svg);
        let mut out = Vec::new();
        for (i, (a, p)) in boxes.iter().enumerate() {
            if p[0] < 0 || p[2] > width {
                out.push(format!("{a:?} spans {}…{} of {width} px", p[0], p[2]));
            }
            for (b, q) in &boxes[i + 1..] {
                let x = p[2].min(q[2]) - p[0].max(q[0]);
                let y = p[3].min(q[3]) - p[1].max(q[1]);
                if x > 1 && y > 1 && !a.is_empty() && !b.is_empty() {
                    out.push(format!("{a:?} {p:?} overlaps {b:?} {q:?}"));
                }
            }
        }
        out
    }

    #[test]
    fn text_boxes_are_placed_as_plotters_anchors_them() {
        let svg = render(300, 200, "boxes", |cv| {
            cv.text((100, 50), "abcd", 10, colors::INK, Align::Start, true);
            cv.text((100, 50), "abcd", 10, colors::INK, Align::End, false);
            cv.text_vertical((40, 100), "abcd", 10, colors::INK);
        });
        let boxes: Vec<[i32; 4]> = text_boxes(&svg).into_iter().map(|b| b.1).collect();
        assert_eq!(
            boxes,
            [[100, 48, 125, 60], [75, 43, 100, 56], [33, 87, 46, 113]]
        );
        assert!(text_clashes(&svg, 300).is_empty());
        let crowded = render(300, 200, "crowded", |cv| {
            cv.text((100, 50), "1.0", 11, colors::INK, Align::Middle, false);
            cv.text((112, 50), "1.0", 11, colors::INK, Align::Middle, false);
            cv.text((295, 80), "edge", 11, colors::INK, Align::Start, false);
        });
        assert_eq!(text_clashes(&crowded, 300).len(), 2, "{crowded}");
    }

    /// A name longer than its room is cut with an ellipsis, and the cut name fits the room.
    /// Category names wider than their category wrap between words; a word still too wide
    /// staggers the names (every other one a row lower); none overlaps, English or Chinese.
    #[test]
    fn category_names_never_overlap() {
        for names in [
            [
                "i.i.d. draws",
                "without replacement",
                "top-k (deterministic)",
            ],
            ["独立同分布抽样", "无放回抽样", "top-k（确定性）"],
            ["naive\naveraged", "MSS\naveraged", "averaged-averaged"],
        ] {
            for w in [MIN_WIDTH, 322, 560] {
                let mut below = 0;
                let svg = render(w, 200, "names", |cv| {
                    let ch = Chart::new(
                        cv,
                        (60, 40, w as i32 - 20, 150),
                        Scale::categories(names.len()),
                        Scale::linear(0.0, 1.0),
                        &Labels {
                            title: "",
                            x: "",
                            y: "",
                        },
                    );
                    below = ch.categories(&names);
                });
                assert_eq!(text_clashes(&svg, w as i32), Vec::<String>::new(), "{w}");
                assert!(below > 150, "{below}");
            }
        }
    }

    /// A title and legend too long for a narrow figure, English and Chinese, stay inside it; the
    /// figure grows to hold a legend that wrapped.
    #[test]
    fn a_legend_placed_for_a_wide_figure_starts_at_the_left_in_a_narrow_one() {
        // Placed at x 300 for a 560 px figure; at 320 px it would leave 14 px for "target p".
        let svg = render(MIN_WIDTH, 200, "figure", |cv| {
            cv.legend(
                (300, 190),
                &[("target p", colors::BLUE), ("correct", colors::ORANGE)],
            );
        });
        assert!(svg.contains("<rect x=\"6\" y=\"185\""), "{svg}");
    }

    #[test]
    fn titles_and_legends_stay_inside_a_narrow_figure() {
        let w = MIN_WIDTH;
        for (title, entries) in [
            (
                "Speedup against γ: measured, predicted, and the formula",
                [
                    "measured wall clock (bar: its IQR)",
                    "lecture: E(α, γ)/(γc + 1), mean α and c",
                ],
            ),
            (
                "第一个提示词，逐次调用：目标模型（蓝，标出决定的 token 数；第一次是读入提示词）",
                [
                    "目标模型调用（数字：决定的 token 数；第一次是读入提示词）",
                    "草稿调用",
                ],
            ),
        ] {
            let svg = render(w, 200, "figure", |cv| {
                Chart::new(
                    cv,
                    (60, 40, w as i32 - 20, 150),
                    Scale::linear(0.0, 1.0),
                    Scale::linear(0.0, 1.0),
                    &Labels {
                        title,
                        x: "",
                        y: "",
                    },
                );
                cv.legend((60, 190), &entries.map(|e| (e, colors::BLUE)));
            });
            for (text, left, right) in text_spans(&svg) {
                assert!(
                    left >= 0 && right <= w as i32,
                    "{text:?} spans {left}…{right} of {w}"
                );
            }
            // The wrapped title clears the top y label, the first x label the lowest y label.
            assert_eq!(text_clashes(&svg, w as i32), Vec::<String>::new());
            let height: i32 = svg
                .split("height=\"")
                .nth(1)
                .and_then(|h| h.split('"').next())
                .and_then(|h| h.parse().ok())
                .expect("height");
            assert!(
                height > 200,
                "the wrapped legend made room for itself: {height}"
            );
            assert!(
                svg.contains(&format!("viewBox=\"0 0 {w} {height}\"")),
                "{svg}"
            );
        }
    }

    /// A log x axis's first label ("0.001") centred on the corner ran into the y axis's lowest
    /// ("0"): it is moved right of it; the last stays inside the figure.
    #[test]
    fn the_corner_labels_keep_apart() {
        for w in [MIN_WIDTH, 322, 560] {
            let svg = render(w, 200, "corner", |cv| {
                Chart::new(
                    cv,
                    (60, 40, w as i32 - 6, 150),
                    Scale::log(1e-3, 1e3),
                    Scale::linear(0.0, 5.0),
                    &Labels {
                        title: "",
                        x: "",
                        y: "",
                    },
                );
            });
            assert_eq!(text_clashes(&svg, w as i32), Vec::<String>::new(), "{w}");
        }
    }

    /// A figure is drawn for its room, between [`MIN_WIDTH`] and its own width.
    #[test]
    fn figures_are_drawn_for_their_room() {
        assert_eq!(figure_width(560, None), 560);
        assert_eq!(figure_width(560, Some(324)), 324);
        assert_eq!(figure_width(560, Some(1200)), 560);
        assert_eq!(figure_width(560, Some(100)), MIN_WIDTH);
    }

    #[test]
    fn render_labels_the_svg() {
        let svg = render(100, 50, "a \"test\" <chart>", |c| {
            c.text((10, 10), "hi", 12, colors::INK, Align::Start, true)
        });
        assert!(
            svg.starts_with("<svg role=\"img\" aria-label=\"a &quot;test&quot; &lt;chart&gt;\""),
            "{svg}"
        );
        assert!(
            svg.contains("\nhi\n</text>") && svg.trim_end().ends_with("</svg>"),
            "{svg}"
        );
    }
}
