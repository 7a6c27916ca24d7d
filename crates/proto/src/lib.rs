//! The protocol pieces every layer of redlock-sim shares: RESP2 and RESP3
//! frames and their codec ([`resp`]), the SHA1 of a script ([`sha1`]), how
//! hosts open byte streams, on tokio TCP or turmoil TCP ([`transport`]), a
//! connection to a node over one ([`connection`]), monotonic and wall
//! clocks, system and simulated ([`clock`]), durations as users write
//! them ([`duration`]), and a paused host's streams ([`gate`]).

// What other crates use is `pub`; everything else is `pub(crate)` or less.
#![warn(unreachable_pub)]
// The docs are the developers'; `cargo doc --document-private-items`
// renders the private items they link to.
#![allow(rustdoc::private_intra_doc_links)]

pub mod clock;
pub mod connection;
pub mod duration;
pub mod gate;
pub mod resp;
pub mod sha1;
pub mod transport;
