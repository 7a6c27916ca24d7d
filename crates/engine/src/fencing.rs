//! The protected store's fencing rule, one for both worlds' stores: a
//! write whose token is lower than the highest the store has accepted for
//! its resource is rejected; a write without a token, or with one at least
//! as high, is applied, and its token becomes the highest. The refusal's
//! text is the same in both worlds too.

use std::collections::BTreeMap;

/// The highest fencing token accepted per resource.
#[derive(Debug, Default)]
pub struct Fencing {
    highest: BTreeMap<String, u64>,
}

/// What the rule decided of one write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Admission {
    /// Applied (else rejected).
    pub applied: bool,
    /// The highest token accepted for the resource before this write (0
    /// before any).
    pub highest: u64,
}

impl Fencing {
    /// Applies the rule to a write of `resource` carrying `fence`.
    pub fn admit(&mut self, resource: &str, fence: Option<u64>) -> Admission {
        let top = self.highest.entry(resource.to_string()).or_insert(0);
        let before = *top;
        let applied = fence.is_none_or(|f| f >= before);
        if let (true, Some(f)) = (applied, fence) {
            *top = f;
        }
        // The rule: the highest token accepted never goes down, and only a
        // token below it is rejected.
        assert!(
            *top >= before,
            "{resource}: the highest token went from {before} to {top}"
        );
        assert!(
            applied || fence.is_some_and(|f| f < before),
            "{resource}: a write with token {fence:?} rejected, the highest being {before}"
        );
        Admission {
            applied,
            highest: before,
        }
    }
}

/// The store's answer to a rejected write (after `-`, as RESP errors go).
pub fn refusal(fence: u64, highest: u64) -> String {
    format!("REJECTED fencing token {fence} is lower than {highest}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_below_the_highest_is_rejected_and_moves_nothing() {
        let mut f = Fencing::default();
        let first = f.admit("r", Some(5));
        assert_eq!(
            first,
            Admission {
                applied: true,
                highest: 0
            }
        );
        assert_eq!(
            f.admit("r", Some(5)),
            Admission {
                applied: true,
                highest: 5
            }
        );
        assert_eq!(
            f.admit("r", Some(4)),
            Admission {
                applied: false,
                highest: 5
            }
        );
        assert_eq!(
            f.admit("r", None),
            Admission {
                applied: true,
                highest: 5
            }
        );
        assert_eq!(
            f.admit("r", Some(7)),
            Admission {
                applied: true,
                highest: 5
            }
        );
        assert_eq!(
            f.admit("other", Some(1)),
            Admission {
                applied: true,
                highest: 0
            }
        );
        assert_eq!(refusal(4, 5), "REJECTED fencing token 4 is lower than 5");
    }
}
