//! The trade-off chart of a sweep (`tradeoff.svg`): what safety costs in
//! waiting. One point per combination: across, the mean time clients waited
//! while nobody held the lock (`unavailable_mean_ms`, with its 95% t
//! interval as a horizontal bar); up, the violation rate (with its 95%
//! Wilson interval as a vertical bar). Each point is labelled with its
//! combination's values; a label that finds no free place beside its point
//! becomes a number, spelled out under the chart. With other keys varied,
//! the points are coloured by the combination of the keys after the first.
//!
//! Drawn for every sweep with more than one combination; drawing never
//! panics (a chart that cannot be drawn becomes a small SVG saying why).

use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use super::charts::{
    draw_mark, fallback, nice_top, series_style, short, y_label, Chart, CHAR_W, GREY_TEXT, GRID,
    HEADER_H, LIGHT_GRID, MARGIN_L, MARGIN_R, MAX_LEGEND, PLOT_H, WIDTH, Y_LABEL_W,
};
use super::output::SweepOutput;
use super::view::key_view;
use crate::fonts::{ensure_font, FAMILY};

/// The chart's file name.
pub(crate) const FILE: &str = "tradeoff.svg";
/// The chart's title (also the figure's caption in the report).
pub(crate) const TITLE: &str = "What safety costs: violation rate against waiting";
/// Points drawn at most (summary.csv has them all).
const MAX_POINTS: usize = 200;
/// Height of a label, in px.
const LABEL_H: f64 = 16.0;

/// One combination's point.
struct Point {
    label: String,
    series: usize,
    /// Waiting, in ms: the mean and its interval.
    x: f64,
    x_ci: Option<(f64, f64)>,
    /// Violation rate, in %: the rate and its interval.
    y: f64,
    y_ci: (f64, f64),
}

/// The chart, when the sweep has more than one combination with runs.
pub(crate) fn render(out: &SweepOutput) -> Option<Chart> {
    if out.rows.iter().filter(|r| r.conclusive_runs() > 0).count() < 2 {
        return None;
    }
    ensure_font();
    // Drawn twice: the first time tells how many legend lines it takes.
    let svg = draw(out, None)
        .and_then(|(_, rows)| draw(out, Some(rows)))
        .map(|(svg, _)| svg)
        .unwrap_or_else(|e| fallback(TITLE, &e));
    Some(Chart {
        file: FILE.to_string(),
        title: TITLE.to_string(),
        key: String::new(),
        svg,
    })
}

/// The points, and the series' labels (empty with one series).
fn points(out: &SweepOutput) -> (Vec<Point>, Vec<String>) {
    // Series: the combinations of the keys after the first.
    let view = key_view(out, 0);
    let mut series_of: Vec<(&[String], usize)> = Vec::new();
    for (g, group) in view.groups.iter().enumerate() {
        for r in group.cells.iter().flatten() {
            series_of.push((r.values.as_slice(), g));
        }
    }
    let many = view.groups.len() > 1;
    let labels = if many {
        view.groups.iter().map(|g| g.label.clone()).collect()
    } else {
        Vec::new()
    };
    let points = out
        .rows
        .iter()
        .filter(|r| r.conclusive_runs() > 0 && r.unavailable_mean_ms.is_finite())
        .take(MAX_POINTS)
        .map(|r| {
            let series = series_of
                .iter()
                .find(|(v, _)| *v == r.values.as_slice())
                .map_or(0, |(_, g)| *g);
            // With series, the first key's value names the point; the
            // colour gives the rest.
            let label = if many {
                r.values.first().cloned().unwrap_or_default()
            } else {
                r.values.join(", ")
            };
            Point {
                label: short(&label),
                series,
                x: r.unavailable_mean_ms,
                x_ci: r.unavailable_ci_ms,
                y: r.violation_rate * 100.0,
                y_ci: (r.ci_low * 100.0, r.ci_high * 100.0),
            }
        })
        .collect();
    (points, labels)
}

/// A label's box in pixels: (left, top, right, bottom).
type Box4 = (f64, f64, f64, f64);

fn overlaps(a: Box4, b: Box4) -> bool {
    a.0 < b.2 && b.0 < a.2 && a.1 < b.3 && b.1 < a.3
}

/// Places labels beside points without overlap: every point's mark and
/// every label placed so far take their room.
struct Placer {
    area: Box4,
    taken: Vec<Box4>,
}

