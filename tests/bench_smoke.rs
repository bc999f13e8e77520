//! The benchmark commands run end to end at 10k episodes or fewer (the size CI can afford; the
//! figures in docs/benchmarks.md come from release builds at up to a million) and report what they
//! promise. Nothing here is timed: speed is judged by the benches themselves.

use std::process::Command;

fn bench(args: &[&str]) -> serde_json::Value {
    let scratch = tempfile::tempdir().unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_strata"))
        .env("STRATA_EMBEDDER", "hash")
        .arg("--data")
        .arg(scratch.path())
        .arg("bench")
        .args(args)
        .args(["--dir", scratch.path().to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "strata bench {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
    json["results"][0].clone()
}

#[test]
fn bench_store_reports_its_size_per_table() {
    let r = bench(&["store", "--episodes", "10000"]);
    assert_eq!(r["episodes"], 10000);
    let tables = r["tables"].as_array().unwrap();
    let total: u64 = tables.iter().map(|t| t["bytes"].as_u64().unwrap()).sum();
    assert!(total > 0 && total <= r["db_bytes"].as_u64().unwrap(), "{r}");
    assert!(
        tables
            .iter()
            .any(|t| t["table"] == "episodes" && t["entries"] == 10000),
        "{r}"
    );
}

#[test]
fn bench_recall_opens_a_memory_another_process_built() {
    let r = bench(&["recall", "--episodes", "10000", "--queries", "20"]);
    assert_eq!(r["legs_not_ok"], 0, "{r}");
    assert!(r["index_build_seconds"].as_f64().unwrap() > 0.0, "{r}");
    assert!(r["index_build_peak_rss_bytes"].as_u64().unwrap() > 0, "{r}");
    assert!(r["recall_peak_rss_bytes"].as_u64().unwrap() > 0, "{r}");
    assert!(r["fused_ms"]["max"].as_f64().unwrap() > 0.0, "{r}");
}

#[test]
fn bench_explorer_reports_its_own_peak_memory() {
    let r = bench(&["explorer", "--episodes", "10000", "--frames", "30"]);
    assert!(r["peak_rss_bytes"].as_u64().unwrap() > 0, "{r}");
    assert!(r["jump_to_oldest_ms"].as_f64().unwrap() > 0.0, "{r}");
}

#[test]
fn bench_transfer_reports_each_process_with_its_peak_memory() {
    let r = bench(&["transfer", "--episodes", "2000"]);
    assert_eq!(r["episodes"], 2000);
    assert!(r["export_file_bytes"].as_u64().unwrap() > 0, "{r}");
    assert!(r["backup_bytes"].as_u64().unwrap() > 0, "{r}");
    for step in ["export", "restore", "backup"] {
        assert!(r[step]["rate"].as_f64().unwrap() > 0.0, "{step}: {r}");
        let peak = r[step]["peak_rss_bytes"].as_u64().unwrap();
        assert!(peak > 0, "{step}: {r}");
        assert!(
            r[step]["peak_anon_bytes"].as_u64().unwrap() <= peak,
            "{step}: {r}"
        );
    }
}
