//! One instance the sentinel monitors (the master, or one of its
//! replicas), as Redis Sentinel's `sentinelRedisInstance` holds it: its
//! link, what its last `INFO` said (`sentinelRefreshInstanceInfo`'s
//! reading), and its flags.

use super::link::Link;
use std::time::Duration;

/// The role an instance's `INFO` reported.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Role {
    Master,
    Replica,
}

/// Where a replica stands in a failover's reconfiguration
/// (`SRI_RECONF_SENT`, `_INPROG`, `_DONE`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Reconf {
    None,
    /// `SLAVEOF <promoted>` sent at this time.
    Sent(Duration),
    InProgress,
    Done,
}

pub(crate) struct Instance {
    /// A number of its own, never reused: deliveries name it.
    pub(crate) uid: u64,
    /// `host:port`, as the sentinel reaches it.
    pub(crate) addr: String,
    pub(crate) link: Link,
    /// When its last `INFO` reply was read (none yet: `None`).
    pub(crate) info_refresh: Option<Duration>,
    pub(crate) role_reported: Role,
    pub(crate) role_reported_time: Duration,
    pub(crate) slave_conf_change_time: Duration,
    /// `master_link_down_since_seconds`, in ms; zero when absent, -1000
    /// when the link never came up (the replica prints -1), as Sentinel
    /// keeps it: anything but zero asks `INFO` every second.
    pub(crate) master_link_down_ms: i64,
    /// A replica's master as its `INFO` names it (`master_host`,
    /// `master_port`).
    pub(crate) slave_master: Option<(String, String)>,
    pub(crate) master_link_up: bool,
    pub(crate) priority: i64,
    pub(crate) repl_offset: i64,
    pub(crate) run_id: Option<String>,
    pub(crate) s_down: bool,
    /// When it last went subjectively down (kept after `-sdown`).
    pub(crate) s_down_since: Option<Duration>,
    pub(crate) promoted: bool,
    pub(crate) reconf: Reconf,
}

/// The fields of an `INFO` reply Sentinel reads.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Info {
    pub(crate) role: Option<Role>,
    pub(crate) run_id: Option<String>,
    pub(crate) master_host: Option<String>,
    pub(crate) master_port: Option<String>,
    pub(crate) master_link_up: Option<bool>,
    pub(crate) master_link_down_secs: Option<i64>,
    pub(crate) priority: Option<i64>,
    pub(crate) repl_offset: Option<i64>,
}

impl Info {
    /// Reads `INFO`'s text, line by line, as Sentinel does.
    pub(crate) fn parse(text: &str) -> Info {
        let mut info = Info::default();
        for line in text.split("\r\n") {
            let Some((key, value)) = line.split_once(':') else {
                continue;
            };
            match key {
                "run_id" => info.run_id = value.get(..40).map(str::to_string),
                "role" if value == "master" => info.role = Some(Role::Master),
                "role" if value == "slave" => info.role = Some(Role::Replica),
                "master_host" => info.master_host = Some(value.to_string()),
                "master_port" => info.master_port = Some(value.to_string()),
                "master_link_status" => {
                    info.master_link_up = Some(value.eq_ignore_ascii_case("up"))
                }
                "master_link_down_since_seconds" => {
                    info.master_link_down_secs = Some(leading_int(value))
                }
                "slave_priority" => info.priority = Some(leading_int(value)),
                "slave_repl_offset" => info.repl_offset = Some(leading_int(value)),
                _ => {}
            }
        }
        info
    }
}

/// `atoi`: the leading integer, 0 if none.
fn leading_int(s: &str) -> i64 {
    let end = s
        .char_indices()
        .find(|&(i, c)| !(c.is_ascii_digit() || (i == 0 && c == '-')))
        .map_or(s.len(), |(i, _)| i);
    s[..end].parse().unwrap_or(0)
}

impl Instance {
    /// A new instance (`createSentinelRedisInstance`) of `role`, at `now`.
    pub(crate) fn new(uid: u64, addr: &str, role: Role, now: Duration) -> Instance {
        Instance {
            uid,
            addr: addr.to_string(),
            link: Link::new(now),
            info_refresh: None,
            role_reported: role,
            role_reported_time: now,
            slave_conf_change_time: now,
            master_link_down_ms: 0,
            slave_master: None,
            master_link_up: false,
            priority: 100,
            repl_offset: 0,
            run_id: None,
            s_down: false,
            s_down_since: None,
            promoted: false,
            reconf: Reconf::None,
        }
    }

