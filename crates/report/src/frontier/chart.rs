//! `frontier.svg`: the violation rate of each value tried against the value
//! (a numeric axis: seconds or milliseconds for durations, the TTL factor, or
//! the number), with its 95% Wilson interval as an error bar, and the
//! boundary (between the violating and the safe value next to it) shaded.
//! Drawing never panics: a chart that cannot be drawn becomes a small SVG
//! saying why.

use plotters::prelude::*;

use crate::fonts::{ensure_font, FAMILY};
use redlock_harness::search::frontier::{Frontier, Kind, Outcome};
use redlock_harness::stats::{wilson, Z95};

const WIDTH: u32 = 1000;
const HEIGHT: u32 = 480;
const POINT: RGBColor = RGBColor(0xd6, 0x27, 0x28);
const SAFE: RGBColor = RGBColor(0x2e, 0x7d, 0x32);
const BAND: RGBColor = RGBColor(0xff, 0xe0, 0x82);
const GRID: RGBColor = RGBColor(0xe4, 0xe4, 0xe4);
const GREY_TEXT: RGBColor = RGBColor(0x66, 0x66, 0x66);

/// The SVG text of the frontier's chart.
pub(crate) fn render(f: &Frontier) -> String {
    ensure_font();
    match draw(f) {
        Ok(svg) => svg,
        Err(e) => format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"600\" height=\"40\"><text x=\"10\" y=\"25\">the chart could not be drawn: {}</text></svg>",
            crate::doc::html_escape(&e)
        ),
    }
}

/// The axis unit: values are divided by `scale` and labelled `unit`.
fn unit(f: &Frontier) -> (f64, String) {
    let key = &f.request.key;
    match f.from.kind {
        Kind::Duration if f.to.x >= 2000.0 => (1000.0, format!("{key} (s)")),
        Kind::Duration => (1.0, format!("{key} (ms)")),
        Kind::Ttl => (1.0, format!("{key} (× ttl)")),
        Kind::Int | Kind::Float => (1.0, key.clone()),
    }
}

/// The chart's coordinates: the value across, the violation rate (0 to 1) up.
type Coords =
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>;
/// A pixel-addressed drawing area of the chart.
type Area<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;

/// A drawing error as text.
fn err(e: &dyn std::fmt::Debug) -> String {
    format!("{e:?}")
}

/// The frontier's chart as SVG text, or why it could not be drawn.
fn draw(f: &Frontier) -> Result<String, String> {
    let (scale, x_desc) = unit(f);
    let (x0, x1) = (f.from.x / scale, f.to.x / scale);
    let pad = ((x1 - x0) * 0.04).max(1e-9);
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE).map_err(|e| err(&e))?;
        let (header, plot) = root.split_vertically(62);
        draw_header(&header, f)?;
        let mut chart = ChartBuilder::on(&plot)
            .margin_left(10)
            .margin_right(28)
            .margin_top(6)
            .margin_bottom(6)
            .x_label_area_size(48)
            .y_label_area_size(84)
            .build_cartesian_2d((x0 - pad)..(x1 + pad), 0f64..1.0)
            .map_err(|e| err(&e))?;
        let fmt_y = |y: &f64| format!("{:.0}%", y * 100.0);
        chart
            .configure_mesh()
            .y_labels(6)
            .x_labels(10)
            .y_label_formatter(&fmt_y)
            .y_desc("runs with a violation")
            .x_desc(x_desc)
            .label_style((FAMILY, 14))
            .axis_desc_style((FAMILY, 15))
            .light_line_style(WHITE)
            .bold_line_style(GRID)
            .draw()
            .map_err(|e| err(&e))?;
        draw_trials(&mut chart, f, scale, x1 - x0)?;
        root.present().map_err(|e| err(&e))?;
    }
    Ok(buf)
}

/// The title and the subtitle.
fn draw_header(header: &Area, f: &Frontier) -> Result<(), String> {
    header
        .draw(&Text::new(
            format!(
                "Violation rate along {} — {}",
                f.request.key, f.scenario.name
            ),
            (22, 10),
            TextStyle::from((FAMILY, 20).into_font()).color(&BLACK),
        ))
        .map_err(|e| err(&e))?;
    header
        .draw(&Text::new(
            format!(
                "each value on seeds 1..={} (a violating value stops at the batch of its first violation); bars: 95% interval; shaded: the boundary",
                f.request.seeds
            ),
            (22, 38),
            TextStyle::from((FAMILY, 14).into_font()).color(&GREY_TEXT),
        ))
        .map_err(|e| err(&e))
}

/// The boundary's band, then each value tried: its rate and its interval
/// (values divided by `scale`; `span`: the width of the interval searched).
fn draw_trials(
    chart: &mut ChartContext<'_, SVGBackend<'_>, Coords>,
    f: &Frontier,
    scale: f64,
    span: f64,
) -> Result<(), String> {
    if let Outcome::Found {
        violating, safe, ..
    } = &f.outcome
    {
        let (a, b) = (violating.value.x / scale, safe.value.x / scale);
        let (a, b) = (a.min(b), a.max(b));
        chart
            .draw_series(std::iter::once(Rectangle::new(
                [(a, 0.0), (b, 1.0)],
                BAND.mix(0.6).filled(),
            )))
            .map_err(|e| err(&e))?;
    }
    for t in &f.trials {
        let x = t.value.x / scale;
        let rate = t.violating as f64 / t.runs.max(1) as f64;
        let (lo, hi) = wilson(t.violating, t.runs, Z95);
        let color = if t.violating > 0 { POINT } else { SAFE };
        let cap = span * 0.006;
        let bar = [
            vec![(x, lo), (x, hi)],
            vec![(x - cap, lo), (x + cap, lo)],
            vec![(x - cap, hi), (x + cap, hi)],
        ];
        chart
            .draw_series(
                bar.into_iter()
                    .map(|pts| PathElement::new(pts, color.stroke_width(2))),
            )
            .map_err(|e| err(&e))?;
        chart
            .draw_series(std::iter::once(Circle::new((x, rate), 5, color.filled())))
            .map_err(|e| err(&e))?;
    }
    Ok(())
}
