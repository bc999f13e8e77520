//! Corrections from the explorer's keys, and the review and changes views: a retraction
//! typed in the lineage pane is in the store for another process to read, a refusal is said
//! in the status bar, and no reviewer's text reaches the terminal raw.

mod common;

use common::{explorer, play, stderr, stdout, strata};
use serde_json::Value;
use strata::model::Supersession;
use strata::store::MemoryStore;
use strata::store::embedded::EmbeddedStore;

const NOW: &str = "2026-12-01T00:00:00Z";
const HOSTILE: &str = "\u{1b}]0;PWNED\u{7}\u{1b}[2J\u{9b}31m\r\u{202e}desrever\u{2066}";

/// A demo store, and its first supersession in knowledge-time order (the review view's
/// first row).
fn seeded() -> (tempfile::TempDir, Supersession) {
    let dir = tempfile::tempdir().unwrap();
    let store = EmbeddedStore::open(dir.path()).unwrap();
    strata::demo::seed(&store).unwrap();
    let rows = strata::query::review(&store, common::ts(NOW), false).unwrap();
    let first = rows.first().expect("the demo memory has supersessions");
    let link = store
        .supersedes(&first.episode)
        .unwrap()
        .into_iter()
        .find(|s| s.prior == first.prior && s.entity.entity_ref == first.entity_ref)
        .unwrap();
    (dir, link)
}

/// `strata review --json`, run as a process of its own.
fn review_from_another_process(dir: &std::path::Path) -> Vec<Value> {
    let out = strata(dir, &["review", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    serde_json::from_str(&stdout(&out)).unwrap()
}

fn row_of<'a>(rows: &'a [Value], link: &Supersession) -> &'a Value {
    rows.iter()
        .find(|r| {
            r["episode"] == link.episode.as_str()
                && r["prior"] == link.prior.as_str()
                && r["entity_ref"] == link.entity.entity_ref.as_str()
        })
        .unwrap_or_else(|| panic!("no review row for {link:?}"))
}

/// Keys down to the lineage row linking to `prior`, in the lineage pane of `episode`,
/// zoomed so that its verdicts show whole.
fn to_lineage_link(s: &mut strata::headless::Session, link: &Supersession) {
    play(
        s,
        &format!(
            "WaitIdle\nAction select {}\nWaitIdle\nKey 5\n",
            link.episode
        ),
    );
    let rows = s.app().panes.lineage.rows();
    let index = rows
        .iter()
        .position(|r| !r.later && r.link.prior == link.prior)
        .unwrap();
    drop(rows);
    if index > 0 {
        play(s, &format!("Key Down {index}\n"));
    }
    play(s, "Key z\n");
}

#[test]
fn a_retraction_typed_in_the_lineage_pane_is_read_by_another_process() {
    let (dir, link) = seeded();
    let before = review_from_another_process(dir.path());
    assert_eq!(row_of(&before, &link)["verdict"], "unreviewed");

    let mut s = explorer(dir.path(), 200, 60);
    to_lineage_link(&mut s, &link);
    let prompt = play(&mut s, "Key x\nType \"collateral: another fault\"\n");
    assert!(prompt.contains("Retract a supersession"), "{prompt}");
    assert!(prompt.contains(&link.prior), "{prompt}");
    // Nothing is written before the confirmation.
    let asked = play(&mut s, "Key Enter\n");
    assert!(asked.contains("y records it"), "{asked}");
    assert_eq!(
        row_of(&review_from_another_process(dir.path()), &link)["verdict"],
        "unreviewed"
    );
    let done = play(&mut s, "Key y\nWaitIdle\n");
    assert!(
        done.contains("recorded at K 2026-12-01T00:00:00") && done.contains("1 retracted"),
        "{done}"
    );
    assert!(done.contains("retracted by reviewer"), "{done}");

    let after = review_from_another_process(dir.path());
    let row = row_of(&after, &link);
    assert_eq!(row["verdict"], "retracted", "{row}");
    assert_eq!(row["review"]["by"], "reviewer");
    assert_eq!(row["review"]["reason"], "collateral: another fault");
    assert_eq!(row["review"]["recorded_at"], "2026-12-01T00:00:00Z");

    // As of a K before the retraction, the review view shows what was believed then.
    let earlier = play(
        &mut s,
        "Key 7\nWaitIdle\nAction asof.known 2026-11-30T00:00:00Z\nWaitIdle\n",
    );
    assert!(!earlier.contains("retracted by reviewer"), "{earlier}");
    assert!(earlier.contains("0 retracted"), "{earlier}");
}

#[test]
fn cancelling_writes_nothing_and_a_refusal_is_said_in_the_status_bar() {
    let (dir, link) = seeded();
    let mut s = explorer(dir.path(), 200, 60);
    to_lineage_link(&mut s, &link);
    let cancelled = play(&mut s, "Key x\nType \"no\"\nKey Esc\n");
    assert!(cancelled.contains("correction cancelled"), "{cancelled}");

    // Another reviewer gets there first, from another process.
    let file = dir.path().join("first.ndjson");
    std::fs::write(
        &file,
        format!(
            "{{\"retract_supersession\": {{\"episode\": {:?}, \"prior\": {:?}, \"entity_type\": {:?}, \"entity_ref\": {:?}}}, \"reason\": \"seen first\", \"by\": \"ana\"}}\n",
            link.episode, link.prior, link.entity.entity_type, link.entity.entity_ref
        ),
    )
    .unwrap();
    let out = strata(
        dir.path(),
        &["--now", NOW, "correct", file.to_str().unwrap()],
    );
    assert!(out.status.success(), "{}", stderr(&out));

    let refused = play(
        &mut s,
        "Key x\nType \"mine too\"\nKey Enter\nKey y\nWaitIdle\n",
    );
    assert!(
        refused.contains("refused, nothing was written"),
        "{refused}"
    );
    assert!(refused.contains("already retracted by ana"), "{refused}");
    let rows = review_from_another_process(dir.path());
    assert_eq!(row_of(&rows, &link)["review"]["by"], "ana");
    // The live view followed the other process: the lineage shows its verdict and says
    // what changed under the selection.
    assert!(refused.contains("retracted by ana"), "{refused}");
    assert!(
        refused.contains("updated: a reviewer retracted"),
        "{refused}"
    );
}

