//! The charts of a sweep report (SVG, plotters, the shipped DejaVu font as
//! in `timeline.svg`): for each varied key, against its values in the order
//! of `[sweep.vary]` (a categorical axis), one line per combination of the
//! other keys:
//! - `violation_rate-<key>.svg`: the share of runs with a violation, with
//!   its 95% Wilson interval as error bars;
//! - `acquire_rate-<key>.svg`: acquisitions per lock call;
//! - `acquire_latency-<key>.svg`: acquisition latency, p50 and p99 in two
//!   panels side by side (each with its own scale).
//!
//! Without varied keys the same three charts have one point each
//! (`violation_rate.svg`, ...). Drawing never panics: a chart that cannot be
//! drawn becomes a small SVG saying why.

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use plotters::style::FontTransform;

use super::format::{interval, latency, pct};
use super::output::SweepOutput;
use super::view::{key_view, Group, KeyView};
use redlock_harness::sweep::stats::SummaryRow;

use crate::fonts::{ensure_font, FAMILY, PALETTE};

/// The single series of a sweep without other keys.
pub(super) const SOLE: RGBColor = RGBColor(0xd6, 0x27, 0x28);
pub(super) const GRID: RGBColor = RGBColor(0xe4, 0xe4, 0xe4);
pub(super) const LIGHT_GRID: RGBColor = RGBColor(0xf4, 0xf4, 0xf4);
pub(super) const GREY_TEXT: RGBColor = RGBColor(0x66, 0x66, 0x66);

/// Lines drawn per chart; the others are left out (and the legend says so).
const MAX_SERIES: usize = 60;
/// Legend entries; the others are summed up.
pub(super) const MAX_LEGEND: usize = 24;
/// Lines with error bars; with more, the bars would hide each other.
const MAX_ERROR_BARS: usize = 12;
/// Longest value label, in characters.
const MAX_LABEL: usize = 24;

pub(super) const WIDTH: u32 = 1000;
pub(super) const HEADER_H: u32 = 62;
pub(super) const PLOT_H: u32 = 380;
pub(super) const Y_LABEL_W: u32 = 84;
pub(super) const MARGIN_L: u32 = 10;
pub(super) const MARGIN_R: u32 = 28;
/// Approximate width of a character of the 14-size labels, in px.
pub(super) const CHAR_W: f64 = 7.2;

/// One chart of the report.
pub(crate) struct Chart {
    /// File name: `violation_rate-cluster.restart.svg`.
    pub file: String,
    /// What it shows: `Violation rate by cluster.restart`.
    pub(crate) title: String,
    /// The varied key (empty without varied keys).
    pub key: String,
    /// The SVG text.
    pub(crate) svg: String,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Violation,
    Acquire,
    Latency,
}

impl Kind {
    fn stem(self) -> &'static str {
        match self {
            Kind::Violation => "violation_rate",
            Kind::Acquire => "acquire_rate",
            Kind::Latency => "acquire_latency",
        }
    }
    fn what(self) -> &'static str {
        match self {
            Kind::Violation => "Violation rate",
            Kind::Acquire => "Acquisition rate",
            Kind::Latency => "Acquisition latency",
        }
    }
}

/// The charts of a sweep: three per varied key (violation rate, acquisition
/// rate, acquisition latency), in key order; three without varied keys.
pub(crate) fn render_all(out: &SweepOutput) -> Vec<Chart> {
    ensure_font();
    let mut charts = Vec::new();
    let mut used: Vec<String> = Vec::new();
    let kinds = [Kind::Violation, Kind::Acquire, Kind::Latency];
    if out.keys.is_empty() {
        let view = KeyView {
            name: String::new(),
            values: vec!["all runs".to_string()],
            others: Vec::new(),
            groups: vec![Group {
                label: String::new(),
                cells: vec![out.rows.first()],
            }],
        };
        for kind in kinds {
            charts.push(chart(out, &view, kind, format!("{}.svg", kind.stem())));
        }
        return charts;
    }
    for i in 0..out.keys.len() {
        let view = key_view(out, i);
        // The key's dots are kept; anything a file name cannot hold is not.
        let mut safe: String = view
            .name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "._-[]".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        if safe.is_empty() || safe.chars().all(|c| c == '.') {
            safe = format!("key{}", i + 1);
        }
        if used.contains(&safe) {
            safe = format!("{safe}-{}", i + 1);
        }
        used.push(safe.clone());
        for kind in kinds {
            charts.push(chart(
                out,
                &view,
                kind,
                format!("{}-{safe}.svg", kind.stem()),
            ));
        }
    }
    charts
}

