//! Validation of the raw tree into a [`Scenario`]: sections, defaults,
//! per-host overrides, TTL multiples, faults and the nemesis.

use std::collections::BTreeMap;
use std::time::Duration;

use super::check::*;
use super::clients::{apply_client_keys, default_client, CLIENT_HOST_KEYS, CLIENT_KEYS};
use super::raw::{RawKind, RawTable};
use super::sweep::sweep;
use super::types::*;
use redlock_proto::duration;

const TOP_KEYS: &[&str] = &[
    "name",
    "description",
    "seed",
    "duration",
    "tick",
    "expect",
    "cluster",
    "network",
    "clients",
    "clocks",
    "hosts",
    "faults",
    "nemesis",
    "sweep",
];
const CLUSTER_KEYS: &[&str] = &[
    "topology",
    "nodes",
    "replication_delay",
    "failover_after",
    "persistence",
    "restart",
];
const NETWORK_KEYS: &[&str] = &["latency"];
const OTHER_HOST_KEYS: &[&str] = &["clock_rate", "clock_offset"];
const CLOCKS_KEYS: &[&str] = &["drift", "offset"];
const NEMESIS_KEYS: &[&str] = &[
    "crash_every",
    "crash_target",
    "kill_every",
    "partition_every",
    "partition_for",
    "pause_every",
    "pause_for",
    "clock_jump_every",
    "clock_jump",
    "clock_jump_target",
    "aim",
];

/// Keys of each fault kind: (`do`, required, optional), besides `at`, `do`, `after`.
const FAULT_KEYS: &[(&str, &[&str], &[&str])] = &[
    ("crash", &["host"], &["restart"]),
    ("kill", &["host"], &["restart"]),
    ("restart", &["host"], &[]),
    ("partition", &["sides"], &["oneway", "for"]),
    ("isolate", &["host"], &["for"]),
    ("heal", &[], &[]),
    ("pause", &["host", "for"], &[]),
    ("clock-jump", &["host", "by"], &[]),
    ("clock-rate", &["host", "rate"], &[]),
    ("latency", &["between", "latency"], &["for"]),
];

/// Clock keys of a `[hosts.X]` table, if any.
fn host_clock(cx: &FileErrors, t: &TableAt) -> Checked<Option<HostClock>> {
    let clock_rate = match t.get("clock_rate") {
        Some(v) => Some(rate(cx, &v)?),
        None => None,
    };
    let clock_offset = match t.get("clock_offset") {
        Some(v) => Some(v.signed_range(cx)?),
        None => None,
    };
    Ok(
        (clock_rate.is_some() || clock_offset.is_some()).then_some(HostClock {
            clock_rate,
            clock_offset,
        }),
    )
}

/// A clock rate, in [`MIN_CLOCK_RATE`, `MAX_CLOCK_RATE`].
fn rate(cx: &FileErrors, v: &ValueAt) -> Checked<f64> {
    let r = v.float(cx)?;
    if !(MIN_CLOCK_RATE..=MAX_CLOCK_RATE).contains(&r) {
        return Err(v.err(
            cx,
            format!(
                "{r:?} is out of range: a clock rate must be from {MIN_CLOCK_RATE} to {MAX_CLOCK_RATE}"
            ),
        ));
    }
    Ok(r)
}

/// The lower bound of a link's latency, with the key that sets it.
struct LatencyBound {
    lo: Duration,
    key: String,
    line: Option<usize>,
}

