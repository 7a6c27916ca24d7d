//! The document model shared by the run report ([`super::run`]) and the
//! sweep report ([`super::sweep`]): blocks of text, rendered as Markdown and
//! as an HTML page with its CSS inline (and its charts too, but for those
//! shown from a file, [`Figure::file`]). What differs between the reports
//! is said by a [`Style`].

use std::fmt::Write as _;

/// A piece of running text.
pub(crate) enum Inline {
    /// Plain text.
    Text(String),
    /// Bold text.
    Bold(String),
    /// Code (tokens, keys).
    Code(String),
    /// A link: the text and a relative path (percent-encoded when written).
    Link(String, String),
}

/// Plain text.
pub(crate) fn text(s: impl Into<String>) -> Inline {
    Inline::Text(s.into())
}
/// Bold text.
pub(crate) fn bold(s: impl Into<String>) -> Inline {
    Inline::Bold(s.into())
}
pub(crate) fn code(s: impl Into<String>) -> Inline {
    Inline::Code(s.into())
}
pub(crate) fn link(text: impl Into<String>, href: impl Into<String>) -> Inline {
    Inline::Link(text.into(), href.into())
}

/// A word for a shell command line: quoted when it holds anything special.
pub fn shell_word(w: &str) -> String {
    if !w.is_empty()
        && w.chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-/+:".contains(c))
    {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', "'\\''"))
    }
}

/// A relative path as a URL: every byte but unreserved characters, `/` and `=`
/// percent-encoded.
pub(crate) fn url_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/=".contains(&b) {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// A table row; strong rows are in bold.
pub(crate) struct Row {
    pub(crate) cells: Vec<String>,
    pub(crate) strong: bool,
}

pub(crate) fn row(cells: Vec<String>) -> Row {
    Row {
        cells,
        strong: false,
    }
}

pub(crate) enum Block {
    H(u8, String),
    P(Vec<Inline>),
    /// The verdict line: `ok` when as expected.
    Verdict(bool, Vec<Inline>),
    List(Vec<Vec<Inline>>),
    Table(Vec<String>, Vec<Row>),
    /// The index of a chart in the [`Figure`]s given to the renderers.
    Chart(usize),
}

/// A paragraph of plain text.
pub(crate) fn para(s: String) -> Block {
    Block::P(vec![Inline::Text(s)])
}

/// A list of plain-text items.
pub(crate) fn list(items: Vec<String>) -> Block {
    Block::List(items.into_iter().map(|s| vec![Inline::Text(s)]).collect())
}

/// A chart as the renderers place it.
pub(crate) struct Figure<'a> {
    /// The Markdown image: `![timeline](timeline.svg)`.
    pub(crate) md: String,
    /// The `title` attribute of its HTML box, if any.
    pub(crate) title: Option<&'a str>,
    /// The SVG, inlined in the HTML page (unless `file` is set).
    pub(crate) svg: &'a str,
    /// The chart's file beside the page (`timeline.svg`): when set, the
    /// HTML page shows it from there (`<img>`) instead of a second copy.
    pub file: Option<&'a str>,
}

/// What differs between the two reports' renderings.
pub(crate) struct Style {
    /// The page's inline CSS.
    pub(crate) css: &'static str,
    /// Escape every `#` in Markdown text (not only a paragraph's first).
    pub(crate) escape_hash: bool,
    /// HTML table cells from the column headed `runs` on are `class="num"`.
    pub(crate) num_columns: bool,
    /// The first list after the heading `Conclusions` is
    /// `class="conclusions"` in HTML.
    pub(crate) conclusions_list: bool,
}

// ---------------------------------------------------------------------------
// Markdown.

