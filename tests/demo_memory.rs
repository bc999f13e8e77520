//! The demo memory seeds through real validation, is idempotent, and ships its labelled set.

mod common;

use common::*;
use serde_json::Value;
use strata::demo::{self, LabelledQuery};
use strata::store::MemoryStore;

#[test]
fn seeding_is_consistent_and_idempotent() {
    let (_d, store) = temp_store();
    let first = demo::seed(&store).unwrap();
    assert!((290..=310).contains(&first.new_episodes), "{first:?}");
    assert!(first.new_supersessions >= 4);
    let stats = store.stats().unwrap();
    assert!(store.check().unwrap().is_consistent());
    let second = demo::seed(&store).unwrap();
    assert_eq!(second.new_episodes, 0);
    assert_eq!(store.stats().unwrap(), stats);
}

#[test]
fn shipped_labels_match_the_generator() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(demo::LABELS_PATH);
    let generated = demo::generate().labels;
    if std::env::var_os("STRATA_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(
            &path,
            serde_json::to_string_pretty(&generated).unwrap() + "\n",
        )
        .unwrap();
    }
    let shipped: Vec<LabelledQuery> =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(
        shipped, generated,
        "regenerate with STRATA_BLESS=1 cargo test --test demo_memory"
    );
    assert_eq!(shipped.len(), 9);
}

#[test]
fn first_launch_seeds_and_says_so() {
    // The explorer's launch path (the same opener as `strata` in a terminal, see tests/tmux.rs).
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("first.tape");
    std::fs::write(&script, "WaitIdle\nExpect \"seeded the demo memory\"\n").unwrap();
    let run = || {
        strata(
            dir.path(),
            &[
                "--now",
                "2026-12-01T00:00:00Z",
                "headless",
                "--demo",
                "--script",
                script.to_str().unwrap(),
                "--out",
                dir.path().to_str().unwrap(),
            ],
        )
    };
    let out = run();
    assert!(out.status.success(), "{}", stderr(&out));
    let again = run();
    assert!(!again.status.success(), "seeds only an empty store");
    assert!(stderr(&again).contains("does not contain \"seeded the demo memory\""));
    let stats: Value =
        serde_json::from_slice(&strata(dir.path(), &["stats", "--json"]).stdout).unwrap();
    assert_eq!(stats["episodes"], 300);
}

/// The hubs the graph leg reads before the first query: every entity with at least `min`
/// facts, most linked first.
#[test]
fn the_embedded_store_names_its_hubs_most_linked_first() {
    let (_d, store) = temp_store();
    demo::seed(&store).unwrap();
    let min = 10;
    let hubs = store
        .hubs(min)
        .unwrap()
        .expect("the embedded store counts its hubs");
    let counts: Vec<usize> = hubs
        .iter()
        .map(|h| store.entity_facts(h).unwrap().len())
        .collect();
    assert!(!hubs.is_empty());
    assert!(counts.windows(2).all(|w| w[0] >= w[1]), "{counts:?}");
    let expected = store
        .entities()
        .unwrap()
        .into_iter()
        .filter(|e| store.entity_facts(e).unwrap().len() >= min as usize)
        .count();
    assert_eq!(hubs.len(), expected);
}