/// `tick` must be at least [`MIN_TICK`] (`tick_v` is the `tick` key, absent
/// for the default), and at most the smallest one-way latency any link can
/// have, or hops would be stretched to whole ticks. When `tick` is written
/// the error names it; when it is the default, the latency key.
fn check_tick(
    cx: &FileErrors,
    tick: Duration,
    tick_v: Option<&ValueAt>,
    bounds: &[LatencyBound],
) -> Checked<()> {
    if tick < MIN_TICK {
        if let Some(v) = tick_v {
            let text = v.duration_text(cx).unwrap_or_default();
            return Err(v.err(
                cx,
                format!("{text:?} is too short: the tick must be at least 100us (0.1ms)"),
            ));
        }
    }
    // The network's latency (written or the default) is always a bound.
    assert!(
        !bounds.is_empty(),
        "the tick is checked against no latency bound"
    );
    let Some(b) = bounds.iter().min_by_key(|b| b.lo) else {
        return Ok(());
    };
    if tick <= b.lo {
        return Ok(());
    }
    let (lo, t) = (duration::format(b.lo), duration::format(tick));
    let at = b.line.map(|l| format!(", line {l}")).unwrap_or_default();
    match tick_v {
        Some(v) => {
            let fix = if b.lo >= MIN_TICK {
                format!("use a tick of at most {lo}, or raise the latency's lower bound")
            } else {
                "raise the latency's lower bound to at least 0.1ms (the shortest tick)".to_string()
            };
            Err(v.err(
                cx,
                format!(
                    "the tick ({t}) is longer than the smallest one-way latency a link can have, {lo} (the lower bound of {}{at}): every hop would be stretched to a whole tick; {fix}",
                    b.key
                ),
            ))
        }
        None => {
            let fix = if b.lo >= MIN_TICK {
                format!("set `tick` to at most {lo} at the top level, or raise the lower bound")
            } else {
                "raise the lower bound to at least 0.1ms (the shortest tick)".to_string()
            };
            Err(cx.err(
                &b.key,
                b.line,
                format!(
                    "the lower bound {lo} is shorter than the tick ({t}, the default): every hop would be stretched to a whole tick; {fix}"
                ),
            ))
        }
    }
}

/// Validates a raw tree into a scenario; `file` names it and gives the
/// default name. The sections are read in this order, so the first error
/// reported is always the same.
pub(super) fn build(root: &RawTable, file: &str) -> Checked<Scenario> {
    let cx = FileErrors { file };
    let top = TableAt::root(root);
    top.check_keys(&cx, TOP_KEYS)?;
    let name = scenario_name(&cx, &top, file)?;
    let description = match top.get("description") {
        Some(v) => v.str(&cx)?.to_string(),
        None => String::new(),
    };
    let seed = match top.get("seed") {
        Some(v) => v.int_in(&cx, 0, i64::MAX)? as u64,
        None => 1,
    };
    let duration = match top.get("duration") {
        Some(v) => v.positive(&cx, None)?,
        None => return Err(cx.err(
            "duration",
            None,
            "required key `duration` is missing: add e.g. `duration = \"30s\"` at the top level",
        )),
    };
    let tick_v = top.get("tick");
    let tick = match &tick_v {
        Some(v) => v.positive(&cx, None)?,
        None => Duration::from_millis(1),
    };
    let expect = expect_of(&cx, &top)?;
    let cluster_t = top.table(&cx, "cluster")?;
    let mut cluster = cluster_of(&cx, cluster_t.as_ref())?;
    let mut latency_bounds = Vec::new();
    let network = network_of(&cx, &top, &mut latency_bounds)?;
    let universe = Hosts {
        nodes: cluster.nodes,
        clients: 0,
        single: cluster.topology == Topology::Single,
    };
    let ClientsAndHosts {
        clients,
        hosts,
        universe,
        base_ttl,
    } = clients_and_hosts(&cx, &top, universe)?;
    // Faults and hosts were checked against the clients that exist.
    assert_eq!(
        universe.clients,
        clients.len(),
        "the hosts a scenario names are not its clients"
    );
    super::clients::check(&cx, &top, &clients)?;
    let max_ttl = clients.iter().map(|c| c.ttl).max().unwrap_or(base_ttl);
    if let Some(v) = cluster_t.as_ref().and_then(|t| t.get("restart")) {
        cluster.restart = v.restart(&cx, max_ttl)?;
    }
    let clocks = clocks_of(&cx, &top)?;
    let faults = faults_of(&cx, &top, &universe, max_ttl, duration, &mut latency_bounds)?;
    check_tick(&cx, tick, tick_v.as_ref(), &latency_bounds)?;
    let nemesis = match top.table(&cx, "nemesis")? {
        Some(t) => Some(nemesis(&cx, &t, &universe)?),
        None => None,
    };
    let sweep = match top.table(&cx, "sweep")? {
        Some(t) => Some(sweep(&cx, &t)?),
        None => None,
    };
    Ok(Scenario {
        name,
        description,
        seed,
        duration,
        tick,
        expect,
        cluster,
        network,
        clients,
        clocks,
        hosts,
        faults,
        nemesis,
        sweep,
        max_ttl,
    })
}