fn chart(out: &SweepOutput, view: &KeyView, kind: Kind, file: String) -> Chart {
    let title = if view.name.is_empty() {
        format!("{}, all runs", kind.what())
    } else {
        format!("{} by {}", kind.what(), view.name)
    };
    let svg = match draw(out, view, kind, &title) {
        Ok(svg) => svg,
        Err(e) => fallback(&title, &e),
    };
    Chart {
        file,
        title,
        key: view.name.clone(),
        svg,
    }
}

/// A small SVG saying the chart could not be drawn.
pub(super) fn fallback(title: &str, message: &str) -> String {
    let esc = |s: &str| {
        s.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
    };
    format!(
        "<svg width=\"600\" height=\"60\" viewBox=\"0 0 600 60\" xmlns=\"http://www.w3.org/2000/svg\">\
         <text x=\"10\" y=\"30\" font-family=\"sans-serif\" font-size=\"13\">{} not drawn: {}</text></svg>\n",
        esc(title),
        esc(message)
    )
}

/// A value label, shortened to [`MAX_LABEL`] characters.
pub(super) fn short(s: &str) -> String {
    if s.chars().count() > MAX_LABEL {
        let mut t: String = s.chars().take(MAX_LABEL - 1).collect();
        t.push('…');
        t
    } else if s.is_empty() {
        "(empty)".to_string()
    } else {
        s.to_string()
    }
}

/// How a series' points are marked (after its color repeats).
#[derive(Clone, Copy)]
pub(super) enum Mark {
    Circle,
    Triangle,
    Square,
}

pub(super) fn series_style(s: usize, sole: bool) -> (RGBColor, Mark) {
    if sole {
        return (SOLE, Mark::Circle);
    }
    let mark = match (s / PALETTE.len()) % 3 {
        0 => Mark::Circle,
        1 => Mark::Triangle,
        _ => Mark::Square,
    };
    (PALETTE[s % PALETTE.len()], mark)
}

/// The value drawn for a row, or `None` when there is nothing to draw.
fn y_of(kind: Kind, r: &SummaryRow, p99: bool) -> Option<f64> {
    if r.runs == 0 {
        return None;
    }
    let y = match kind {
        Kind::Violation => r.violation_rate * 100.0,
        Kind::Acquire => r.acquire_rate * 100.0,
        Kind::Latency if r.acquire_rate <= 0.0 => return None,
        Kind::Latency if p99 => r.acquire_p99_ms,
        Kind::Latency => r.acquire_p50_ms,
    };
    y.is_finite().then_some(y)
}

/// A legend entry.
enum Entry {
    /// A series: color, mark, label.
    Series(RGBColor, Mark, String),
    /// Plain text.
    Note(String),
}

fn entry_w(e: &Entry) -> i32 {
    let text = match e {
        Entry::Series(_, _, t) | Entry::Note(t) => t,
    };
    let swatch = if matches!(e, Entry::Note(_)) { 0 } else { 34 };
    swatch + (text.chars().count() as f64 * CHAR_W) as i32 + 22
}

/// Lays entries out in rows of `width` px: each entry's (x, row).
fn legend_layout(entries: &[Entry], x0: i32, width: i32) -> Vec<(i32, i32)> {
    let mut out = Vec::with_capacity(entries.len());
    let (mut x, mut row) = (x0, 0);
    for e in entries {
        let w = entry_w(e);
        if x > x0 && x + w > width {
            x = x0;
            row += 1;
        }
        out.push((x, row));
        x += w;
    }
    out
}

