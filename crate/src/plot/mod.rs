//! Charts drawn with plotters into SVG strings.
//!
//! Everything is placed in pixel space on plotters' SVG backend, with our own axes and ticks.
//! plotters' chart builder measures every label's text to lay out a mesh, and in the browser its
//! font back end does that by inserting a `<span>` and forcing a layout per label: a dozen
//! synchronous reflows per redraw, and impossible in a Web Worker. Our layout needs no text
//! metrics, so a redraw is pure string building, natively and in wasm alike.

mod axes;
pub mod diagrams;

pub use axes::{Chart, Labels, Scale};

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

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
    {
        let area = SVGBackend::with_string(&mut svg, (width, height)).into_drawing_area();
        if opaque {
            area.fill(&WHITE)
                .expect("drawing into a String cannot fail");
        }
        let canvas = Canvas { area };
        draw(&canvas);
        canvas
            .area
            .present()
            .expect("drawing into a String cannot fail");
    }
    let label = escape(label);
    svg.replacen(
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

    /// A legend: one swatch and name per entry, left to right from `at`.
    pub fn legend(&self, at: (i32, i32), entries: &[(&str, RGBColor)]) {
        let mut x = at.0;
        for (name, color) in entries {
            self.rect((x, at.1 - 5), (x + 12, at.1 + 5), *color, true);
            self.text((x + 16, at.1), name, 12, colors::INK, Align::Start, false);
            x += 28 + text_width_12px(name);
        }
    }
}

/// Estimated width in pixels of `text` at 12 px: ~6.5 px per Latin character, a full 12 px per
/// CJK character (the Chinese page's legends), enough for a legend's spacing.
pub fn text_width_12px(text: &str) -> i32 {
    let half_widths: i32 = text
        .chars()
        .map(|c| match c {
            '\u{2e80}'..='\u{9fff}' | '\u{f900}'..='\u{faff}' | '\u{ff00}'..='\u{ff60}' => 24,
            _ => 13,
        })
        .sum();
    half_widths / 2
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

    /// A Chinese legend entry is given twice the room per character of a Latin one.
    #[test]
    fn cjk_text_is_wider() {
        assert_eq!(text_width_12px("step time"), 9 * 13 / 2);
        assert_eq!(text_width_12px("每步时间"), 4 * 12);
        assert_eq!(text_width_12px("E（每次调用）"), (13 + 6 * 24) / 2);
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