/// `name`, or the file's stem: it names output directories, so it must be
/// a plain path component.
fn scenario_name(cx: &FileErrors, top: &TableAt, file: &str) -> Checked<String> {
    Ok(match top.get("name") {
        Some(v) => {
            let s = v.str(cx)?;
            if s.is_empty()
                || s.starts_with('.')
                || s.chars().any(|c| c == '/' || c == '\\' || c.is_control())
            {
                return Err(v.err(
                    cx,
                    format!("{s:?} cannot be used in output paths: it must be non-empty, not start with '.', and hold no '/', '\\' or control characters"),
                ));
            }
            s.to_string()
        }
        None => std::path::Path::new(file)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "scenario".to_string()),
    })
}

/// `expect` (default `safe`).
fn expect_of(cx: &FileErrors, top: &TableAt) -> Checked<Expect> {
    Ok(match top.get("expect") {
        Some(v) => v.choice(
            cx,
            &[
                ("safe", Expect::Safe),
                ("violation", Expect::Violation),
                ("degraded", Expect::Degraded),
            ],
        )?,
        None => Expect::Safe,
    })
}

/// `[cluster]`, but for `restart`, which needs the TTL (left `immediate`
/// here; the caller reads it once the clients are known).
fn cluster_of(cx: &FileErrors, cluster_t: Option<&TableAt>) -> Checked<Cluster> {
    if let Some(t) = cluster_t {
        t.check_keys(cx, CLUSTER_KEYS)?;
    }
    let cget = |key: &str| cluster_t.and_then(|t| t.get(key));
    let topology = match cget("topology") {
        Some(v) => v.choice(
            cx,
            &[("redlock", Topology::Redlock), ("single", Topology::Single)],
        )?,
        None => Topology::Redlock,
    };
    let nodes = match cget("nodes") {
        Some(v) => v.int_in(cx, 1, MAX_NODES as i64)? as usize,
        None => 5,
    };
    let replication_delay = match cget("replication_delay") {
        Some(v) => v.duration(cx, None)?,
        None => Duration::ZERO,
    };
    let failover_after = match cget("failover_after") {
        Some(v) => Some(v.duration(cx, None)?),
        None => None,
    };
    let persistence = match cget("persistence") {
        Some(v) => v.choice(
            cx,
            &[
                ("none", Persistence::None),
                ("everysec", Persistence::Everysec),
                ("always", Persistence::Always),
            ],
        )?,
        None => Persistence::None,
    };
    Ok(Cluster {
        topology,
        nodes,
        replication_delay,
        failover_after,
        persistence,
        restart: Restart::Immediate,
    })
}

/// `[network]`; its latency's lower bound joins `latency_bounds` (checked
/// against the tick).
fn network_of(
    cx: &FileErrors,
    top: &TableAt,
    latency_bounds: &mut Vec<LatencyBound>,
) -> Checked<Network> {
    let network = match top.table(cx, "network")? {
        Some(t) => {
            t.check_keys(cx, NETWORK_KEYS)?;
            Network {
                latency: match t.get("latency") {
                    Some(v) => {
                        let r = v.dur_range(cx)?;
                        latency_bounds.push(LatencyBound {
                            lo: r.lo,
                            key: v.path.clone(),
                            line: v.line(),
                        });
                        r
                    }
                    None => DurRange {
                        lo: Duration::from_millis(1),
                        hi: Duration::from_millis(5),
                    },
                },
            }
        }
        None => Network {
            latency: DurRange {
                lo: Duration::from_millis(1),
                hi: Duration::from_millis(5),
            },
        },
    };
    if latency_bounds.is_empty() {
        latency_bounds.push(LatencyBound {
            lo: network.latency.lo,
            key: "network.latency".to_string(),
            line: None,
        });
    }
    Ok(network)
}