impl Placer {
    fn new(points: &[(f64, f64)], area: Box4) -> Placer {
        let taken = points
            .iter()
            .map(|&(x, y)| (x - 5.0, y - 5.0, x + 5.0, y + 5.0))
            .collect();
        Placer { area, taken }
    }

    /// The box `text` takes when anchored at `(ax, ay)` so: a little wider
    /// than the estimate of its glyphs, and a margin.
    fn text_box(ax: f64, ay: f64, h_pos: HPos, text: &str) -> Box4 {
        let w = text.chars().count() as f64 * CHAR_W * 1.1 + 6.0;
        let left = match h_pos {
            HPos::Left => ax,
            HPos::Right => ax - w,
            HPos::Center => ax - w / 2.0,
        };
        (left, ay - LABEL_H / 2.0, left + w, ay + LABEL_H / 2.0)
    }

    fn is_free(&self, b: Box4) -> bool {
        !self.taken.iter().any(|&t| overlaps(t, b))
    }

    fn is_inside(&self, b: Box4) -> bool {
        let a = self.area;
        b.0 >= a.0 && b.2 <= a.2 && b.1 >= a.1 && b.3 <= a.3
    }

    /// The first free place for `text` around `(x, y)` (right, left, above,
    /// below, then diagonals; then, up to `reach` times as far, the same),
    /// now taken; `None` when there is none.
    fn place(&mut self, (x, y): (f64, f64), text: &str, reach: usize) -> Option<(f64, f64, HPos)> {
        let tries = (1..=reach.max(1)).map(|k| k as f64).flat_map(|k: f64| {
            [
                (x + 9.0 * k, y, HPos::Left),
                (x - 9.0 * k, y, HPos::Right),
                (x, y - 14.0 * k, HPos::Center),
                (x, y + 14.0 * k, HPos::Center),
                (x + 7.0 * k, y - 14.0 * k, HPos::Left),
                (x + 7.0 * k, y + 14.0 * k, HPos::Left),
                (x - 7.0 * k, y - 14.0 * k, HPos::Right),
                (x - 7.0 * k, y + 14.0 * k, HPos::Right),
            ]
        });
        let (spot, b) = tries
            .map(|(ax, ay, h_pos)| ((ax, ay, h_pos), Self::text_box(ax, ay, h_pos, text)))
            .find(|&(_, b)| self.is_inside(b) && self.is_free(b))?;
        self.taken.push(b);
        Some(spot)
    }

    /// Above `(x, y)`, as high as it takes to find room (at the top of the
    /// area, there anyway); now taken.
    fn stack_above(&mut self, (x, y): (f64, f64), text: &str) -> (f64, f64, HPos) {
        let mut ay = y - 14.0;
        loop {
            let b = Self::text_box(x, ay, HPos::Center, text);
            if ay < self.area.1 || self.is_free(b) {
                self.taken.push(b);
                return (x, ay, HPos::Center);
            }
            ay -= LABEL_H;
        }
    }
}

/// Where each label goes: its text beside its point, or else its number
/// (the count of labels that did not fit so far), or, when even that finds
/// no free place, the number just above and right of the point.
fn place_labels(at: &[(f64, f64)], labels: &[String], area: Box4) -> Vec<Label> {
    let mut placer = Placer::new(at, area);
    let mut numbers = 0;
    let mut out = Vec::with_capacity(at.len());
    for (&p, label) in at.iter().zip(labels) {
        // A label only right beside its point: farther, it could be read as
        // another point's.
        if let Some(spot) = placer.place(p, label, 1) {
            out.push(Label::Text(spot));
            continue;
        }
        numbers += 1;
        let n = numbers.to_string();
        // A number may go farther; failing that, above the point, as high
        // as it takes to find room.
        let spot = placer
            .place(p, &n, 3)
            .unwrap_or_else(|| placer.stack_above(p, &n));
        out.push(Label::Number(numbers, spot));
    }
    out
}

/// A point's label as drawn.
enum Label {
    /// The label's text at (x, y), anchored so.
    Text((f64, f64, HPos)),
    /// The point's number instead, spelled out under the chart.
    Number(usize, (f64, f64, HPos)),
}

/// The chart's coordinates: waiting (ms) across, violation rate (%) up.
type Coords =
    Cartesian2d<plotters::coord::types::RangedCoordf64, plotters::coord::types::RangedCoordf64>;