/// Escapes text for Markdown (inline and table cells); `#` too when `hash`.
pub(crate) fn md_escape(s: &str, hash: bool) -> String {
    let chars: Vec<char> = s.chars().collect();
    let mut out = String::with_capacity(s.len());
    for (i, &ch) in chars.iter().enumerate() {
        let word = |j: Option<usize>| {
            j.and_then(|j| chars.get(j))
                .is_some_and(|c| c.is_alphanumeric())
        };
        match ch {
            // `_` inside a word (`time_ms`) is no emphasis in CommonMark.
            '_' if word(i.checked_sub(1)) && word(Some(i + 1)) => out.push(ch),
            '\\' | '`' | '*' | '_' | '[' | ']' | '<' | '>' | '|' => {
                out.push('\\');
                out.push(ch);
            }
            '#' if hash => {
                out.push('\\');
                out.push(ch);
            }
            '\n' | '\r' => out.push(' '),
            _ => out.push(ch),
        }
    }
    out
}

fn md_code(s: &str) -> String {
    let s = s.replace(['\n', '\r'], " ");
    if s.contains('`') {
        format!("`` {s} ``")
    } else {
        format!("`{s}`")
    }
}

fn md_inline(spans: &[Inline], hash: bool) -> String {
    spans
        .iter()
        .map(|s| match s {
            Inline::Text(x) => md_escape(x, hash),
            Inline::Bold(x) if x.trim().is_empty() => x.clone(),
            // Emphasis must not start or end with a space in CommonMark.
            Inline::Bold(x) => {
                let inner = x.trim();
                let lead = &x[..x.len() - x.trim_start().len()];
                let trail = &x[x.trim_end().len()..];
                format!("{lead}**{}**{trail}", md_escape(inner, hash))
            }
            Inline::Code(x) => md_code(x),
            Inline::Link(x, href) => format!("[{}](<{}>)", md_escape(x, hash), url_path(href)),
        })
        .collect()
}

pub(crate) fn to_md(doc: &[Block], style: &Style, charts: &[Figure]) -> String {
    let hash = style.escape_hash;
    let mut s = String::new();
    for block in doc {
        match block {
            Block::H(level, text) => {
                let _ = writeln!(
                    s,
                    "{} {}\n",
                    "#".repeat(*level as usize),
                    md_escape(text, hash)
                );
            }
            Block::P(spans) => {
                let text = md_inline(spans, hash);
                // A paragraph starting with `#` would be a heading.
                let esc = if text.starts_with('#') { "\\" } else { "" };
                let _ = writeln!(s, "{esc}{text}\n");
            }
            Block::Verdict(_, spans) => {
                let _ = writeln!(s, "> {}\n", md_inline(spans, hash));
            }
            Block::List(items) => {
                for item in items {
                    let _ = writeln!(s, "- {}", md_inline(item, hash));
                }
                s.push('\n');
            }
            Block::Table(head, rows) => {
                let cells = |v: &[String], strong: bool| {
                    v.iter()
                        .map(|c| {
                            let e = md_escape(c, hash);
                            if strong && !e.is_empty() {
                                format!("**{e}**")
                            } else {
                                e
                            }
                        })
                        .collect::<Vec<_>>()
                        .join(" | ")
                };
                let _ = writeln!(s, "| {} |", cells(head, false));
                let _ = writeln!(s, "|{}", "---|".repeat(head.len().max(1)));
                for r in rows {
                    let _ = writeln!(s, "| {} |", cells(&r.cells, r.strong));
                }
                s.push('\n');
            }
            Block::Chart(k) => {
                if let Some(c) = charts.get(*k) {
                    let _ = writeln!(s, "{}\n", c.md);
                }
            }
        }
    }
    s
}

// ---------------------------------------------------------------------------
// HTML.

/// Escapes text for HTML content and attribute values.
pub(crate) fn html_escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for ch in s.chars() {
        match ch {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            _ => out.push(ch),
        }
    }
    out
}