    /// Takes in an `INFO` reply read at `now` (the reading half of
    /// `sentinelRefreshInstanceInfo`); returns the role it reported, if
    /// it changed.
    pub(crate) fn refresh(&mut self, info: &Info, now: Duration) -> Option<Role> {
        if info.run_id.is_some() {
            self.run_id.clone_from(&info.run_id);
        }
        self.master_link_down_ms = info.master_link_down_secs.unwrap_or(0).saturating_mul(1000);
        if info.role == Some(Role::Replica) {
            let reported = (
                info.master_host.clone().unwrap_or_default(),
                info.master_port.clone().unwrap_or_default(),
            );
            let same = self.slave_master.as_ref().is_some_and(|(h, p)| {
                h.eq_ignore_ascii_case(&reported.0) && leading_int(p) == leading_int(&reported.1)
            });
            if !same {
                self.slave_master = Some(reported);
                self.slave_conf_change_time = now;
            }
            if let Some(up) = info.master_link_up {
                self.master_link_up = up;
            }
            if let Some(p) = info.priority {
                self.priority = p;
            }
            if let Some(o) = info.repl_offset {
                self.repl_offset = o;
            }
        }
        self.info_refresh = Some(now);
        let role = info.role?;
        if role == self.role_reported {
            return None;
        }
        self.role_reported = role;
        self.role_reported_time = now;
        if role == Role::Replica {
            self.slave_conf_change_time = now;
        }
        Some(role)
    }

    /// Whether it replicates from `addr` (`host:port`) by its last `INFO`:
    /// the host without regard to case, the port as a number. (Sentinel
    /// also resolves a host name to compare addresses; the nodes name
    /// their master as they were told.)
    pub(crate) fn replicates(&self, addr: &str) -> bool {
        let (host, port) = super::split_addr(addr);
        self.slave_master.as_ref().is_some_and(|(h, p)| {
            h.eq_ignore_ascii_case(host) && leading_int(p) == leading_int(port)
        })
    }

    /// `sentinelRedisInstanceNoDownFor`: not down in the last `d`.
    pub(crate) fn no_down_for(
        &self,
        d: Duration,
        o_down_since: Option<Duration>,
        now: Duration,
    ) -> bool {
        let recent = self.s_down_since.max(o_down_since);
        recent.is_none_or(|t| now.saturating_sub(t) > d)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn info_is_read_as_sentinel_reads_it() {
        let text = "# Server\r\nrun_id:0123456789012345678901234567890123456789\r\n\
                    # Replication\r\nrole:slave\r\nmaster_host:n1\r\nmaster_port:6379\r\n\
                    master_link_status:down\r\nmaster_link_down_since_seconds:7\r\n\
                    slave_repl_offset:42\r\nslave_priority:0\r\n";
        let info = Info::parse(text);
        assert_eq!(info.role, Some(Role::Replica));
        assert_eq!(
            info.run_id.as_deref(),
            Some("0123456789012345678901234567890123456789")
        );
        assert_eq!(info.master_host.as_deref(), Some("n1"));
        assert_eq!(info.master_link_up, Some(false));
        assert_eq!(info.master_link_down_secs, Some(7));
        assert_eq!((info.repl_offset, info.priority), (Some(42), Some(0)));
        let mut r = Instance::new(1, "n2:6379", Role::Replica, Duration::ZERO);
        assert_eq!(r.refresh(&info, Duration::from_secs(3)), None);
        assert!(r.replicates("n1:6379") && !r.replicates("n3:6379"));
        assert_eq!(r.master_link_down_ms, 7000);
        assert_eq!(r.slave_conf_change_time, Duration::from_secs(3));
        let master = Info::parse("role:master\r\n");
        assert_eq!(
            r.refresh(&master, Duration::from_secs(4)),
            Some(Role::Master)
        );
        assert_eq!(r.role_reported_time, Duration::from_secs(4));
        // Bytes that are not UTF-8 do not break the reading.
        let odd =
            String::from_utf8_lossy(b"run_id:\xff\xff0123456789012345678901234567890123456789\r\n");
        assert!(Info::parse(&odd).run_id.is_some());
        assert_eq!(Info::parse("run_id:short\r\n").run_id, None);
        let never = Info::parse("role:slave\r\nmaster_link_down_since_seconds:-1\r\n");
        r.refresh(&never, Duration::from_secs(5));
        assert_eq!(r.master_link_down_ms, -1000);
        assert_eq!(leading_int("12abc"), 12);
        assert_eq!(leading_int("-1"), -1);
        assert_eq!(leading_int("x"), 0);
    }
}
