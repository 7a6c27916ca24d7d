//! `PUBLISH`, for the lock libraries that announce a release on a channel
//! (Redisson's unlock script publishes to `redisson_lock__channel:{name}`
//! to wake its waiting threads). The node has no `SUBSCRIBE`: nobody can
//! listen, so a message reaches no one and `PUBLISH` answers 0, the number
//! of clients that received it, as Redis answers it with no subscriber.

use super::keyspace::Keyspace;
use bytes::Bytes;
use redlock_proto::resp::Frame;

/// `PUBLISH channel message`: received by no one.
pub(crate) fn publish(_: &mut Keyspace, _: &[Bytes], _: i64) -> Frame {
    Frame::Integer(0)
}
