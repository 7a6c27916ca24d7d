//! `redlock-sim frontier`: where violations stop along one numeric key.
//!
//! (Being built: issue 12.)
