//! Glob patterns as Redis matches them (`KEYS`, `PSUBSCRIBE`, `PUBSUB
//! CHANNELS`).

/// Redis's `stringmatchlen`: `*`, `?`, `[...]` (with `^` and ranges) and
/// `\` escapes, case-sensitive. The pattern is read into tokens, each
/// `*` or one character's test, then matched with the last `*` as the only
/// backtracking point: time linear in the key times the pattern, whatever
/// the pattern (a recursive match is exponential in its stars).
pub(crate) fn glob_match(pattern: &[u8], s: &[u8]) -> bool {
    let tokens = tokenize(pattern);
    let (mut t, mut i) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while i < s.len() {
        match tokens.get(t) {
            Some(Token::Star) => {
                star = Some((t, i));
                t += 1;
            }
            Some(Token::One(test)) if test.matches(s[i]) => {
                t += 1;
                i += 1;
            }
            _ => match star {
                Some((st, si)) => {
                    star = Some((st, si + 1));
                    t = st + 1;
                    i = si + 1;
                }
                None => return false,
            },
        }
    }
    tokens[t..].iter().all(|k| matches!(k, Token::Star))
}

enum Token {
    Star,
    One(CharTest),
}

/// What one character of the key must be.
enum CharTest {
    Any,
    Is(u8),
    Class { not: bool, items: Vec<(u8, u8)> },
}

impl CharTest {
    fn matches(&self, c: u8) -> bool {
        match self {
            CharTest::Any => true,
            CharTest::Is(x) => *x == c,
            CharTest::Class { not, items } => {
                items.iter().any(|(a, b)| (*a..=*b).contains(&c)) != *not
            }
        }
    }
}

fn tokenize(p: &[u8]) -> Vec<Token> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < p.len() {
        match p[i] {
            b'*' => {
                if !matches!(out.last(), Some(Token::Star)) {
                    out.push(Token::Star);
                }
                i += 1;
            }
            b'?' => {
                out.push(Token::One(CharTest::Any));
                i += 1;
            }
            b'[' => {
                let (test, used) = class(&p[i + 1..]);
                out.push(Token::One(test));
                i += 1 + used;
            }
            b'\\' if i + 1 < p.len() => {
                out.push(Token::One(CharTest::Is(p[i + 1])));
                i += 2;
            }
            c => {
                out.push(Token::One(CharTest::Is(c)));
                i += 1;
            }
        }
    }
    out
}

/// A `[...]` class after its `[`: its test and how many bytes it used,
/// its `]` included (an unclosed class runs to the end, as in Redis).
fn class(p: &[u8]) -> (CharTest, usize) {
    let (not, skip) = match p.first() {
        Some(b'^') => (true, 1),
        _ => (false, 0),
    };
    let body = &p[skip..];
    let mut i = 0;
    let mut items: Vec<(u8, u8)> = Vec::new();
    while i < body.len() && body[i] != b']' {
        if body[i] == b'\\' && i + 1 < body.len() {
            items.push((body[i + 1], body[i + 1]));
            i += 2;
        } else if i + 2 < body.len() && body[i + 1] == b'-' && body[i + 2] != b']' {
            let (a, b) = (body[i], body[i + 2]);
            items.push((a.min(b), a.max(b)));
            i += 3;
        } else {
            items.push((body[i], body[i]));
            i += 1;
        }
    }
    let used = skip + if i < body.len() { i + 1 } else { i };
    (CharTest::Class { not, items }, used)
}

#[cfg(test)]
mod tests {
    use super::glob_match;

    #[test]
    fn globs_as_redis_reads_them() {
        for (p, s, want) in [
            ("*", "", true),
            ("lock:*", "lock:a", true),
            ("lock:?", "lock:ab", false),
            ("l[a-c]ck", "lbck", true),
            ("l[^a-c]ck", "lbck", false),
            ("x\\*y", "x*y", true),
            ("x\\*y", "xay", false),
            ("a*b*c", "aXXbYYc", true),
            ("a*b*c", "aXXbYY", false),
            ("[abc", "b", true),
            ("trail\\", "trail\\", true),
        ] {
            assert_eq!(glob_match(p.as_bytes(), s.as_bytes()), want, "{p} {s}");
        }
    }

    /// A pattern of many stars against a long key that almost matches: a
    /// recursive matcher takes exponential time here (Redis's CVE-2022-36021);
    /// this one answers at once.
    #[test]
    fn many_stars_do_not_explode() {
        let pattern = "*a".repeat(30) + "b";
        let key = "a".repeat(200);
        assert!(!glob_match(pattern.as_bytes(), key.as_bytes()));
        assert!(glob_match(pattern.as_bytes(), (key + "b").as_bytes()));
    }
}
