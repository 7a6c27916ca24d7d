//! `timeline.svg`: time across (seconds), a lane of fault markers on top,
//! then one row per client (lock calls waiting, holds, overlaps in red,
//! pauses, writes) and one row per node (up, down, paused, and when it held
//! the lock key, colored by the client that owns the key's token).
//! Partitions are shaded across the chart, isolations on their host's row.
//!
//! Text is measured with DejaVu Sans, shipped in `crates/report/assets/` and registered
//! with plotters, so no system font is needed.

use std::collections::BTreeMap;
use std::time::Duration;

use plotters::element::DashedPathElement;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::facts::Facts;
use super::output::RunOutput;
use crate::fonts::{ensure_font, FAMILY, PALETTE};
use redlock_harness::history::EventKind;

const VIOLATION: RGBColor = RGBColor(0xd6, 0x27, 0x28);
const UNKNOWN_KEY: RGBColor = RGBColor(0xa0, 0xa0, 0xa0);
const WAITING: RGBColor = RGBColor(0xc8, 0xc8, 0xc8);
const UP: RGBColor = RGBColor(0xb7, 0xdf, 0xb9);
const DOWN: RGBColor = RGBColor(0x33, 0x33, 0x33);
const PAUSED: RGBColor = RGBColor(0xff, 0xb3, 0x00);
const PARTITION: RGBColor = RGBColor(0x64, 0x95, 0xed);
const WRITE: RGBColor = RGBColor(0x22, 0x22, 0x22);
const REJECTED: RGBColor = RGBColor(0xe6, 0x7e, 0x22);
/// A write given up on before its connection opened: it never left.
const ABANDONED: RGBColor = RGBColor(0x9e, 0x9e, 0x9e);
const GRID: RGBColor = RGBColor(0xe4, 0xe4, 0xe4);

fn marker_color(what: &str) -> RGBColor {
    match what {
        "crash" => RGBColor(0xb2, 0x22, 0x22),
        "restart" => RGBColor(0x2e, 0x7d, 0x32),
        "partition" | "isolate" | "heal" => RGBColor(0x1f, 0x5f, 0xbf),
        "pause" => RGBColor(0xc7, 0x7c, 0x00),
        "clock-jump" | "clock-rate" => RGBColor(0x6a, 0x1b, 0x9a),
        "failover" => RGBColor(0x00, 0x00, 0x00),
        _ => RGBColor(0x55, 0x55, 0x55),
    }
}

/// The SVG text of the timeline of `out`.
pub fn timeline_svg(out: &RunOutput) -> String {
    render(out, &Facts::new(out))
}

pub(crate) fn render(out: &RunOutput, f: &Facts) -> String {
    ensure_font();
    match draw(out, f) {
        Ok(svg) => svg,
        Err(e) => fallback(&e),
    }
}

/// A small SVG saying the chart could not be drawn.
fn fallback(message: &str) -> String {
    let esc = message
        .replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;");
    format!(
        "<svg width=\"600\" height=\"60\" viewBox=\"0 0 600 60\" xmlns=\"http://www.w3.org/2000/svg\">\
         <text x=\"10\" y=\"30\" font-family=\"sans-serif\" font-size=\"13\">timeline not drawn: {esc}</text></svg>\n"
    )
}

/// Rows: the fault lane (`LANE` units), then clients, then nodes.
const LANE: usize = 2;
/// Height of the fault lane, in px (26 px sub-rows).
const LANE_PX: u32 = 26 * LANE as u32;

/// The rows chart's coordinates: seconds across, row units up.
type Coords =
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>;
/// A pixel-addressed drawing area of the timeline.
type Area<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;
/// The rows chart.
type RowsChart<'a, 'b> = ChartContext<'a, SVGBackend<'b>, Coords>;

/// A drawing result with its error as text.
fn d<E: std::fmt::Debug>(r: Result<(), E>) -> Result<(), String> {
    r.map_err(|e| format!("{e:?}"))
}

/// The sizes of the timeline: rows, time range and pixels.
struct Layout {
    nc: usize,
    nn: usize,
    rows: usize,
    xmax: f64,
    row_px: u32,
    label_w: u32,
    width: u32,
    chart_h: u32,
    /// The time axis's text: simulated time, or a lab run's wall time.
    x_desc: &'static str,
}