#[test]
fn an_episode_summary_is_corrected_from_the_facts_pane() {
    let (dir, link) = seeded();
    let mut s = explorer(dir.path(), 200, 60);
    play(
        &mut s,
        &format!("WaitIdle\nAction select {}\nWaitIdle\nKey 2\n", link.prior),
    );
    let screen = play(
        &mut s,
        "Key e\nKey Ctrl+u\nType \"the real cause: a full disk\"\nKey Enter\nType \"postmortem says so\"\nKey Enter\nKey y\nWaitIdle\n",
    );
    assert!(screen.contains("1 episode corrected"), "{screen}");
    assert!(
        screen.contains("summary the real cause: a full disk"),
        "{screen}"
    );
    let out = strata(dir.path(), &["changes", "--since", NOW, "--json"]);
    let changes: Vec<Value> = serde_json::from_str(&stdout(&out)).unwrap();
    let c = changes
        .iter()
        .find(|c| c["kind"] == "correct_episode")
        .unwrap();
    assert_eq!(c["origin"], "human");
    assert_eq!(c["by"], "reviewer");
    assert_eq!(c["reason"], "postmortem says so");
}

#[test]
fn the_review_view_at_80x24_and_200x50() {
    let (dir, link) = seeded();
    let mut s = explorer(dir.path(), 200, 60);
    to_lineage_link(&mut s, &link);
    play(
        &mut s,
        "Key v\nType \"checked the deploy log\"\nKey Enter\nKey y\nWaitIdle\n",
    );
    drop(s);
    for (w, h) in [(80, 24), (200, 50)] {
        let mut s = explorer(dir.path(), w, h);
        let screen = play(&mut s, "WaitIdle\nKey 7\nWaitIdle\n");
        assert!(screen.contains("confirmed by reviewer"), "{screen}");
        assert!(
            screen.contains(&format!("new {}", link.episode)),
            "{screen}"
        );
        insta::assert_snapshot!(format!("review_{w}x{h}"), screen);
        let changes = play(&mut s, "Key 8\nWaitIdle\n");
        assert!(changes.contains("confirm_supersession"), "{changes}");
        assert!(changes.contains("why checked the deploy log"), "{changes}");
        insta::assert_snapshot!(format!("changes_{w}x{h}"), changes);
    }
}

/// What must never reach a terminal raw (see tests/terminal_bytes.rs).
fn raw(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

#[test]
fn a_hostile_reason_never_reaches_the_terminal_raw() {
    let (dir, link) = seeded();
    // Typed in the explorer: the prompt and the verdict it leaves show it defused.
    let mut s = explorer(dir.path(), 200, 60);
    to_lineage_link(&mut s, &link);
    let typed = play(&mut s, &format!("Key x\nType \"{HOSTILE}\"\n"));
    assert!(!typed.chars().any(raw), "{typed:?}");
    let done = play(&mut s, "Key Enter\nKey y\nWaitIdle\n");
    assert!(!done.chars().any(raw), "{done:?}");
    assert!(done.contains("retracted by reviewer"), "{done}");
    // Confirming it again is refused with the stored reason in the message: defused too.
    let refused = play(
        &mut s,
        &format!("Key x\nType \"again {HOSTILE}\"\nKey Enter\nKey y\nWaitIdle\n"),
    );
    assert!(refused.contains("already retracted"), "{refused}");
    assert!(
        !refused.contains('\u{1b}') && !refused.chars().any(raw),
        "{refused:?}"
    );
    drop(s);

    // Shown by `strata headless`, a process of its own, in the review and changes views.
    let script = dir.path().join("review.script");
    std::fs::write(
        &script,
        "WaitIdle\nKey 7\nWaitIdle\nSnapshot review\nKey 8\nWaitIdle\nSnapshot changes\n",
    )
    .unwrap();
    let frames = dir.path().join("frames-out");
    let out = strata(
        dir.path(),
        &[
            "--now",
            NOW,
            "headless",
            "--script",
            script.to_str().unwrap(),
            "--out",
            frames.to_str().unwrap(),
            "--size",
            "200x50",
            "--mask",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    for (stream, bytes) in [("stdout", &out.stdout), ("stderr", &out.stderr)] {
        let text = String::from_utf8_lossy(bytes);
        assert!(!text.chars().any(raw), "{stream}: {text:?}");
    }
    for name in ["review.txt", "changes.txt", "review.svg", "changes.svg"] {
        let text = std::fs::read_to_string(frames.join(name)).unwrap();
        assert!(!text.chars().any(raw), "{name}: {text:?}");
        assert!(
            text.contains("PWNED"),
            "{name} shows the reason, defused:\n{text}"
        );
    }
}