/// Nice y-axis top for data up to `max`.
pub(super) fn nice_top(max: f64) -> f64 {
    if !(max.is_finite() && max > 0.0) {
        return 1.0;
    }
    let m = max * 1.08;
    let mag = 10f64.powf(m.log10().floor());
    for step in [1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0] {
        if step * mag >= m {
            return step * mag;
        }
    }
    10.0 * mag
}

/// A y label: percentages with the decimals the range needs, or ms.
pub(super) fn y_label(percent: bool, top: f64, y: f64) -> String {
    let decimals = if top >= 20.0 {
        0
    } else if top >= 2.0 {
        1
    } else if top >= 0.2 {
        2
    } else {
        3
    };
    if percent {
        format!("{y:.decimals$}%")
    } else if top >= 10_000.0 {
        format!("{:.0} s", y / 1000.0)
    } else if top >= 2_000.0 {
        format!("{:.1} s", y / 1000.0)
    } else {
        format!("{y:.decimals$} ms")
    }
}

/// A drawn point: the value, and its interval if any.
type Point = (f64, Option<(f64, f64)>);

/// One panel of a chart: a y axis and its lines.
struct Panel {
    /// Caption above the panel (latency: `p50`, `p99`), or empty.
    caption: String,
    y_desc: &'static str,
    /// Values in %, else in ms.
    percent: bool,
    y0: f64,
    y1: f64,
    /// Per drawn series: the point at each value, and the interval.
    lines: Vec<Vec<Option<Point>>>,
}

impl Panel {
    fn new(caption: &str, y_desc: &'static str, percent: bool) -> Panel {
        Panel {
            caption: caption.to_string(),
            y_desc,
            percent,
            y0: 0.0,
            y1: 1.0,
            lines: Vec::new(),
        }
    }

    fn any(&self) -> bool {
        self.lines.iter().flatten().any(Option::is_some)
    }

    /// Sets the y range from the points (and intervals).
    fn fit(&mut self, from_zero: bool) {
        let mut hi: f64 = 0.0;
        let mut lo = f64::INFINITY;
        for (y, ci) in self.lines.iter().flatten().flatten() {
            hi = hi.max(*y).max(ci.map_or(0.0, |c| c.1));
            lo = lo.min(*y);
        }
        if self.percent && !from_zero {
            // From 0, unless every point is high: then from a round lower
            // value, so that differences of a few points show.
            self.y0 = if lo.is_finite() && lo >= 40.0 {
                ((lo - 10.0) / 10.0).floor().max(0.0) * 10.0
            } else {
                0.0
            };
            self.y1 = 100.0;
        } else {
            self.y0 = 0.0;
            self.y1 = nice_top(hi);
            if self.percent {
                self.y1 = self.y1.min(100.0);
            }
        }
    }
}

/// The chart's coordinates: the values' slots across, the panel's scale up.
type Coords =
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>;
/// A pixel-addressed drawing area of the chart.
type Area<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;
/// The axes of one panel.
type PanelChart<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Coords>;

/// A drawing result with its error as text.
fn d<E: std::fmt::Debug>(r: Result<(), E>) -> Result<(), String> {
    r.map_err(|e| format!("{e:?}"))
}

/// What drawing a chart needs besides its panels.
struct Ctx<'a> {
    out: &'a SweepOutput<'a>,
    view: &'a KeyView<'a>,
    kind: Kind,
    /// Values across (at least 1).
    n: usize,
    /// A single series (no other keys).
    sole: bool,
    /// Error bars drawn.
    bars: bool,
    /// The x labels, and how they are drawn.
    x: XLabels,
    /// Height of the panels' captions (0 without).
    caption_h: u32,
}

/// The x labels: across when they fit, else upright.
struct XLabels {
    labels: Vec<String>,
    upright: bool,
    /// Every k-th label is drawn.
    every: usize,
    /// Height of the x label area, in px.
    area: u32,
}