/// What `[clients]` and `[hosts.X]` give.
struct ClientsAndHosts {
    /// Every client's spec, `c1` first.
    clients: Vec<ClientSpec>,
    /// The clocks of the hosts that set one.
    hosts: BTreeMap<String, HostClock>,
    /// The hosts that exist.
    universe: Hosts,
    /// The TTL of `[clients]` (each client may set its own).
    base_ttl: Duration,
}

/// `[clients]` and `[hosts.X]`.
fn clients_and_hosts(
    cx: &FileErrors,
    top: &TableAt,
    mut universe: Hosts,
) -> Checked<ClientsAndHosts> {
    let clients_t = top.table(cx, "clients")?;
    let mut base = default_client(0);
    let mut count = 2;
    if let Some(t) = &clients_t {
        t.check_keys(cx, CLIENT_KEYS)?;
        if let Some(v) = t.get("count") {
            count = v.int_in(cx, 1, MAX_CLIENTS as i64)? as usize;
        }
        apply_client_keys(cx, t, &mut base)?;
    }
    universe.clients = count;
    let mut clients: Vec<ClientSpec> = (1..=count)
        .map(|i| ClientSpec {
            name: format!("c{i}"),
            ..base.clone()
        })
        .collect();
    let mut hosts = BTreeMap::new();
    if let Some(t) = top.table(cx, "hosts")? {
        for e in &t.table.entries {
            let path = join("hosts", &e.key);
            let Some(kind) = universe.kind(&e.key) else {
                return Err(cx.err(&path, e.key_line.or(e.value.line), universe.unknown(&e.key)));
            };
            let Some(v) = t.get(&e.key) else { continue };
            let ht = v.table(cx, &format!("[{path}]"))?;
            match kind {
                Kind::Client(i) => {
                    ht.check_keys(cx, CLIENT_HOST_KEYS)?;
                    assert!(
                        (1..=clients.len()).contains(&i),
                        "[hosts.{}] is client {i} of {}",
                        e.key,
                        clients.len()
                    );
                    apply_client_keys(cx, &ht, &mut clients[i - 1])?;
                }
                _ => ht.check_keys(cx, OTHER_HOST_KEYS)?,
            }
            if let Some(clock) = host_clock(cx, &ht)? {
                hosts.insert(e.key.clone(), clock);
            }
        }
    }
    Ok(ClientsAndHosts {
        clients,
        hosts,
        universe,
        base_ttl: base.ttl,
    })
}

/// `[clocks]`.
fn clocks_of(cx: &FileErrors, top: &TableAt) -> Checked<Clocks> {
    let mut clocks = Clocks {
        drift: 0.0,
        offset: SignedRange::fixed(0.0),
    };
    if let Some(t) = top.table(cx, "clocks")? {
        t.check_keys(cx, CLOCKS_KEYS)?;
        if let Some(v) = t.get("drift") {
            let d = v.float(cx)?;
            let max = 1.0 - MIN_CLOCK_RATE;
            if !(0.0..=max).contains(&d) {
                return Err(v.err(
                    cx,
                    format!(
                        "{d:?} is out of range: drift must be from 0 to {max}, so that every clock rate (1 - drift to 1 + drift) is from {MIN_CLOCK_RATE} to {MAX_CLOCK_RATE}"
                    ),
                ));
            }
            clocks.drift = d;
        }
        if let Some(v) = t.get("offset") {
            clocks.offset = v.signed_range(cx)?;
        }
    }
    Ok(clocks)
}

