//! The measured roofline (lecture §1.2, demo 1 measured on this device): the time of one call of
//! the target (the trained one, or widened so that a step reads what a real model reads) against
//! the tokens k it feeds, beside the roofline the device's own bandwidth and peak draw under it.
//! The measurement is one call of [`crate::model::measure::roofline`]; this view checks the
//! parameters and draws the figure, in the page's language.

use crate::clock::{Clock, Progress};
use crate::error::{Error, Range};
use crate::i18n::Lang;
use crate::model::measure::{self, Calibration, Roofline};
use crate::model::widen::WIDTH;
use crate::model::Models;
use crate::plot::{colors, figure_width, render, wrap, Align, Chart, Labels, Scale, MARGIN};

#[derive(Debug, Clone, serde::Deserialize)]
#[serde(default)]
pub struct MeasuredParams {
    pub backend: String,
    /// How many times wider than the trained target the measured model is.
    pub width: usize,
    /// Tokens per call, each timed.
    pub ks: Vec<usize>,
    /// Sequences per call.
    pub batch: usize,
    /// The weights cross to the GPU before every call (`crate::model::offload`): wgpu only.
    pub offload: bool,
    pub lang: Lang,
    /// The room the page has for the figure, in px (a phone's is narrower than its design).
    pub figure_width: Option<u32>,
}

impl Default for MeasuredParams {
    fn default() -> Self {
        MeasuredParams {
            backend: "flex".into(),
            width: 1,
            ks: measure::KS.to_vec(),
            batch: 1,
            offload: false,
            lang: Lang::En,
            figure_width: None,
        }
    }
}

/// At most this many k per measurement.
pub const KS_COUNT: Range = Range::new("number of k", 1.0, 16.0);

impl MeasuredParams {
    /// Every value against its range, before any model is loaded.
    pub fn check(&self) -> Result<(), Error> {
        WIDTH.check(self.width as f64)?;
        KS_COUNT.check(self.ks.len() as f64)?;
        for &k in &self.ks {
            measure::K.check(k as f64)?;
        }
        measure::BATCH.check(self.batch as f64)?;
        Ok(())
    }
}

#[derive(Debug, Clone, serde::Serialize)]
pub struct MeasuredView {
    #[serde(flatten)]
    pub roofline: Roofline,
    pub note: Option<String>,
    pub svg: String,
}

/// Measures the target of `models` (already widened `params.width`×) and draws it, with the
/// device's calibrations `known` from an earlier measurement where they hold here.
pub async fn measured_view(
    params: &MeasuredParams,
    models: &Models,
    known: Option<Calibration>,
    clock: Clock<'_>,
    progress: Progress<'_>,
) -> Result<MeasuredView, Error> {
    params.check()?;
    let mut ks = params.ks.clone();
    ks.sort_unstable();
    ks.dedup();
    let roofline = measure::roofline(
        measure::Subject {
            model: &models.target,
            width: params.width,
            backend: models.backend,
            device: &models.device,
        },
        &ks,
        params.batch,
        known,
        clock,
        progress,
    )
    .await?;
    Ok(view_of(roofline, params.lang, params.figure_width))
}

/// The view of a measured roofline (pure: the drawing only), its figure fitted to `room` px.
pub fn view_of(roofline: Roofline, lang: Lang, room: Option<u32>) -> MeasuredView {
    MeasuredView {
        svg: roofline_svg(&roofline, lang, figure_width(560, room)),
        roofline,
        note: None,
    }
}

/// The compute slope's time for `k` tokens in each of `batch` rows: 2 flops per weight and token
/// (the matrices' weights: the memory floor's bytes / 4) at the measured peak, in µs.
pub fn compute_us(r: &Roofline, k: f64, batch: usize) -> f64 {
    2.0 * (r.weight_bytes / 4) as f64 * k * batch as f64 / (r.peak_gflops * 1e3)
}

