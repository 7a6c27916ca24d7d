//! The shipped recipes that spread a matrix over machines (docs/lab.md,
//! "Shards"): the GitHub Actions workflow passes actionlint and runs every
//! shard it merges; the Kubernetes Indexed Job's completion index is the
//! shard, and the merge Job joins every shard it wrote. (GNU parallel's
//! recipe, scripts/matrix-shards.sh, runs a small matrix in
//! tests/lab/matrix.rs.)

use std::process::Command;
use yaml_rust2::{Yaml, YamlLoader};

const WORKFLOW: &str = ".github/workflows/matrix-shards.yml";

fn yaml(path: &str) -> Yaml {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let mut docs = YamlLoader::load_from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
    assert_eq!(docs.len(), 1, "{path}: one document");
    docs.remove(0)
}

#[test]
fn the_workflow_passes_actionlint_and_merges_every_shard_it_runs() {
    // actionlint, pinned by tools/go.mod's tool directive (and go.sum).
    let out = Command::new("go")
        .args(["tool", "actionlint", &format!("../{WORKFLOW}")])
        .current_dir("tools")
        .output();
    let out = out.unwrap_or_else(|e| {
        panic!("go is missing ({e}): `bash scripts/test.sh` names how to install it")
    });
    assert!(
        out.status.success(),
        "actionlint ({}): `bash scripts/test.sh` builds it from tools/go.mod\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let w = yaml(WORKFLOW);
    let n = w["env"]["SHARDS"].as_i64().expect("env.SHARDS");
    let shards: Vec<i64> = w["jobs"]["shard"]["strategy"]["matrix"]["shard"]
        .as_vec()
        .expect("a job matrix over the shards")
        .iter()
        .filter_map(Yaml::as_i64)
        .collect();
    assert_eq!(shards, (1..=n).collect::<Vec<_>>(), "one job per shard");
    let steps = w["jobs"]["shard"]["steps"].as_vec().unwrap();
    let run = steps
        .iter()
        .filter_map(|s| s["run"].as_str())
        .find(|r| r.contains("--shard"))
        .expect("a step runs the shard");
    assert!(
        run.contains("--shard \"${{ matrix.shard }}/${SHARDS}\""),
        "{run}"
    );
    let merge = w["jobs"]["merge"].clone();
    assert_eq!(merge["needs"].as_str(), Some("shard"));
    let merged = merge["steps"]
        .as_vec()
        .unwrap()
        .iter()
        .filter_map(|s| s["run"].as_str())
        .any(|r| r.contains("redlock-sim merge shards/shard-*"));
    assert!(merged, "the merge job merges every shard");
}

#[test]
fn the_kubernetes_jobs_run_every_shard_and_merge_them() {
    let job = yaml("deploy/k8s/matrix-job.yaml");
    assert_eq!(job["kind"].as_str(), Some("Job"));
    let spec = &job["spec"];
    assert_eq!(spec["completionMode"].as_str(), Some("Indexed"));
    let n = spec["completions"].as_i64().expect("completions");
    assert_eq!(spec["parallelism"].as_i64(), Some(n), "every shard at once");
    let pod = &spec["template"]["spec"];
    let shard = &pod["containers"][0];
    let script = shard["args"][0].as_str().expect("the shard's script");
    assert!(
        script.contains("k=$((JOB_COMPLETION_INDEX + 1))"),
        "{script}"
    );
    assert!(script.contains(&format!("--shard \"$k/{n}\"")), "{script}");
    assert!(script.contains("--out \"/results/shard-$k\""), "{script}");
    let merge = yaml("deploy/k8s/merge-job.yaml");
    let command: Vec<&str> = merge["spec"]["template"]["spec"]["containers"][0]["command"]
        .as_vec()
        .expect("the merge's command")
        .iter()
        .filter_map(Yaml::as_str)
        .collect();
    let mut want = vec![
        "target/release/redlock-sim".to_string(),
        "merge".to_string(),
    ];
    want.extend((1..=n).map(|k| format!("/results/shard-{k}")));
    want.extend(["--out".to_string(), "/results/merged".to_string()]);
    assert_eq!(command, want);
    let claim = |y: &Yaml| {
        y["spec"]["template"]["spec"]["volumes"][0]["persistentVolumeClaim"]["claimName"]
            .as_str()
            .map(str::to_string)
    };
    assert!(claim(&job).is_some());
    assert_eq!(claim(&job), claim(&merge), "both jobs share the results");
}