/// The sizes of the timeline of `out`.
fn layout(out: &RunOutput, f: &Facts) -> Layout {
    let (nc, nn) = (f.clients.len(), f.nodes.len());
    let units = LANE + nc + nn.max(if nc == 0 { 1 } else { 0 });
    let rows = units - LANE;
    let xmax = f.end.max(out.scenario.duration).as_secs_f64().max(0.001);
    let xmax = if xmax.is_finite() { xmax.min(1e9) } else { 1.0 };

    let row_px: u32 = match rows {
        0..=30 => 26,
        31..=80 => 16,
        _ => 10,
    };
    let longest = f
        .clients
        .iter()
        .chain(&f.nodes)
        .map(|s| s.chars().count())
        .max()
        .unwrap_or(0)
        .clamp(6, 24);
    let label_w = 24 + 8 * longest as u32;
    let chart_h = 36 + 26 * LANE as u32 + row_px * rows as u32 + 42 + 20;
    Layout {
        nc,
        nn,
        rows,
        xmax,
        row_px,
        label_w,
        width: 1200,
        chart_h,
        x_desc: if out.lab.is_some() {
            "wall time since the start (s)"
        } else {
            "simulated time (s)"
        },
    }
}

/// The timeline of `out` as SVG text, or why it could not be drawn.
fn draw(out: &RunOutput, f: &Facts) -> Result<String, String> {
    let l = layout(out, f);
    let legend_h: u32 = 64;
    let height = l.chart_h + legend_h;

    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, (l.width, height)).into_drawing_area();
        d(root.fill(&WHITE))?;
        let (upper, lower) = root.split_vertically(l.chart_h);
        // The title and the fault lane sit above the rows.
        let (lane_area, rows_area) = upper.split_vertically(36 + LANE_PX + 10);

        let chart = rows_chart(&rows_area, &l)?;
        let rows = Rows::new(f, &l, &chart);
        let area = chart.plotting_area();
        draw_bands(out, &rows, area)?;
        draw_nodes(&rows, area)?;
        draw_clients(out, &rows, area)?;
        draw_writes(out, &rows, area)?;
        draw_markers_through(&rows, area)?;
        draw_row_labels(&root, &chart, &rows, &l)?;
        let skipped = draw_fault_lane(out, &lane_area, &chart, &rows, &l)?;
        draw_legend(out, &lower, &l, skipped)?;
        d(root.present())?;
    }
    Ok(buf)
}

/// The rows chart on `rows_area`, its mesh and time axis drawn.
fn rows_chart<'a, 'b>(rows_area: &'a Area<'b>, l: &Layout) -> Result<RowsChart<'a, 'b>, String> {
    // --- the rows chart ---
    let xmax = l.xmax;
    let mut chart = ChartBuilder::on(rows_area)
        .margin_left(10)
        .margin_right(20)
        .margin_top(0)
        .margin_bottom(10)
        .x_label_area_size(36)
        .y_label_area_size(l.label_w)
        .build_cartesian_2d(0f64..xmax, 0f64..l.rows.max(1) as f64)
        .map_err(|e| format!("{e:?}"))?;
    let decimals = if xmax < 2.0 {
        2
    } else if xmax < 20.0 {
        1
    } else {
        0
    };
    d(chart
        .configure_mesh()
        .disable_y_mesh()
        .y_labels(0)
        .x_labels(16)
        .x_label_formatter(&|x| format!("{x:.decimals$}"))
        .x_desc(l.x_desc)
        .label_style((FAMILY, 14))
        .axis_desc_style((FAMILY, 15))
        .light_line_style(RGBColor(0xf4, 0xf4, 0xf4))
        .bold_line_style(GRID)
        .draw())?;
    Ok(chart)
}

/// What drawing in the rows needs: the facts, the scale and each host's row.
struct Rows<'a> {
    f: &'a Facts,
    nc: usize,
    nn: usize,
    xmax: f64,
    /// Spans shorter than 2 px are widened to this, so they stay visible.
    min_w: f64,
    nrows: usize,
    /// Fault markers are drawn through the rows (not when too many).
    through_rows: bool,
    row_of: BTreeMap<&'a str, usize>,
    client_idx: BTreeMap<&'a str, usize>,
}

