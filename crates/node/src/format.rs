//! Numbers as Redis writes them: C's `%.<p>g` (scores and doubles are
//! `%.17g` in Redis 7.0; Lua 5.1 prints numbers with `%.14g`).

/// C's `printf("%.17g", d)`.
pub(crate) fn fmt_g17(d: f64) -> String {
    fmt_g(d, 17)
}

/// C's `printf("%.<p>g", d)` (Lua 5.1 prints numbers with `%.14g`).
pub(crate) fn fmt_g(d: f64, p: i32) -> String {
    if d.is_nan() {
        return if d.is_sign_negative() { "-nan" } else { "nan" }.into();
    }
    if d.is_infinite() {
        return if d < 0.0 { "-inf" } else { "inf" }.into();
    }
    if d == 0.0 {
        return if d.is_sign_negative() { "-0" } else { "0" }.into();
    }
    let prec = p;
    let e = format!("{:.*e}", (prec - 1) as usize, d);
    let (mantissa, exp) = e.split_once('e').unwrap_or((&e, "0"));
    let x: i32 = exp.parse().unwrap_or(0);
    if (-4..prec).contains(&x) {
        let s = format!("{:.*}", (prec - 1 - x) as usize, d);
        strip_zeros(&s)
    } else {
        let m = strip_zeros(mantissa);
        let sign = if x < 0 { '-' } else { '+' };
        format!("{m}e{sign}{:02}", x.abs())
    }
}

fn strip_zeros(s: &str) -> String {
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s.to_string()
    }
}