/// A pixel-addressed drawing area of the chart.
type Area<'a> = DrawingArea<SVGBackend<'a>, plotters::coord::Shift>;

/// A drawing result with its error as text.
fn d<E: std::fmt::Debug>(r: Result<(), E>) -> Result<(), String> {
    r.map_err(|e| format!("{e:?}"))
}

/// The drawn axes, and their tops, to place values in pixels.
struct Axes<'a, 'b> {
    chart: ChartContext<'a, SVGBackend<'b>, Coords>,
    x1: f64,
    y1: f64,
}

impl Axes<'_, '_> {
    /// The pixel of `(x, y)`, clamped to the axes.
    fn px(&self, x: f64, y: f64) -> (i32, i32) {
        self.chart
            .backend_coord(&(x.clamp(0.0, self.x1), y.clamp(0.0, self.y1)))
    }
}

/// `4 runs each` (or `3 to 4 runs each`): the runs per point, fewer in a
/// shard or a partial merge.
fn runs_per_point(out: &SweepOutput) -> String {
    let runs: Vec<u64> = out
        .rows
        .iter()
        .filter(|r| r.conclusive_runs() > 0)
        .map(|r| r.conclusive_runs())
        .collect();
    let (fewest, most) = (
        runs.iter().copied().min().unwrap_or(0),
        runs.iter().copied().max().unwrap_or(0),
    );
    if fewest == most {
        format!("{most} runs each")
    } else {
        format!("{fewest} to {most} runs each")
    }
}

/// The SVG and the legend lines it used; `legend_rows`: the room to leave
/// for the legend (`None`: as much as it could take).
fn draw(out: &SweepOutput, legend_rows: Option<usize>) -> Result<(String, usize), String> {
    let (points, series) = points(out);
    let sole = series.is_empty();
    let x_hi = points
        .iter()
        .map(|p| p.x_ci.map_or(p.x, |c| c.1).max(p.x))
        .fold(0.0, f64::max);
    let y_hi = points.iter().map(|p| p.y_ci.1.max(p.y)).fold(0.0, f64::max);
    let x1 = nice_top(x_hi);
    let y1 = nice_top(y_hi).min(100.0);
    let per = runs_per_point(out);
    // Legend lines: the series, then numbered labels (filled in below).
    let legend_rows = legend_rows.unwrap_or(1 + series.len().min(MAX_LEGEND) + 1 + 3 + 1);
    let height = HEADER_H + PLOT_H + 60 + legend_rows as u32 * 22 + 12;
    let mut buf = String::new();
    let used;
    {
        let root = SVGBackend::with_string(&mut buf, (WIDTH, height)).into_drawing_area();
        d(root.fill(&WHITE))?;
        let (header, rest) = root.split_vertically(HEADER_H);
        let (plot_area, legend_area) = rest.split_vertically(PLOT_H + 60);
        d(header.draw(&Text::new(
            format!("{TITLE} — {}", out.scenario.name),
            (MARGIN_L as i32 + 12, 10),
            TextStyle::from((FAMILY, 20).into_font()).color(&BLACK),
        )))?;
        d(header.draw(&Text::new(
            format!("one point per combination, {per}; bars: 95% intervals (Wilson up, t across)"),
            (MARGIN_L as i32 + 12, 38),
            TextStyle::from((FAMILY, 15).into_font()).color(&GREY_TEXT),
        )))?;
        let axes = draw_axes(&plot_area, x1, y1)?;
        draw_points(&root, &axes, &points, sole)?;
        let numbered = draw_labels(&root, &axes, &points)?;
        used = draw_legend(&legend_area, out, &series, &numbered)?;
        d(root.present())?;
    }
    Ok((buf, used))
}