/// The panels of a `kind` chart, with the points of the drawn `groups`.
fn panels(kind: Kind, groups: &[Group], bars: bool) -> Vec<Panel> {
    // --- the panels and their points ---
    let point = |r: &SummaryRow, p99: bool| -> Option<(f64, Option<(f64, f64)>)> {
        let y = y_of(kind, r, p99)?;
        let ci = (bars && r.ci_low.is_finite() && r.ci_high.is_finite())
            .then_some((r.ci_low * 100.0, r.ci_high * 100.0));
        Some((y, ci))
    };
    let specs: Vec<(Panel, bool)> = match kind {
        Kind::Violation => vec![(Panel::new("", "runs with a violation", true), false)],
        Kind::Acquire => vec![(Panel::new("", "lock calls that acquired", true), false)],
        Kind::Latency => vec![
            (
                Panel::new(
                    "p50 (median over runs of each run's median)",
                    "acquisition latency",
                    false,
                ),
                false,
            ),
            (
                Panel::new(
                    "p99 (99th percentile over runs of each run's p99)",
                    "acquisition latency",
                    false,
                ),
                true,
            ),
        ],
    };
    let mut panels: Vec<Panel> = Vec::new();
    for (mut p, p99) in specs {
        p.lines = groups
            .iter()
            .map(|g| {
                g.cells
                    .iter()
                    .map(|c| c.and_then(|r| point(r, p99)))
                    .collect()
            })
            .collect();
        p.fit(kind == Kind::Violation);
        panels.push(p);
    }
    panels
}

/// The x labels of `view` in panels of `np` side by side.
fn x_labels(view: &KeyView, np: u32) -> XLabels {
    // --- the x labels: across when they fit, else upright ---
    let n = view.values.len().max(1);
    let panel_w = WIDTH / np;
    let plot_w = panel_w
        .saturating_sub(MARGIN_L + MARGIN_R + Y_LABEL_W)
        .max(40) as f64;
    let slot = plot_w / n as f64;
    let labels: Vec<String> = view.values.iter().map(|v| short(v)).collect();
    let widest = labels
        .iter()
        .map(|l| l.chars().count() as f64 * CHAR_W)
        .fold(0.0, f64::max);
    let upright = widest + 10.0 > slot;
    // With more values than upright labels can hold, label every k-th.
    let every = if upright {
        ((18.0 / slot).ceil() as usize).max(1)
    } else {
        1
    };
    let area: u32 = if upright {
        widest.ceil() as u32 + 50
    } else {
        54
    };
    XLabels {
        labels,
        upright,
        every,
        area,
    }
}

/// The legend's entries: the series (at most [`MAX_LEGEND`]), what was left
/// out, and the error bars.
fn legend_entries(view: &KeyView, kind: Kind, drawn: usize, bars: bool) -> Vec<Entry> {
    // --- the legend ---
    let mut entries: Vec<Entry> = Vec::new();
    if view.groups.len() > 1 {
        // With one other key, its name once and then its values.
        let one = view.others.len() == 1;
        if one {
            entries.push(Entry::Note(format!("{}:", view.others[0])));
        }
        for (s, g) in view.groups[..drawn].iter().enumerate().take(MAX_LEGEND) {
            let (c, m) = series_style(s, false);
            let label = match g.label.split_once(" = ") {
                Some((_, v)) if one => v.to_string(),
                _ => g.label.clone(),
            };
            entries.push(Entry::Series(c, m, label));
        }
        if drawn > MAX_LEGEND {
            entries.push(Entry::Note(format!(
                "… {} more lines not in this legend",
                drawn - MAX_LEGEND
            )));
        }
        if view.groups.len() > drawn {
            entries.push(Entry::Note(format!(
                "({} of {} lines drawn)",
                drawn,
                view.groups.len()
            )));
        }
    }
    if bars {
        entries.push(Entry::Note("error bars: 95% Wilson interval".into()));
    } else if kind == Kind::Violation {
        entries.push(Entry::Note(format!(
            "no error bars with more than {MAX_ERROR_BARS} lines (intervals in the table)"
        )));
    }
    entries
}