impl<'a> Rows<'a> {
    /// The rows of `f`, scaled to `chart`.
    fn new(f: &'a Facts, l: &Layout, chart: &RowsChart) -> Rows<'a> {
        let (px_x, _) = chart.plotting_area().get_pixel_range();
        let px_per_s = (px_x.end - px_x.start).max(1) as f64 / l.xmax;
        // Fault markers through the rows, unless there are so many that
        // they would hide the rows (then only the lane shows them).
        let plot_px = (px_x.end - px_x.start).max(1) as usize;
        let row_of = f
            .clients
            .iter()
            .chain(&f.nodes)
            .enumerate()
            .map(|(i, h)| (h.as_str(), i))
            .collect();
        let client_idx = f
            .clients
            .iter()
            .enumerate()
            .map(|(i, h)| (h.as_str(), i))
            .collect();
        Rows {
            f,
            nc: l.nc,
            nn: l.nn,
            xmax: l.xmax,
            min_w: 2.0 / px_per_s,
            nrows: l.rows.max(1),
            through_rows: f.markers.len() <= plot_px / 8,
            row_of,
            client_idx,
        }
    }

    /// A time in seconds, within the chart.
    fn clamp(&self, t: Duration) -> f64 {
        t.as_secs_f64().clamp(0.0, self.xmax)
    }

    /// The rectangle from `x0` to `x1` in `row`, between `lo` and `hi` of its height.
    fn rect(&self, x0: f64, x1: f64, row: usize, lo: f64, hi: f64) -> [(f64, f64); 2] {
        let nrows = self.nrows;
        let base = (nrows - 1 - row.min(nrows - 1)) as f64;
        let x1 = if x1 - x0 < self.min_w {
            x0 + self.min_w
        } else {
            x1
        };
        [(x0, base + lo), (x1, base + hi)]
    }

    /// The color of a client (grey for an unknown one).
    fn color_of_client(&self, name: &str) -> RGBColor {
        self.client_idx
            .get(name)
            .map_or(UNKNOWN_KEY, |&i| PALETTE[i % PALETTE.len()])
    }

    /// The color of the client owning `token`.
    fn owner_color(&self, token: &str) -> RGBColor {
        self.f
            .owners
            .get(token)
            .map_or(UNKNOWN_KEY, |(cl, _)| self.color_of_client(cl))
    }
}

/// Partitions, overlap bands and row separators, under everything else.
fn draw_bands(
    out: &RunOutput,
    r: &Rows,
    area: &DrawingArea<SVGBackend, Coords>,
) -> Result<(), String> {
    let (min_w, nrows) = (r.min_w, r.nrows);
    // Partitions across every row; isolations on their row.
    for p in &r.f.partitions {
        let (x0, x1) = (r.clamp(p.start), r.clamp(p.end));
        let shape = match p.host.as_deref().and_then(|h| r.row_of.get(h)) {
            Some(&row) => r.rect(x0, x1, row, 0.0, 1.0),
            None if p.host.is_none() => [(x0, 0.0), (x1.max(x0 + min_w), nrows as f64)],
            None => continue,
        };
        d(area.draw(&Rectangle::new(shape, PARTITION.mix(0.16).filled())))?;
    }
    // Overlaps: a light red band across the chart.
    for o in &out.check.overlaps {
        let (x0, x1) = (r.clamp(o.from), r.clamp(o.to));
        d(area.draw(&Rectangle::new(
            [(x0, 0.0), (x1.max(x0 + min_w), nrows as f64)],
            VIOLATION.mix(0.10).filled(),
        )))?;
    }
    // Row separators, and a darker one between clients and nodes.
    let (nc, nn) = (r.nc, r.nn);
    for row in 1..nrows {
        let y = row as f64;
        let style = if row == nrows - nc.min(nrows) && nc > 0 && nn > 0 {
            RGBColor(0x99, 0x99, 0x99).stroke_width(1)
        } else {
            GRID.stroke_width(1)
        };
        d(area.draw(&PathElement::new(vec![(0.0, y), (r.xmax, y)], style)))?;
    }
    Ok(())
}

/// Nodes: up, key held, down.
fn draw_nodes(r: &Rows, area: &DrawingArea<SVGBackend, Coords>) -> Result<(), String> {
    let f = r.f;
    for (j, node) in f.nodes.iter().enumerate() {
        let row = r.nc + j;
        d(area.draw(&Rectangle::new(
            r.rect(0.0, r.xmax, row, 0.44, 0.56),
            UP.filled(),
        )))?;
        for k in f.key_spans.iter().filter(|k| &k.node == node) {
            let color = r.owner_color(&k.token);
            d(area.draw(&Rectangle::new(
                r.rect(r.clamp(k.start), r.clamp(k.end), row, 0.22, 0.78),
                color.mix(if k.restored { 0.5 } else { 1.0 }).filled(),
            )))?;
        }
        for s in f.down.iter().filter(|s| &s.host == node) {
            d(area.draw(&Rectangle::new(
                r.rect(r.clamp(s.start), r.clamp(s.end), row, 0.15, 0.85),
                DOWN.filled(),
            )))?;
        }
    }
    Ok(())
}

/// Clients: waiting, holds, overlaps; then paused hosts.
fn draw_clients(
    out: &RunOutput,
    r: &Rows,
    area: &DrawingArea<SVGBackend, Coords>,
) -> Result<(), String> {
    let c = out.check;
    for s in &r.f.waiting {
        if let Some(&row) = r.row_of.get(s.host.as_str()) {
            d(area.draw(&Rectangle::new(
                r.rect(r.clamp(s.start), r.clamp(s.end), row, 0.42, 0.58),
                WAITING.filled(),
            )))?;
        }
    }
    for h in &c.holds {
        if let Some(&row) = r.row_of.get(h.client.as_str()) {
            d(area.draw(&Rectangle::new(
                r.rect(r.clamp(h.start), r.clamp(h.end), row, 0.2, 0.8),
                r.color_of_client(&h.client).filled(),
            )))?;
        }
    }
    for o in &c.overlaps {
        for h in [&o.a, &o.b] {
            if let Some(&row) = r.row_of.get(h.client.as_str()) {
                d(area.draw(&Rectangle::new(
                    r.rect(r.clamp(o.from), r.clamp(o.to), row, 0.2, 0.8),
                    VIOLATION.filled(),
                )))?;
            }
        }
    }
    // Paused hosts (clients or nodes): a strip along the bottom.
    for s in &r.f.paused {
        if let Some(&row) = r.row_of.get(s.host.as_str()) {
            d(area.draw(&Rectangle::new(
                r.rect(r.clamp(s.start), r.clamp(s.end), row, 0.02, 0.16),
                PAUSED.filled(),
            )))?;
        }
    }
    Ok(())
}

/// Writes applied, rejected and abandoned, interleaved writes and stale
/// writes.
fn draw_writes(
    out: &RunOutput,
    r: &Rows,
    area: &DrawingArea<SVGBackend, Coords>,
) -> Result<(), String> {
    let c = out.check;
    let nrows = r.nrows;
    // Writes applied (dark ticks), rejected (orange) and abandoned (grey:
    // never sent) on the writer's row.
    for e in &out.history.events {
        let (client, color) = match &e.kind {
            EventKind::WriteApplied { client, .. } => (client, WRITE),
            EventKind::WriteRejected { client, .. } => (client, REJECTED),
            EventKind::WriteAbandoned { .. } => (&e.host, ABANDONED),
            _ => continue,
        };
        if let Some(&row) = r.row_of.get(client.as_str()) {
            let x = r.clamp(e.time);
            d(area.draw(&Rectangle::new(
                r.rect(x, x, row, 0.82, 0.98),
                color.filled(),
            )))?;
        }
    }
    for i in &c.interleavings {
        for (k, t) in i.times.iter().enumerate() {
            let who = if k == 1 { &i.second.0 } else { &i.first.0 };
            if let Some(&row) = r.row_of.get(who.as_str()) {
                let base = (nrows - 1 - row) as f64;
                d(area.draw(&Circle::new(
                    (r.clamp(*t), base + 0.9),
                    4,
                    VIOLATION.filled(),
                )))?;
            }
        }
    }
    // Stale writes: a ring on the writer's row where the store applied it.
    for w in &c.stale_writes {
        if let Some(&row) = r.row_of.get(w.writer.0.as_str()) {
            let base = (nrows - 1 - row) as f64;
            d(area.draw(&Circle::new(
                (r.clamp(w.applied), base + 0.5),
                6,
                VIOLATION.stroke_width(2),
            )))?;
        }
    }
    Ok(())
}

/// Fault markers through the rows, when there are few enough.
fn draw_markers_through(r: &Rows, area: &DrawingArea<SVGBackend, Coords>) -> Result<(), String> {
    for m in r.f.markers.iter().filter(|_| r.through_rows) {
        let x = r.clamp(m.time);
        d(area.draw(&DashedPathElement::new(
            vec![(x, 0.0), (x, r.nrows as f64)],
            4,
            3,
            marker_color(&m.what).mix(0.7).stroke_width(1),
        )))?;
    }
    Ok(())
}

/// Row labels, left of the plot, with a color swatch for clients.
fn draw_row_labels(root: &Area, chart: &RowsChart, r: &Rows, l: &Layout) -> Result<(), String> {
    let nrows = r.nrows;
    for (i, name) in r.f.clients.iter().chain(&r.f.nodes).enumerate() {
        if i >= nrows {
            break;
        }
        let (px, py) = chart.backend_coord(&(0.0, (nrows - 1 - i) as f64 + 0.5));
        let size = if l.row_px < 14 { 12 } else { 16 };
        let text_style = TextStyle::from((FAMILY, size).into_font())
            .color(&BLACK)
            .pos(Pos::new(HPos::Right, VPos::Center));
        d(root.draw(&Text::new(name.clone(), (px - 8, py), text_style)))?;
        if i < r.nc {
            let sw = r.color_of_client(name);
            let label_w = l.label_w;
            d(root.draw(&Rectangle::new(
                [
                    (px - label_w as i32 + 6, py - 4),
                    (px - label_w as i32 + 14, py + 4),
                ],
                sw.filled(),
            )))?;
        }
    }
    Ok(())
}

/// The title and the fault lane above the rows; the number of labels left out.
fn draw_fault_lane(
    out: &RunOutput,
    lane_area: &Area,
    chart: &RowsChart,
    r: &Rows,
    l: &Layout,
) -> Result<usize, String> {
    // --- the fault lane: title and labels above the rows ---
    let caption = format!(
        "{} — seed {} — {}",
        out.scenario.name,
        out.seed,
        out.check.verdict.as_str()
    );
    let title = TextStyle::from((FAMILY, 20).into_font()).color(&BLACK);
    d(lane_area.draw(&Text::new(caption, (10 + l.label_w as i32, 10), title)))?;
    let (lane_x0, _) = chart.backend_coord(&(0.0, 0.0));
    let (lane_x1, _) = chart.backend_coord(&(r.xmax, 0.0));
    let lane_px = LANE_PX;
    let lane_top = 36;
    d(lane_area.draw(&Text::new(
        "faults",
        (lane_x0 - 8, lane_top + lane_px as i32 / 2),
        TextStyle::from((FAMILY, 16).into_font())
            .color(&BLACK)
            .pos(Pos::new(HPos::Right, VPos::Center)),
    )))?;
    let skipped = draw_lane_labels(lane_area, chart, r, lane_x1)?;
    if r.f.markers.is_empty() {
        d(lane_area.draw(&Text::new(
            "no faults",
            (lane_x0 + 4, lane_top + lane_px as i32 / 2),
            TextStyle::from((FAMILY, 14).into_font())
                .color(&RGBColor(0x99, 0x99, 0x99))
                .pos(Pos::new(HPos::Left, VPos::Center)),
        )))?;
    }
    Ok(skipped)
}

/// The fault labels in the lane, on three sub-lines; the number left out.
fn draw_lane_labels(
    lane_area: &Area,
    chart: &RowsChart,
    r: &Rows,
    lane_x1: i32,
) -> Result<usize, String> {
    let lane_px = LANE_PX;
    let lane_top = 36;
    let sub_lines = 3;
    let line_h = lane_px as i32 / sub_lines;
    let mut right_edge = vec![i32::MIN; sub_lines as usize];
    let mut skipped = 0usize;
    for m in &r.f.markers {
        let (x, _) = chart.backend_coord(&(r.clamp(m.time), 0.0));
        let w = (m.label.chars().count() as f64 * 7.6) as i32 + 6;
        // Labels start at the marker; near the right edge they end there.
        let right_aligned = x + w > lane_x1 + 15;
        let left = if right_aligned { x - w } else { x };
        let Some(k) = (0..sub_lines as usize).find(|&k| left > right_edge[k] + 4) else {
            skipped += 1;
            if !r.through_rows {
                d(lane_area.draw(&PathElement::new(
                    vec![
                        (x, lane_top + lane_px as i32 - 6),
                        (x, lane_top + lane_px as i32 + 10),
                    ],
                    marker_color(&m.what).mix(0.7).stroke_width(1),
                )))?;
            }
            continue;
        };
        right_edge[k] = left + w;
        let y = lane_top + k as i32 * line_h + line_h / 2;
        let color = marker_color(&m.what);
        d(lane_area.draw(&PathElement::new(
            vec![(x, y - line_h / 2 + 1), (x, lane_top + lane_px as i32 + 10)],
            color.mix(0.7).stroke_width(1),
        )))?;
        let (tx, anchor) = if right_aligned {
            (x - 3, HPos::Right)
        } else {
            (x + 3, HPos::Left)
        };
        d(lane_area.draw(&Text::new(
            m.label.clone(),
            (tx, y),
            TextStyle::from((FAMILY, 14).into_font())
                .color(&color)
                .pos(Pos::new(anchor, VPos::Center)),
        )))?;
    }
    Ok(skipped)
}

/// The legend's items: what each swatch means.
fn legend_items(out: &RunOutput, skipped: usize) -> Vec<(Swatch, String)> {
    let c = out.check;
    let mut items: Vec<(Swatch, String)> = vec![
        (
            Swatch::Bar(PALETTE[0].to_rgba()),
            "hold (color: client)".into(),
        ),
        (Swatch::Bar(VIOLATION.to_rgba()), "overlap".into()),
    ];
    // A lab run does not see lock calls.
    if out.sees_lock_calls() {
        items.push((Swatch::Thin(WAITING), "in a lock call".into()));
    }
    items.push((Swatch::Tick(WRITE), "write applied".into()));
    if c.rejected_writes > 0 {
        items.push((Swatch::Tick(REJECTED), "write rejected".into()));
    }
    if !out.abandoned_writes().is_empty() {
        items.push((
            Swatch::Tick(ABANDONED),
            "write abandoned (never sent)".into(),
        ));
    }
    if !c.interleavings.is_empty() {
        items.push((Swatch::Dot(VIOLATION), "interleaved write".into()));
    }
    if !c.stale_writes.is_empty() {
        items.push((Swatch::Ring(VIOLATION), "stale write".into()));
    }
    items.extend([
        (
            Swatch::Bar(PALETTE[1].to_rgba()),
            "node holds key (color: owner)".into(),
        ),
        (
            Swatch::Bar(UNKNOWN_KEY.to_rgba()),
            "key of a failed attempt".into(),
        ),
        (Swatch::Thin(UP), "node up".into()),
        (Swatch::Bar(DOWN.to_rgba()), "node down".into()),
        (Swatch::Strip(PAUSED), "paused".into()),
        (Swatch::Bar(PARTITION.mix(0.3)), "partitioned".into()),
    ]);
    if skipped > 0 {
        items.push((Swatch::None, format!("({skipped} fault labels left out)")));
    }
    items
}

/// The legend below the chart.
fn draw_legend(out: &RunOutput, lower: &Area, l: &Layout, skipped: usize) -> Result<(), String> {
    // --- legend ---
    let label_w = l.label_w;
    let mut x = label_w as i32 - 40;
    let mut y = 14;
    let item_style = TextStyle::from((FAMILY, 15).into_font())
        .color(&BLACK)
        .pos(Pos::new(HPos::Left, VPos::Center));
    for (sw, text) in legend_items(out, skipped) {
        let w = 26 + (text.chars().count() as f64 * 7.6) as i32 + 18;
        if x + w > l.width as i32 - 10 {
            x = label_w as i32 - 40;
            y += 22;
        }
        match sw {
            Swatch::Bar(col) => {
                d(lower.draw(&Rectangle::new([(x, y - 6), (x + 18, y + 6)], col.filled())))?
            }
            Swatch::Thin(col) => {
                d(lower.draw(&Rectangle::new([(x, y - 2), (x + 18, y + 2)], col.filled())))?
            }
            Swatch::Strip(col) => {
                d(lower.draw(&Rectangle::new([(x, y + 2), (x + 18, y + 6)], col.filled())))?
            }
            Swatch::Tick(col) => d(lower.draw(&Rectangle::new(
                [(x + 8, y - 6), (x + 10, y + 6)],
                col.filled(),
            )))?,
            Swatch::Dot(col) => d(lower.draw(&Circle::new((x + 9, y), 4, col.filled())))?,
            Swatch::Ring(col) => d(lower.draw(&Circle::new((x + 9, y), 5, col.stroke_width(2))))?,
            Swatch::None => {}
        }
        d(lower.draw(&Text::new(text, (x + 24, y), item_style.clone())))?;
        x += w;
    }
    Ok(())
}

/// How a legend item is drawn.
enum Swatch {
    Bar(RGBAColor),
    Thin(RGBColor),
    Strip(RGBColor),
    Tick(RGBColor),
    Dot(RGBColor),
    Ring(RGBColor),
    None,
}