/// `[[faults]]`; a latency fault's lower bound joins `latency_bounds`.
fn faults_of(
    cx: &FileErrors,
    top: &TableAt,
    universe: &Hosts,
    max_ttl: Duration,
    duration: Duration,
    latency_bounds: &mut Vec<LatencyBound>,
) -> Checked<Vec<Fault>> {
    let mut faults = Vec::new();
    if let Some(v) = top.get("faults") {
        if let RawKind::Table(_) = v.node.kind {
            return Err(v.err(
                cx,
                "faults must be an array of tables: write each one as [[faults]]",
            ));
        }
        for item in v.array(cx)? {
            let t = item.table(cx, "this [[faults]] entry")?;
            let f = fault(cx, &t, universe, max_ttl, duration)?;
            if let FaultAction::Latency { latency, .. } = &f.action {
                // `latency` is required: `fault` read it.
                let v = t.get("latency");
                assert!(v.is_some(), "a latency fault without `latency` passed");
                latency_bounds.extend(v.map(|v| LatencyBound {
                    lo: latency.lo,
                    key: v.path.clone(),
                    line: v.line(),
                }));
            }
            faults.push(f);
        }
    }
    Ok(faults)
}

/// One `[[faults]]` table.
fn fault(
    cx: &FileErrors,
    t: &TableAt,
    hosts: &Hosts,
    ttl: Duration,
    duration: Duration,
) -> Checked<Fault> {
    let (kind, t) = fault_table(cx, t)?;
    let at_v = t.require(cx, "at")?;
    let at = at_v.duration(cx, Some(ttl))?;
    if let Some((_, required, _)) = FAULT_KEYS.iter().find(|(k, _, _)| *k == kind) {
        for key in *required {
            t.require(cx, key)?;
        }
    }
    let action = fault_action(cx, &t, kind, hosts, ttl)?;
    let after = match t.get("after") {
        Some(v) => trigger(cx, &v, hosts)?,
        None => Trigger::Start,
    };
    if after == Trigger::Start && at > duration {
        return Err(at_v.err(
            cx,
            format!(
                "{} is beyond the scenario's duration ({}): the fault would never happen; move it within the duration, or make it follow a client's lock with `after`",
                duration::format(at),
                duration::format(duration)
            ),
        ));
    }
    Ok(Fault {
        at,
        after,
        line: t.line.unwrap_or(0),
        action,
    })
}

/// The fault's kind (`do`, one of [`FaultAction::KINDS`]) and its table,
/// named by its kind, checked for keys the kind does not take.
fn fault_table<'a>(cx: &FileErrors, t: &TableAt<'a>) -> Checked<(&'static str, TableAt<'a>)> {
    let do_v = t.require(cx, "do")?;
    let kind = do_v.str(cx)?;
    let Some((kind, required, optional)) = FAULT_KEYS.iter().find(|(k, _, _)| *k == kind) else {
        let hint = closest(kind, &FaultAction::KINDS)
            .map(|k| format!(" (did you mean \"{k}\"?)"))
            .unwrap_or_default();
        return Err(do_v.err(
            cx,
            format!(
                "unknown fault {kind:?}{hint}; `do` is one of: {}",
                FaultAction::KINDS.join(", ")
            ),
        ));
    };
    let mut allowed = vec!["at", "after", "do"];
    allowed.extend_from_slice(required);
    allowed.extend_from_slice(optional);
    let t = TableAt {
        path: t.path.clone(),
        table: t.table,
        line: t.line,
        what: format!("{} (do = \"{kind}\")", t.what),
    };
    t.check_keys(cx, &allowed)?;
    Ok((kind, t))
}

