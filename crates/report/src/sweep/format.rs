//! Figures as text in the sweep report: percentages, intervals, latencies.

/// A rate in [0, 1] as a percentage: `12.4%`, `3.25%`, `0.18%`, `0%`.
pub(crate) fn pct(x: f64) -> String {
    if !x.is_finite() {
        return "n/a".to_string();
    }
    let p = (x * 100.0).clamp(0.0, 100.0);
    // Below this it is rounding noise (a Wilson bound of 0 violations).
    if p < 1e-9 {
        return "0%".to_string();
    }
    if p == 100.0 {
        return "100%".to_string();
    }
    let s = if p >= 10.0 {
        format!("{p:.1}")
    } else if p >= 1.0 {
        format!("{p:.2}")
    } else {
        // Two significant digits.
        let digits = (-p.log10().floor()) as usize + 1;
        format!("{p:.digits$}")
    };
    // Never round up to 100% or down to 0%.
    match s.as_str() {
        "100.0" => "99.9%".to_string(),
        _ => format!("{s}%"),
    }
}

/// `10.9%–14.1%`.
pub(crate) fn interval(lo: f64, hi: f64) -> String {
    format!("{}–{}", pct(lo), pct(hi))
}

/// A latency in ms: `12.3 ms`, `1.25 s`.
pub(crate) fn latency(ms: f64) -> String {
    if !ms.is_finite() {
        "n/a".to_string()
    } else if ms.abs() < 1000.0 {
        format!("{ms:.1} ms")
    } else {
        format!("{:.2} s", ms / 1000.0)
    }
}