fn html_inline(spans: &[Inline]) -> String {
    spans
        .iter()
        .map(|s| match s {
            Inline::Text(x) => html_escape(x),
            Inline::Bold(x) => format!("<strong>{}</strong>", html_escape(x)),
            Inline::Code(x) => format!("<code>{}</code>", html_escape(x)),
            Inline::Link(x, href) => format!(
                "<a href=\"{}\">{}</a>",
                html_escape(&url_path(href)),
                html_escape(x)
            ),
        })
        .collect()
}

/// The HTML page of `doc`, titled `title`, with `charts` inlined (or shown
/// from their files).
pub(crate) fn to_html(doc: &[Block], title: &str, style: &Style, charts: &[Figure]) -> String {
    let mut s = String::new();
    let _ = write!(
        s,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>redlock-sim: {}</title>\n<style>{}</style>\n</head>\n<body>\n",
        html_escape(title),
        style.css
    );
    let mut first_list_after_conclusions = false;
    for block in doc {
        match block {
            Block::H(level, text) => {
                first_list_after_conclusions = style.conclusions_list && text == "Conclusions";
                let _ = writeln!(s, "<h{level}>{}</h{level}>", html_escape(text));
            }
            Block::P(spans) => {
                let _ = writeln!(s, "<p>{}</p>", html_inline(spans));
            }
            Block::Verdict(ok, spans) => {
                let _ = writeln!(
                    s,
                    "<div class=\"verdict {}\">{}</div>",
                    if *ok { "ok" } else { "bad" },
                    html_inline(spans)
                );
            }
            Block::List(items) => {
                s.push_str(if first_list_after_conclusions {
                    "<ul class=\"conclusions\">\n"
                } else {
                    "<ul>\n"
                });
                first_list_after_conclusions = false;
                for item in items {
                    let _ = writeln!(s, "<li>{}</li>", html_inline(item));
                }
                s.push_str("</ul>\n");
            }
            Block::Table(head, rows) => html_table(&mut s, head, rows, style),
            Block::Chart(k) => {
                if let Some(c) = charts.get(*k) {
                    html_chart(&mut s, c);
                }
            }
        }
    }
    s.push_str("</body>\n</html>\n");
    s
}

/// A table in HTML; with `style.num_columns`, the columns from `runs` on are
/// numbers.
fn html_table(s: &mut String, head: &[String], rows: &[Row], style: &Style) {
    let first_num = if style.num_columns {
        head.iter().position(|h| h == "runs").unwrap_or(head.len())
    } else {
        usize::MAX
    };
    s.push_str("<table>\n<thead><tr>");
    for h in head {
        let _ = write!(s, "<th>{}</th>", html_escape(h));
    }
    s.push_str("</tr></thead>\n<tbody>\n");
    for r in rows {
        s.push_str(if r.strong {
            "<tr class=\"strong\">"
        } else {
            "<tr>"
        });
        for (k, c) in r.cells.iter().enumerate() {
            let class = if k >= first_num { " class=\"num\"" } else { "" };
            let _ = write!(s, "<td{class}>{}</td>", html_escape(c));
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</tbody>\n</table>\n");
}

/// A chart in HTML: its SVG inlined in a `div` (an `<img>` of its file
/// when it has one), titled when it has a title.
fn html_chart(s: &mut String, c: &Figure) {
    match c.title {
        Some(title) => {
            let _ = writeln!(s, "<div class=\"chart\" title=\"{}\">", html_escape(title));
        }
        None => s.push_str("<div class=\"chart\">\n"),
    }
    match c.file {
        Some(file) => {
            let _ = write!(
                s,
                "<img src=\"{}\" alt=\"{}\">",
                html_escape(file),
                html_escape(c.title.unwrap_or(file))
            );
        }
        None => s.push_str(strip_xml_prolog(c.svg)),
    }
    s.push_str("\n</div>\n");
}

/// The SVG element, without any `<?xml …?>` line before it.
fn strip_xml_prolog(svg: &str) -> &str {
    match svg.find("<svg") {
        Some(i) => &svg[i..],
        None => svg,
    }
}
