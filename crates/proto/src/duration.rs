//! Durations as users write them: `"150ms"`, `"10s"`, `"2m"`, `"1.5s"`,
//! optionally signed (`"+8s"`, `"-50ms"`). Shared by scenario files and the
//! command line, so both accept exactly the same spellings.

use std::time::Duration;

/// Units accepted, longest suffix first so `ms` is not read as `m`.
const UNITS: &[(&str, f64)] = &[
    ("ns", 1e-6),
    ("us", 1e-3),
    ("µs", 1e-3),
    ("ms", 1.0),
    ("s", 1e3),
    ("m", 60e3),
    ("h", 3600e3),
];

/// Parses a signed duration into milliseconds (fractions kept).
pub fn parse_signed_ms(text: &str) -> Result<f64, String> {
    let t = text.trim();
    let (sign, body) = match t.strip_prefix('-') {
        Some(rest) => (-1.0, rest),
        None => (1.0, t.strip_prefix('+').unwrap_or(t)),
    };
    let Some((num, scale)) = UNITS
        .iter()
        .filter_map(|(u, scale)| body.strip_suffix(u).map(|n| (n, *scale)))
        .next()
    else {
        return Err(format!(
            "\"{text}\" is not a duration: write a number with a unit, like \"150ms\", \"10s\" or \"2m\""
        ));
    };
    let value: f64 = num
        .trim()
        .parse()
        .ok()
        .filter(|v: &f64| v.is_finite() && *v >= 0.0 && !num.trim().is_empty())
        .ok_or_else(|| {
            format!("\"{text}\" is not a duration: \"{num}\" is not a non-negative number")
        })?;
    Ok(sign * value * scale)
}

/// Parses a non-negative duration.
pub fn parse(text: &str) -> Result<Duration, String> {
    let ms = parse_signed_ms(text)?;
    if ms < 0.0 {
        return Err(format!(
            "\"{text}\" is negative; a duration here must be zero or more"
        ));
    }
    if ms > 1e12 {
        return Err(format!("\"{text}\" is too long"));
    }
    Ok(Duration::from_nanos((ms * 1e6).round() as u64))
}

/// Formats a duration the way users write them (`"1.5s"`, `"150ms"`).
pub fn format(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1e3;
    let short = |x: f64| {
        let s = format!("{x:.3}");
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    };
    if ms >= 1000.0 {
        format!("{}s", short(ms / 1000.0))
    } else {
        format!("{}ms", short(ms))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings() {
        assert_eq!(parse("150ms").unwrap(), Duration::from_millis(150));
        assert_eq!(parse("10s").unwrap(), Duration::from_secs(10));
        assert_eq!(parse("2m").unwrap(), Duration::from_secs(120));
        assert_eq!(parse("1.5s").unwrap(), Duration::from_millis(1500));
        assert_eq!(parse(" 0s ").unwrap(), Duration::ZERO);
        assert_eq!(parse_signed_ms("-2s").unwrap(), -2000.0);
        assert_eq!(parse_signed_ms("+8s").unwrap(), 8000.0);
    }

    #[test]
    fn rejects() {
        for bad in [
            "10", "", "s", "ms", "abc", "1.5", "-1s", "1e400s", "NaNs", "1 parsec",
        ] {
            assert!(parse(bad).is_err(), "{bad} accepted");
        }
        assert!(parse("10").unwrap_err().contains("unit"));
    }

    #[test]
    fn formats() {
        assert_eq!(format(Duration::from_millis(1500)), "1.5s");
        assert_eq!(format(Duration::from_secs(10)), "10s");
        assert_eq!(format(Duration::from_millis(150)), "150ms");
    }
}