/// A chart of `kind` for `view` as SVG text, or why it could not be drawn.
fn draw(out: &SweepOutput, view: &KeyView, kind: Kind, title: &str) -> Result<String, String> {
    let sole = view.groups.len() <= 1;
    let drawn = view.groups.len().min(MAX_SERIES);
    let groups = &view.groups[..drawn];
    let bars = kind == Kind::Violation && groups.len() <= MAX_ERROR_BARS;
    let panels = panels(kind, groups, bars);
    let x = x_labels(view, panels.len() as u32);
    let entries = legend_entries(view, kind, drawn, bars);
    let legend_x0 = (MARGIN_L + 12) as i32;
    let layout = legend_layout(&entries, legend_x0, WIDTH as i32 - 10);
    let legend_rows = layout.last().map_or(0, |(_, r)| r + 1) as u32;
    let legend_h = if entries.is_empty() {
        8
    } else {
        legend_rows * 22 + 16
    };
    let caption_h: u32 = if panels.iter().any(|p| !p.caption.is_empty()) {
        26
    } else {
        0
    };
    let height = HEADER_H + caption_h + PLOT_H + x.area + legend_h;
    let c = Ctx {
        out,
        view,
        kind,
        n: view.values.len().max(1),
        sole,
        bars,
        x,
        caption_h,
    };

    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, (WIDTH, height)).into_drawing_area();
        d(root.fill(&WHITE))?;
        let (header, rest) = root.split_vertically(HEADER_H);
        let (plot_area, legend_area) = rest.split_vertically(caption_h + PLOT_H + c.x.area);
        draw_header(&header, &c, &panels, title)?;
        let areas = plot_area.split_evenly((1, panels.len().max(1)));
        for (area, p) in areas.iter().zip(&panels) {
            draw_panel(&root, area, &c, p)?;
        }
        draw_legend(&legend_area, &entries, &layout)?;
        d(root.present())?;
    }
    Ok(buf)
}

/// The title and the subtitle.
fn draw_header(header: &Area, c: &Ctx, panels: &[Panel], title: &str) -> Result<(), String> {
    // --- title and subtitle ---
    let out = c.out;
    let per = out
        .seeds
        .end()
        .checked_sub(*out.seeds.start())
        .map_or(0, |x| x.saturating_add(1));
    let caption = format!("{title} — {}", out.scenario.name);
    let y0 = panels.first().map_or(0.0, |p| p.y0);
    let sub = match c.kind {
        Kind::Violation => {
            format!("share of runs with at least one violation; {per} seeds per point")
        }
        Kind::Acquire if y0 > 0.0 => format!(
            "acquisitions per lock call; {per} seeds per point; the axis starts at {y0:.0}%"
        ),
        Kind::Acquire => format!("acquisitions per lock call; {per} seeds per point"),
        Kind::Latency => format!(
            "time from a lock call to its acquisition, in simulated time; {per} seeds per point"
        ),
    };
    d(header.draw(&Text::new(
        caption,
        (MARGIN_L as i32 + 12, 10),
        TextStyle::from((FAMILY, 20).into_font()).color(&BLACK),
    )))?;
    d(header.draw(&Text::new(
        sub,
        (MARGIN_L as i32 + 12, 38),
        TextStyle::from((FAMILY, 15).into_font()).color(&GREY_TEXT),
    )))
}

/// Panel `p` on `area`: its caption, axes, value labels and lines.
fn draw_panel(root: &Area, area: &Area, c: &Ctx, p: &Panel) -> Result<(), String> {
    let (cap_area, area) = area.split_vertically(c.caption_h);
    if !p.caption.is_empty() {
        d(cap_area.draw(&Text::new(
            p.caption.clone(),
            ((MARGIN_L + Y_LABEL_W) as i32, 14),
            TextStyle::from((FAMILY, 16).into_font())
                .color(&BLACK)
                .pos(Pos::new(HPos::Left, VPos::Center)),
        )))?;
    }
    let mut chart = panel_axes(&area, c, p)?;
    draw_value_labels(root, &mut chart, c, p)?;
    draw_lines(root, &mut chart, c, p)
}