/// The axes on `plot_area`, from 0 to `x1` across and 0 to `y1` up.
fn draw_axes<'a, 'b>(plot_area: &'a Area<'b>, x1: f64, y1: f64) -> Result<Axes<'a, 'b>, String> {
    let x_in_s = x1 >= 2_000.0;
    let mut chart = ChartBuilder::on(plot_area)
        .margin_left(MARGIN_L)
        .margin_right(MARGIN_R)
        .margin_top(10)
        .x_label_area_size(60)
        .y_label_area_size(Y_LABEL_W)
        .build_cartesian_2d(0f64..x1, 0f64..y1)
        .map_err(|e| format!("{e:?}"))?;
    let fmt_x = |x: &f64| {
        if x_in_s {
            let decimals = if x1 >= 20_000.0 { 0 } else { 1 };
            format!("{:.decimals$} s", x / 1000.0)
        } else {
            format!("{x:.0} ms")
        }
    };
    let fmt_y = |y: &f64| y_label(true, y1, *y);
    d(chart
        .configure_mesh()
        .x_labels(10)
        .y_labels(8)
        .x_label_formatter(&fmt_x)
        .y_label_formatter(&fmt_y)
        .y_desc("runs with a violation")
        .x_desc("time clients waited while nobody held the lock (mean per run)")
        .label_style((FAMILY, 14))
        .axis_desc_style((FAMILY, 15))
        .light_line_style(LIGHT_GRID)
        .bold_line_style(GRID)
        .draw())?;
    Ok(Axes { chart, x1, y1 })
}

/// The points and their bars.
fn draw_points(root: &Area, axes: &Axes, points: &[Point], sole: bool) -> Result<(), String> {
    // --- the points and their bars ---
    for p in points {
        let (color, mark) = series_style(p.series, sole);
        let (cx, cy) = axes.px(p.x, p.y);
        let bar = |a: (i32, i32), b: (i32, i32)| {
            root.draw(&PathElement::new(vec![a, b], color.stroke_width(1)))
        };
        let (_, lo) = axes.px(p.x, p.y_ci.0);
        let (_, hi) = axes.px(p.x, p.y_ci.1);
        d(bar((cx, lo), (cx, hi)))?;
        for y in [lo, hi] {
            d(bar((cx - 4, y), (cx + 4, y)))?;
        }
        if let Some((a, b)) = p.x_ci {
            let (l, _) = axes.px(a, p.y);
            let (r, _) = axes.px(b, p.y);
            d(bar((l, cy), (r, cy)))?;
            for x in [l, r] {
                d(bar((x, cy - 4), (x, cy + 4)))?;
            }
        }
        draw_mark(root, mark, (cx, cy), color)?;
    }
    Ok(())
}

/// The points' labels; the labels of the points numbered instead, in order.
fn draw_labels(root: &Area, axes: &Axes, points: &[Point]) -> Result<Vec<String>, String> {
    // --- the labels ---
    let (xr, yr) = axes.chart.plotting_area().get_pixel_range();
    let area = (
        xr.start as f64,
        yr.start as f64,
        xr.end as f64,
        yr.end as f64,
    );
    let at: Vec<(f64, f64)> = points
        .iter()
        .map(|p| {
            let (x, y) = axes.px(p.x, p.y);
            (x as f64, y as f64)
        })
        .collect();
    let texts: Vec<String> = points.iter().map(|p| p.label.clone()).collect();
    let placed = place_labels(&at, &texts, area);
    let mut numbered: Vec<String> = Vec::new();
    let label_style = TextStyle::from((FAMILY, 14).into_font()).color(&BLACK);
    for (p, label) in points.iter().zip(&placed) {
        let (text, (ax, ay, h_pos)) = match label {
            Label::Text(spot) => (p.label.clone(), *spot),
            Label::Number(n, spot) => {
                numbered.push(p.label.clone());
                (n.to_string(), *spot)
            }
        };
        d(root.draw(&Text::new(
            text,
            (ax as i32, ay as i32),
            label_style.clone().pos(Pos::new(h_pos, VPos::Center)),
        )))?;
    }
    Ok(numbered)
}

/// The legend under the chart, one line after another.
struct Legend<'a, 'b> {
    area: &'a Area<'b>,
    item: TextStyle<'static>,
    /// Lines drawn so far.
    row: i32,
}

impl Legend<'_, '_> {
    /// The next line: `text`, after the swatch of series `swatch` if any.
    fn line(&mut self, text: String, swatch: Option<usize>) -> Result<(), String> {
        let x0 = MARGIN_L as i32 + 12;
        let y = 14 + self.row * 22;
        self.row += 1;
        let mut x = x0;
        if let Some(s) = swatch {
            let (color, mark) = series_style(s, false);
            d(self.area.draw(&PathElement::new(
                vec![(x, y), (x + 26, y)],
                color.stroke_width(2),
            )))?;
            draw_mark(self.area, mark, (x + 13, y), color)?;
            x += 34;
        }
        d(self.area.draw(&Text::new(text, (x, y), self.item.clone())))
    }
}

