//! What `strata check` verifies of corrections, on every backend: each corrected record's
//! versions follow one another along knowledge time (each begins after the one it ends, so
//! their intervals neither overlap nor leave a gap), belong to a record that exists, and
//! agree with the log.

use crate::model::Timestamp;

use super::CorrectionRecord;

/// One corrected record as a store holds it.
#[derive(Clone, Debug)]
pub struct VersionedRecord {
    /// What it is, for the problem's words.
    pub what: String,
    /// When its first version (the record as written) began; `None`: no such record.
    pub first_known: Option<Timestamp>,
    /// When each later version began, in the store's order.
    pub starts: Vec<Timestamp>,
    /// Each later version's valid interval, for facts.
    pub intervals: Vec<(Timestamp, Option<Timestamp>)>,
}

/// The problems found, in words.
pub fn check_versions(
    records: &[VersionedRecord],
    log: &[CorrectionRecord],
    high_water: Option<Timestamp>,
) -> Vec<String> {
    let mut problems = Vec::new();
    for r in records {
        let Some(first) = r.first_known else {
            problems.push(format!("{} has versions but no record", r.what));
            continue;
        };
        let mut previous = first;
        for start in &r.starts {
            if *start <= previous {
                problems.push(format!(
                    "{}: a version begins at {start}, not after the one before it ({previous}): their knowledge intervals overlap",
                    r.what
                ));
            }
            if high_water.is_some_and(|h| *start > h) {
                problems.push(format!(
                    "{}: a version begins at {start}, after the latest knowledge time the store recorded",
                    r.what
                ));
            }
            previous = *start;
        }
        for (t_valid, t_invalid) in &r.intervals {
            if t_invalid.is_some_and(|end| end <= *t_valid) {
                problems.push(format!(
                    "{}: a version's valid interval ends before it begins ({t_valid} to {})",
                    r.what,
                    t_invalid.map(|t| t.to_string()).unwrap_or_default()
                ));
            }
        }
    }
    let mut last: Option<Timestamp> = None;
    for (i, c) in log.iter().enumerate() {
        if c.sequence != i as u64 + 1 {
            problems.push(format!(
                "correction #{} is at place {} of the log: expected the log numbered from 1 without gaps",
                c.sequence,
                i + 1
            ));
        }
        if last.is_some_and(|l| c.recorded_at < l) {
            problems.push(format!(
                "correction #{} was recorded at {}, before the one logged ahead of it",
                c.sequence, c.recorded_at
            ));
        }
        last = Some(c.recorded_at);
    }
    let versions: usize = records.iter().map(|r| r.starts.len()).sum();
    if log.is_empty() && versions > 0 {
        problems.push(format!(
            "{versions} versions but no correction in the log that made them"
        ));
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(ms: i64) -> Timestamp {
        Timestamp::from_millis(ms)
    }

    #[test]
    fn overlapping_or_orphan_versions_are_problems() {
        let good = VersionedRecord {
            what: "episode \"A\"".into(),
            first_known: Some(at(10)),
            starts: vec![at(20), at(30)],
            intervals: Vec::new(),
        };
        assert!(
            check_versions(std::slice::from_ref(&good), &[], Some(at(30)))
                .iter()
                .all(|p| p.contains("no correction in the log"))
        );
        let overlapping = VersionedRecord {
            starts: vec![at(10)],
            ..good.clone()
        };
        let problems = check_versions(&[overlapping], &[], None);
        assert!(problems[0].contains("overlap"), "{problems:?}");
        let orphan = VersionedRecord {
            first_known: None,
            ..good.clone()
        };
        assert!(check_versions(&[orphan], &[], None)[0].contains("no record"));
        let backwards = VersionedRecord {
            intervals: vec![(at(5), Some(at(5)))],
            ..good
        };
        assert!(
            check_versions(&[backwards], &[], Some(at(40)))
                .iter()
                .any(|p| p.contains("ends before it begins"))
        );
    }
}