/// The axes of panel `p` on `area`.
fn panel_axes<'a, 'b>(
    area: &'a Area<'b>,
    c: &Ctx,
    p: &Panel,
) -> Result<PanelChart<'a, 'b>, String> {
    // --- axes ---
    let (y0, y1) = (p.y0, p.y1);
    let n = c.n;
    let mut chart = ChartBuilder::on(area)
        .margin_left(MARGIN_L)
        .margin_right(MARGIN_R)
        .margin_top(6)
        .x_label_area_size(c.x.area)
        .y_label_area_size(Y_LABEL_W)
        .build_cartesian_2d(-0.5f64..(n as f64 - 0.5), y0..y1)
        .map_err(|e| format!("{e:?}"))?;
    let x_desc = if c.view.name.is_empty() {
        format!(
            "all runs (seeds {}..={})",
            c.out.seeds.start(),
            c.out.seeds.end()
        )
    } else {
        c.view.name.clone()
    };
    let fmt_y = |y: &f64| y_label(p.percent, y1, *y);
    d(chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .y_labels(8)
        .y_label_formatter(&fmt_y)
        .y_desc(p.y_desc)
        .x_desc(x_desc)
        .label_style((FAMILY, 14))
        .axis_desc_style((FAMILY, 15))
        .light_line_style(LIGHT_GRID)
        .bold_line_style(GRID)
        .draw())?;
    Ok(chart)
}

/// Value labels and a light line at each value; `no runs` on an empty panel.
fn draw_value_labels(
    root: &Area,
    chart: &mut PanelChart,
    c: &Ctx,
    p: &Panel,
) -> Result<(), String> {
    let (y0, y1) = (p.y0, p.y1);
    for (k, label) in c.x.labels.iter().enumerate() {
        d(chart
            .draw_series(std::iter::once(PathElement::new(
                vec![(k as f64, y0), (k as f64, y1)],
                LIGHT_GRID.stroke_width(1),
            )))
            .map(|_| ()))?;
        if k % c.x.every != 0 {
            continue;
        }
        let (px, py) = chart.backend_coord(&(k as f64, y0));
        let style = TextStyle::from((FAMILY, 14).into_font()).color(&BLACK);
        let text = if c.x.upright {
            Text::new(
                label.clone(),
                (px, py + 8),
                style
                    .transform(FontTransform::Rotate270)
                    .pos(Pos::new(HPos::Right, VPos::Center)),
            )
        } else {
            Text::new(
                label.clone(),
                (px, py + 8),
                style.pos(Pos::new(HPos::Center, VPos::Top)),
            )
        };
        d(root.draw(&text))?;
    }
    if !p.any() {
        let (px, py) = chart.backend_coord(&((c.n as f64 - 1.0) / 2.0, (y0 + y1) / 2.0));
        d(root.draw(&Text::new(
            if c.kind == Kind::Latency {
                "no acquisitions"
            } else {
                "no runs"
            },
            (px, py),
            TextStyle::from((FAMILY, 18).into_font())
                .color(&GREY_TEXT)
                .pos(Pos::new(HPos::Center, VPos::Center)),
        )))?;
    }
    Ok(())
}