/// The legend: series, then numbered points; the lines it took.
fn draw_legend(
    legend_area: &Area,
    out: &SweepOutput,
    series: &[String],
    numbered: &[String],
) -> Result<usize, String> {
    // --- the legend: series, then numbered points ---
    let sole = series.is_empty();
    let mut legend = Legend {
        area: legend_area,
        item: TextStyle::from((FAMILY, 15).into_font())
            .color(&BLACK)
            .pos(Pos::new(HPos::Left, VPos::Center)),
        row: 0,
    };
    if let Some(first) = out.keys.first() {
        legend.line(
            if sole {
                format!("points labelled by {}", out.keys.join(", "))
            } else {
                format!("points labelled by {first}; colours:")
            },
            None,
        )?;
    }
    for (s, label) in series.iter().enumerate().take(MAX_LEGEND) {
        legend.line(label.clone(), Some(s))?;
    }
    if series.len() > MAX_LEGEND {
        legend.line(
            format!(
                "… {} more colours not in this legend",
                series.len() - MAX_LEGEND
            ),
            None,
        )?;
    }
    if !numbered.is_empty() {
        let lines = numbered_lines(numbered);
        let more = lines.len() > 3;
        for l in lines.into_iter().take(3) {
            legend.line(l, None)?;
        }
        if more {
            legend.line("… the rest in summary.csv".to_string(), None)?;
        }
    }
    if out.rows.len() > MAX_POINTS {
        legend.line(
            format!("({MAX_POINTS} of {} combinations drawn)", out.rows.len()),
            None,
        )?;
    }
    Ok(legend.row as usize)
}

/// `1 = label;  2 = label`, wrapped at the chart's width.
fn numbered_lines(numbered: &[String]) -> Vec<String> {
    let shown: Vec<String> = numbered
        .iter()
        .enumerate()
        .map(|(i, l)| format!("{} = {l}", i + 1))
        .collect();
    // Wrapped at the chart's width (the legend shows at most three lines).
    let per_line = ((WIDTH as f64 - 40.0) / (CHAR_W * 1.1)) as usize;
    let mut current = String::new();
    let mut lines = Vec::new();
    for s in shown {
        if !current.is_empty() && current.chars().count() + s.chars().count() + 3 > per_line {
            lines.push(std::mem::take(&mut current));
        }
        if !current.is_empty() {
            current.push_str(";  ");
        }
        current.push_str(&s);
    }
    lines.push(current);
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_take_free_places_and_crowds_become_numbers() {
        let area = (0.0, 0.0, 1000.0, 400.0);
        let labels = vec!["a".to_string(), "b".to_string()];
        // Far apart: both to the right of their points.
        let p = place_labels(&[(100.0, 100.0), (500.0, 300.0)], &labels, area);
        assert!(matches!(p[0], Label::Text((x, _, HPos::Left)) if x > 100.0));
        assert!(matches!(p[1], Label::Text((x, _, HPos::Left)) if x > 500.0));
        // The same point many times: the first labels find places, the
        // rest become numbers 1, 2, ... that do not sit on each other while
        // there is room.
        let many: Vec<String> = (0..12).map(|i| format!("label-{i}")).collect();
        let at = vec![(500.0, 200.0); 12];
        let p = place_labels(&at, &many, area);
        assert!(matches!(p[0], Label::Text(_)));
        let numbers: Vec<(usize, (f64, f64))> = p
            .iter()
            .filter_map(|l| match l {
                Label::Number(n, (x, y, _)) => Some((*n, (*x, *y))),
                Label::Text(_) => None,
            })
            .collect();
        assert!(!numbers.is_empty());
        assert_eq!(numbers[0].0, 1);
        assert!(numbers.windows(2).all(|w| w[1].0 == w[0].0 + 1));
        assert_ne!(numbers[0].1, numbers.get(1).map_or((0.0, 0.0), |n| n.1));
        // At the right edge a long label goes to the left.
        let long = vec!["a long label of many characters".to_string()];
        let p = place_labels(&[(990.0, 200.0)], &long, area);
        assert!(matches!(p[0], Label::Text((_, _, HPos::Right))));
    }
}