/// A time in µs as the figure writes it: 85 µs, 35.9 ms.
fn time(us: f64) -> String {
    if us >= 10_000.0 {
        format!("{:.1} ms", us / 1e3)
    } else {
        format!("{us:.0} µs")
    }
}

/// Measured median T(k) with its IQR on log-log axes, the memory floor, the compute slope and the
/// knee, `width` px wide.
fn roofline_svg(r: &Roofline, l: Lang, width: u32) -> String {
    let batch = r.rows.first().map_or(1, |p| p.batch);
    let kmax = r.rows.iter().map(|p| p.k).max().unwrap_or(1).max(2) as f64;
    let lows = r
        .rows
        .iter()
        .map(|p| (p.median_us - p.iqr_us / 2.0).max(p.median_us / 2.0));
    let highs = r.rows.iter().map(|p| p.median_us + p.iqr_us / 2.0);
    let floor = r.memory_floor_us;
    // With the weights offloaded, every call pays their crossing first: its own floor.
    let crossing = r.transfer.map(|t| t.crossing.median_us);
    let bottom = lows
        .chain([floor, compute_us(r, 1.0, batch)])
        .chain(crossing)
        .filter(|v| v.is_finite() && *v > 0.0)
        .fold(f64::INFINITY, f64::min);
    let top = highs
        .chain([floor, compute_us(r, kmax, batch)])
        .chain(crossing)
        .filter(|v| v.is_finite())
        .fold(0.0f64, f64::max);
    let (bottom, top) = if bottom.is_finite() && top > 0.0 {
        (bottom, top)
    } else {
        (1.0, 10.0)
    };
    let label = l.pick(
        format!(
            "Measured time of one call of the target ×{} against k, batch {batch}, on {}",
            r.width, r.backend
        ),
        format!(
            "目标模型 ×{} 一次调用的实测时间随 k 的变化，批 {batch}，在 {} 上",
            r.width, r.backend
        ),
    );
    let mb = r.weight_bytes as f64 / 1e6;
    let w = width as i32;
    render(width, 330, &label, |cv| {
        let title = match r.transfer {
            None => l.pick(
                format!(
                    "Target ×{} on {}: {mb:.1} MB of weights a call, batch {batch}",
                    r.width, r.backend
                ),
                format!(
                    "目标模型 ×{}，{}：每次调用读 {mb:.1} MB 权重，批 {batch}",
                    r.width, r.backend
                ),
            ),
            Some(t) => l.pick(
                format!(
                    "Target ×{} on {}, offloaded: {:.1} MB cross before every call, batch {batch}",
                    r.width,
                    r.backend,
                    t.bytes as f64 / 1e6
                ),
                format!(
                    "目标模型 ×{}，{}，权重卸载：每次调用前传输 {:.1} MB，批 {batch}",
                    r.width,
                    r.backend,
                    t.bytes as f64 / 1e6
                ),
            ),
        };
        let labels = Labels {
            title: &title,
            x: l.pick(
                "k = tokens per sequence (log)",
                "k = 每个序列的 token 数（对数）",
            ),
            y: l.pick("time per call (µs, log)", "每次调用的时间（µs，对数）"),
        };
        let ch = Chart::new(
            cv,
            (70, 40, w - 20, 250),
            Scale::log(1.0, kmax),
            Scale::log(bottom, top),
            &labels,
        );
        // The roofline the calibrations draw: the floor, then the compute slope above it.
        ch.hline(floor, colors::BLUE);
        let slope: Vec<(f64, f64)> = (0..=60)
            .map(|i| {
                let k = kmax.powf(f64::from(i) / 60.0);
                (k, compute_us(r, k, batch))
            })
            .collect();
        ch.polyline(&slope, colors::PURPLE, 1);
        // The measured points, each with its interquartile range as a whisker.
        for p in &r.rows {
            let k = p.k as f64;
            let lo = (p.median_us - p.iqr_us / 2.0).max(p.median_us / 2.0);
            let (x, y0) = ch.px(k, lo);
            let (_, y1) = ch.px(k, p.median_us + p.iqr_us / 2.0);
            cv.line(&[(x, y0), (x, y1)], colors::INK, 1);
            cv.line(&[(x - 4, y0), (x + 4, y0)], colors::INK, 1);
            cv.line(&[(x - 4, y1), (x + 4, y1)], colors::INK, 1);
        }
        let measured: Vec<(f64, f64)> = r.rows.iter().map(|p| (p.k as f64, p.median_us)).collect();
        ch.polyline(&measured, colors::INK, 2);
        ch.dots(&measured, colors::INK, 4);
        let (fx, fy) = ch.px(1.0, floor);
        cv.text(
            (fx + 4, fy - 8),
            &l.pick(
                format!("memory floor {}", time(floor)),
                format!("访存下限 {}", time(floor)),
            ),
            11,
            colors::BLUE,
            Align::Start,
            false,
        );
        if let Some(t) = r.transfer {
            let c = t.crossing.median_us;
            ch.hline(c, colors::ORANGE);
            // Its label at the right end, on the side away from the memory floor's line (the two
            // may lie close: on a GPU emulated on the CPU both are host memory).
            let (cx, cy) = ch.px(kmax, c);
            let below = c < floor;
            cv.text(
                (cx - 4, if below { cy + 14 } else { cy - 8 }),
                &l.pick(
                    format!("weights cross: {} ({:.1} GB/s)", time(c), t.gb_per_s),
                    format!("权重传输：{}（{:.1} GB/s）", time(c), t.gb_per_s),
                ),
                11,
                colors::ORANGE,
                Align::End,
                false,
            );
        }
        match r.knee_k {
            Some(k) => {
                // The measured knee has one name and one definition on the page (T(k) reaches
                // 1.25·T(1)), apart from the roofline's ridge point, which the text names; the
                // label sits at the top of the plot, off the curve.
                ch.vline(k, colors::RED);
                ch.note(
                    k,
                    top,
                    &l.pick(
                        format!("T(k) = 1.25·T(1) at k ≈ {k:.1}"),
                        format!("T(k) = 1.25·T(1)：k ≈ {k:.1}"),
                    ),
                    colors::RED,
                    if k > kmax.sqrt() {
                        Align::End
                    } else {
                        Align::Start
                    },
                );
            }
            None => {
                let (x, y) = ch.px(kmax, top);
                cv.text(
                    (x, y + 10),
                    l.pick("no knee up to the last k", "直到最后一个 k 都没有拐点"),
                    11,
                    colors::RED,
                    Align::End,
                    false,
                );
            }
        }
        let legend = cv.legend(
            (70, 300),
            &[
                (
                    l.pick("measured median (IQR)", "实测中位数（IQR）"),
                    colors::INK,
                ),
                (
                    l.pick("weight bytes / bandwidth", "权重字节 / 带宽"),
                    colors::BLUE,
                ),
                (
                    l.pick("2·params·k·B / peak", "2·参数·k·B / 峰值"),
                    colors::PURPLE,
                ),
            ],
        );
        // Below the legend's last row, however many rows a narrow figure wraps it into, itself
        // wrapped to the figure's width; the figure grows to hold it.
        let peak = match r.peak_from_k {
            None => format!("{:.1} GFLOP/s", r.peak_gflops),
            Some(k) => l.pick(
                format!("{:.1} GFLOP/s (the k = {k} call's)", r.peak_gflops),
                format!("{:.1} GFLOP/s（k = {k} 那次调用的）", r.peak_gflops),
            ),
        };
        let measured = l.pick(
            format!(
                "measured here: {:.1} GB/s, {peak}, clock step {:.0} µs",
                r.bandwidth_gbs, r.clock_resolution_us
            ),
            format!(
                "在这里实测：{:.1} GB/s，{peak}，时钟步长 {:.0} µs",
                r.bandwidth_gbs, r.clock_resolution_us
            ),
        );
        let lines = wrap(&measured, 11, cv.width - 70 - MARGIN);
        cv.reach(legend + 28 + 14 * (lines.len() as i32 - 1));
        for (i, line) in lines.iter().enumerate() {
            let y = legend + 20 + 14 * i as i32;
            cv.text((70, y), line, 11, colors::AXIS, Align::Start, false);
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::measure::Point;

    fn sample(knee: Option<f64>) -> Roofline {
        let rows = [(1, 100.0), (2, 101.0), (4, 104.0), (8, 200.0)]
            .map(|(k, t)| Point {
                k,
                batch: 1,
                median_us: t,
                iqr_us: 4.0,
                calls_per_block: 20,
            })
            .to_vec();
        Roofline {
            backend: "flex",
            width: 16,
            params: 19_000_000,
            weight_bytes: 76_000_000,
            rows,
            bandwidth_gbs: 10.0,
            peak_gflops: 20.0,
            calibrated_peak_gflops: 20.0,
            peak_from_k: None,
            calibration_reused: false,
            calibration: Calibration {
                bandwidth_gbs: 10.0,
                peak_gflops: 20.0,
                clock_resolution_us: 100.0,
                on: measure::On {
                    backend: "flex",
                    threads: 1,
                    fma: false,
                },
                took_us: 2e6,
            },
            clock_resolution_us: 100.0,
            memory_floor_us: 7600.0,
            model_knee_k: 1.0,
            knee_k: knee,
            transfer: None,
            execution: None,
        }
    }

    #[test]
    fn the_figure_names_its_lines_in_both_languages() {
        let v = view_of(sample(Some(5.3)), Lang::En, None);
        assert!(v.svg.contains("T(k) = 1.25·T(1) at k ≈ 5.3") && v.svg.contains("memory floor"));
        assert!(v.svg.contains("weight bytes / bandwidth"), "{}", v.svg);
        let zh = view_of(sample(None), Lang::Zh, None);
        assert!(zh.svg.contains("访存下限") && zh.svg.contains("没有拐点"));
        assert!(!zh.svg.contains("memory floor"));
        let json = serde_json::to_value(&v).unwrap();
        assert_eq!(json["rows"].as_array().unwrap().len(), 4);
        assert_eq!(json["width"], 16);
    }

    /// The y of the SVG text element that holds `needle`.
    fn text_y(svg: &str, needle: &str) -> f64 {
        let at = svg
            .find(needle)
            .unwrap_or_else(|| panic!("{needle} in {svg}"));
        let open = svg[..at].rfind("<text").expect("inside a text element");
        let y = &svg[open..at][svg[open..at].find(" y=\"").expect("a y") + 4..];
        y[..y.find('"').expect("closed")].parse().expect("a number")
    }

    /// The line under the legend stays under it when the legend wraps into a second row (as its
    /// three names do in both languages at the figure's width, and more on a phone): it overlapped
    /// the second row. The figure takes the room the page gives it.
    #[test]
    fn the_calibration_line_sits_below_the_legend_rows() {
        let rooms = [None, Some(crate::plot::MIN_WIDTH)];
        for ((l, last, line), room) in [
            (Lang::En, "2·params·k·B / peak", "measured here"),
            (Lang::Zh, "2·参数·k·B / 峰值", "在这里实测"),
        ]
        .into_iter()
        .flat_map(|case| rooms.map(|room| (case, room)))
        {
            let svg = view_of(sample(Some(5.3)), l, room).svg;
            let wide = room.unwrap_or(560);
            assert!(svg.contains(&format!("width=\"{wide}\"")), "{l:?} {room:?}");
            // Every text inside the figure (the y-axis title runs upright along its axis).
            let upright = l.pick("time per call (µs, log)", "每次调用的时间（µs，对数）");
            for (text, left, right) in crate::plot::tests::text_spans(&svg) {
                if text != upright {
                    assert!(
                        left >= 0 && right <= wide as i32,
                        "{l:?} at {wide}: {text:?} spans {left}…{right}"
                    );
                }
            }
            let (legend, under) = (text_y(&svg, last), text_y(&svg, line));
            assert!(
                under >= legend + 12.0,
                "{l:?}: legend at y {legend}, the line at {under}"
            );
            let at = svg.find("height=\"").expect("a height") + 8;
            let height: f64 = svg[at..at + svg[at..].find('"').expect("closed")]
                .parse()
                .expect("a number");
            assert!(
                height >= under + 6.0,
                "{l:?}: the figure ({height} px) holds the line at {under}"
            );
        }
    }

    /// A peak raised to a call's rate says whose it is, in both languages; the compute slope
    /// then passes through that call's point, never above a point.
    #[test]
    fn a_peak_taken_from_a_call_is_named_on_the_figure() {
        let mut r = sample(Some(5.3));
        let (peak, k) = measure::ceiling(1.0, &r.rows, r.weight_bytes);
        (r.peak_gflops, r.peak_from_k, r.calibrated_peak_gflops) = (peak, k, 1.0);
        assert_eq!(k, Some(8));
        for p in &r.rows {
            assert!(compute_us(&r, p.k as f64, p.batch) <= p.median_us * (1.0 + 1e-12));
        }
        let en = view_of(r.clone(), Lang::En, None).svg;
        assert!(
            en.contains(&format!("{peak:.1} GFLOP/s (the k = 8 call")),
            "{en}"
        );
        let zh = view_of(r, Lang::Zh, None).svg;
        assert!(zh.contains("（k = 8 那次调用的）"), "{zh}");
    }

    #[test]
    fn an_offloaded_measurement_draws_the_crossing_as_a_floor_of_its_own() {
        use crate::model::measure::{Timing, Transfer};
        let mut r = sample(Some(5.3));
        assert!(!view_of(r.clone(), Lang::En, None)
            .svg
            .contains("weights cross"));
        r.transfer = Some(Transfer {
            bytes: 76_200_000,
            crossing: Timing {
                median_us: 22_500.0,
                iqr_us: 900.0,
            },
            gb_per_s: 3.387,
        });
        let en = view_of(r.clone(), Lang::En, None).svg;
        assert!(
            en.contains("offloaded: 76.2 MB cross before every call"),
            "{en}"
        );
        assert!(en.contains("weights cross: 22.5 ms (3.4 GB/s)"), "{en}");
        let zh = view_of(r, Lang::Zh, None).svg;
        assert!(
            zh.contains("权重卸载：每次调用前传输 76.2 MB")
                && zh.contains("权重传输：22.5 ms（3.4 GB/s）")
        );
        assert!(!zh.contains("weights cross"));
    }

    #[test]
    fn bad_values_are_rejected_before_measuring() {
        let bad = |p: MeasuredParams| p.check().unwrap_err().to_string();
        let d = MeasuredParams::default;
        assert!(bad(MeasuredParams { width: 25, ..d() }).contains("width"));
        assert!(bad(MeasuredParams { width: 0, ..d() }).contains("width"));
        let ks = |ks: Vec<usize>| MeasuredParams { ks, ..d() };
        assert!(bad(ks(vec![65])).contains("1 ≤ k ≤ 64"));
        assert!(ks(vec![64]).check().is_ok());
        assert_eq!(d().ks, vec![1, 2, 4, 8, 16, 32, 64]);
        assert!(bad(MeasuredParams { batch: 0, ..d() }).contains("batch"));
        assert!(bad(MeasuredParams { ks: vec![], ..d() }).contains("k"));
        assert!(d().check().is_ok());
    }
}