/// What a fault of `kind` does, from its table (its required keys are
/// there).
fn fault_action(
    cx: &FileErrors,
    t: &TableAt,
    kind: &str,
    hosts: &Hosts,
    ttl: Duration,
) -> Checked<FaultAction> {
    let get = |key: &str| {
        t.get(key)
            .ok_or_else(|| cx.err(&join(&t.path, key), t.line, "missing"))
    };
    let for_ = match t.get("for") {
        Some(v) => Some(v.duration(cx, Some(ttl))?),
        None => None,
    };
    let node_only = "crash, kill and restart apply to nodes (n1..nN) or \"master\"";
    Ok(match kind {
        "crash" | "kill" => FaultAction::Crash {
            host: hosts.target(cx, &get("host")?, is_node, node_only)?,
            restart: match t.get("restart") {
                Some(v) => Some(v.restart(cx, ttl)?),
                None => None,
            },
            kill: kind == "kill",
        },
        "restart" => FaultAction::Restart {
            host: hosts.target(cx, &get("host")?, is_node, node_only)?,
        },
        "partition" => {
            let oneway = match t.get("oneway") {
                Some(v) => v.bool(cx)?,
                None => false,
            };
            FaultAction::Partition {
                sides: sides(cx, &get("sides")?, hosts, oneway)?,
                oneway,
                for_,
            }
        }
        "isolate" => FaultAction::Isolate {
            host: hosts.target(cx, &get("host")?, any_host, "")?,
            for_,
        },
        "heal" => FaultAction::Heal,
        "pause" => FaultAction::Pause {
            host: hosts.target(
                cx,
                &get("host")?,
                pausable,
                "pause applies to a client, a node or the store",
            )?,
            for_: for_.unwrap_or_default(),
        },
        "clock-jump" => FaultAction::ClockJump {
            host: hosts.target(cx, &get("host")?, any_host, "")?,
            by_ms: get("by")?.signed_ms(cx)?,
        },
        "clock-rate" => FaultAction::ClockRate {
            host: hosts.target(cx, &get("host")?, any_host, "")?,
            rate: rate(cx, &get("rate")?)?,
        },
        _ => {
            // `kind` is one of FAULT_KEYS' (`fault_table`): the last.
            assert_eq!(kind, "latency", "a fault kind without its action");
            FaultAction::Latency {
                between: between(cx, &get("between")?, hosts)?,
                latency: get("latency")?.dur_range(cx)?,
                for_,
            }
        }
    })
}

/// A latency fault's `between`: two different hosts.
fn between(cx: &FileErrors, between: &ValueAt, hosts: &Hosts) -> Checked<(String, String)> {
    let items = between.array(cx)?;
    if items.len() != 2 {
        return Err(between.err(
            cx,
            format!("`between` names exactly two hosts, not {}", items.len()),
        ));
    }
    let (a, _) = hosts.host(cx, &items[0])?;
    let (b, _) = hosts.host(cx, &items[1])?;
    if a == b {
        return Err(between.err(
            cx,
            format!("`between` needs two different hosts, not {a:?} twice"),
        ));
    }
    Ok((a, b))
}

/// `after = "c1:acquired"`.
fn trigger(cx: &FileErrors, v: &ValueAt, hosts: &Hosts) -> Checked<Trigger> {
    let s = v.str(cx)?;
    let usage = "write it as \"CLIENT:EVENT\", like \"c1:acquired\", with EVENT one of acquired, released, lost (or \"c1:lock_call@1864ms\": the first acquired, extended, release_start or lock_call at or after a time)";
    let Some((client, event)) = s.split_once(':') else {
        return Err(v.err(cx, format!("{s:?} is not a trigger: {usage}")));
    };
    match hosts.kind(client) {
        Some(Kind::Client(_)) => {}
        Some(_) => {
            return Err(v.err(
                cx,
                format!("{client:?} is not a client; triggers follow a client's lock"),
            ))
        }
        None => return Err(v.err(cx, hosts.unknown(client))),
    }
    let client = client.to_string();
    if let Some((event, from)) = event.split_once('@') {
        return instant_trigger(cx, v, client, event, from);
    }
    match event {
        "acquired" => Ok(Trigger::Acquired(client)),
        "released" => Ok(Trigger::Released(client)),
        "lost" => Ok(Trigger::Lost(client)),
        _ => Err(v.err(cx, format!("unknown event {event:?}: {usage}"))),
    }
}

/// `after = "c4:lock_call@8462ms"`: the first `event` of `client` at or
/// after `from`.
fn instant_trigger(
    cx: &FileErrors,
    v: &ValueAt,
    client: String,
    event: &str,
    from: &str,
) -> Checked<Trigger> {
    if !AIMED_EVENTS.contains(&event) {
        let events = AIMED_EVENTS.join(", ");
        let m = format!("unknown event {event:?} before '@': one of {events}");
        return Err(v.err(cx, m));
    }
    let from = duration::parse(from)
        .map_err(|e| v.err(cx, format!("{from:?} after '@' is not a time: {e}")))?;
    Ok(Trigger::Event {
        host: client,
        event: event.to_string(),
        from,
    })
}