/// The lines of panel `p`: a line per series, its points and error bars.
fn draw_lines(root: &Area, chart: &mut PanelChart, c: &Ctx, p: &Panel) -> Result<(), String> {
    // --- the lines ---
    let (y0, y1) = (p.y0, p.y1);
    let count = p.lines.len().max(1);
    // Error bars of different lines side by side, not on top of each other.
    let step = if c.bars && count > 1 {
        (0.5 / count as f64).min(0.06)
    } else {
        0.0
    };
    let width = if count > 20 { 1 } else { 2 };
    // Caps of the error bars: narrower when values are close.
    let (px_x, _) = chart.plotting_area().get_pixel_range();
    let slot_px = (px_x.end - px_x.start).max(1) as f64 / c.n as f64;
    let cap = ((slot_px * 0.5 / count as f64).floor() as i32).clamp(2, 5);
    for (s, line) in p.lines.iter().enumerate() {
        let (color, mark) = series_style(s, c.sole);
        let dx = (s as f64 - (count as f64 - 1.0) / 2.0) * step;
        let at = |k: usize, y: f64| (k as f64 + dx, y.clamp(y0, y1));
        // Lines join neighbouring values that both have a point.
        for k in 1..line.len() {
            if let (Some((a, _)), Some((b, _))) = (line[k - 1], line[k]) {
                d(chart
                    .draw_series(std::iter::once(PathElement::new(
                        vec![at(k - 1, a), at(k, b)],
                        color.stroke_width(width),
                    )))
                    .map(|_| ()))?;
            }
        }
        for (k, pt) in line.iter().enumerate() {
            let Some((y, ci)) = pt else { continue };
            if let Some((lo, hi)) = ci {
                d(chart
                    .draw_series(std::iter::once(PathElement::new(
                        vec![at(k, *lo), at(k, *hi)],
                        color.stroke_width(1),
                    )))
                    .map(|_| ()))?;
                for y in [*lo, *hi] {
                    let (px, py) = chart.backend_coord(&at(k, y));
                    d(root.draw(&PathElement::new(
                        vec![(px - cap, py), (px + cap, py)],
                        color.stroke_width(1),
                    )))?;
                }
            }
            let (px, py) = chart.backend_coord(&at(k, *y));
            draw_mark(root, mark, (px, py), color)?;
            // A lone point gets its figure written beside it.
            if c.n == 1 && count == 1 {
                draw_figure(root, p, (px, py), *y, *ci)?;
            }
        }
    }
    Ok(())
}

/// The figure of a lone point `y` (with its interval `ci`) beside it, at pixel `at`.
fn draw_figure(
    root: &Area,
    p: &Panel,
    (px, py): (i32, i32),
    y: f64,
    ci: Option<(f64, f64)>,
) -> Result<(), String> {
    let figure = match (p.percent, ci) {
        (true, Some((lo, hi))) => {
            format!("{} ({})", pct(y / 100.0), interval(lo / 100.0, hi / 100.0))
        }
        (true, None) => pct(y / 100.0),
        (false, _) => latency(y),
    };
    d(root.draw(&Text::new(
        figure,
        (px + 12, py),
        TextStyle::from((FAMILY, 15).into_font())
            .color(&BLACK)
            .pos(Pos::new(HPos::Left, VPos::Center)),
    )))
}

/// The legend's entries at their places.
fn draw_legend(legend_area: &Area, entries: &[Entry], layout: &[(i32, i32)]) -> Result<(), String> {
    // --- the legend ---
    let item_style = TextStyle::from((FAMILY, 15).into_font())
        .color(&BLACK)
        .pos(Pos::new(HPos::Left, VPos::Center));
    for (e, &(x, row)) in entries.iter().zip(layout) {
        let y = 14 + row * 22;
        match e {
            Entry::Series(color, mark, text) => {
                d(legend_area.draw(&PathElement::new(
                    vec![(x, y), (x + 26, y)],
                    color.stroke_width(2),
                )))?;
                draw_mark(legend_area, *mark, (x + 13, y), *color)?;
                d(legend_area.draw(&Text::new(text.clone(), (x + 34, y), item_style.clone())))?;
            }
            Entry::Note(text) => {
                d(legend_area.draw(&Text::new(
                    text.clone(),
                    (x, y),
                    item_style.clone().color(&GREY_TEXT),
                )))?;
            }
        }
    }
    Ok(())
}

/// A point's mark at pixel `at`.
pub(super) fn draw_mark<DB: DrawingBackend>(
    area: &DrawingArea<DB, plotters::coord::Shift>,
    mark: Mark,
    at: (i32, i32),
    color: RGBColor,
) -> Result<(), String> {
    let style = color.filled();
    let r = match mark {
        Mark::Circle => area.draw(&Circle::new(at, 4, style)),
        Mark::Triangle => area.draw(&TriangleMarker::new(at, 5, style)),
        Mark::Square => area.draw(&Rectangle::new(
            [(at.0 - 4, at.1 - 4), (at.0 + 4, at.1 + 4)],
            style,
        )),
    };
    r.map_err(|e| format!("{e:?}"))
}