/// A partition's `sides`.
fn sides(cx: &FileErrors, v: &ValueAt, hosts: &Hosts, oneway: bool) -> Checked<Vec<Vec<String>>> {
    let list = v.array(cx)?;
    if list.len() < 2 {
        return Err(v.err(
            cx,
            "a partition needs at least two sides, e.g. sides = [[\"c1\"], [\"n1\", \"n2\"]]",
        ));
    }
    if oneway && list.len() != 2 {
        return Err(v.err(
            cx,
            format!(
                "a oneway partition has exactly two sides, not {}",
                list.len()
            ),
        ));
    }
    let mut seen: BTreeMap<String, usize> = BTreeMap::new();
    let mut out = Vec::new();
    for (i, side) in list.iter().enumerate() {
        let names = side.array(cx)?;
        if names.is_empty() {
            return Err(side.err(cx, "a side must list at least one host"));
        }
        let mut hs = Vec::new();
        for n in &names {
            let (name, _) = hosts.host(cx, n)?;
            if let Some(j) = seen.insert(name.clone(), i) {
                let msg = if j == i {
                    format!("host {name:?} is listed twice on side {}", i + 1)
                } else {
                    format!("host {name:?} is on two sides ({} and {})", j + 1, i + 1)
                };
                return Err(n.err(cx, msg));
            }
            hs.push(name);
        }
        out.push(hs);
    }
    Ok(out)
}

/// `[nemesis]`, defaults as documented on [`Nemesis`].
fn nemesis(cx: &FileErrors, t: &TableAt, hosts: &Hosts) -> Checked<Nemesis> {
    t.check_keys(cx, NEMESIS_KEYS)?;
    let every = |key: &str| -> Checked<Option<Duration>> {
        match t.get(key) {
            Some(v) => {
                let d = v.duration(cx, None)?;
                if d.is_zero() {
                    return Err(v.err(cx, "must be more than zero; leave the key out for never"));
                }
                Ok(Some(d))
            }
            None => Ok(None),
        }
    };
    let range = |key: &str, lo: u64, hi: u64| -> Checked<DurRange> {
        match t.get(key) {
            Some(v) => v.dur_range(cx),
            None => Ok(DurRange {
                lo: Duration::from_millis(lo),
                hi: Duration::from_millis(hi),
            }),
        }
    };
    let crash_target = match t.get("crash_target") {
        Some(v) => {
            let target = v.choice(
                cx,
                &[("node", CrashTarget::Node), ("master", CrashTarget::Master)],
            )?;
            if target == CrashTarget::Master && !hosts.single {
                return Err(v.err(
                    cx,
                    "\"master\" needs cluster.topology = \"single\" (redlock has no master)",
                ));
            }
            target
        }
        None => CrashTarget::Node,
    };
    Ok(Nemesis {
        crash_every: every("crash_every")?,
        crash_target,
        kill_every: every("kill_every")?,
        partition_every: every("partition_every")?,
        partition_for: range("partition_for", 1000, 5000)?,
        pause_every: every("pause_every")?,
        pause_for: range("pause_for", 100, 2000)?,
        clock_jump_every: every("clock_jump_every")?,
        clock_jump: match t.get("clock_jump") {
            Some(v) => v.signed_range(cx)?,
            None => SignedRange {
                lo_ms: -2000.0,
                hi_ms: 2000.0,
            },
        },
        clock_jump_target: match t.get("clock_jump_target") {
            Some(v) => v.choice(
                cx,
                &[
                    ("node", JumpTarget::Node),
                    ("client", JumpTarget::Client),
                    ("any", JumpTarget::Any),
                ],
            )?,
            None => JumpTarget::Node,
        },
        aim: match t.get("aim") {
            Some(v) => v.choice(cx, &[("random", Aim::Random), ("lock", Aim::Lock)])?,
            None => Aim::Random,
        },
    })
}
