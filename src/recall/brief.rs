//! The brief: the top results in a line each, for an agent that reads text, e.g.
//! `INC-0274 (2026-09-24) Grafana SSO broken after a caddy route change; fixed by
//! change:pr-5059; its config_key:… fix was superseded 2026-10-29 by INC-0289
//! (change:pr-5178), which holds now.` Bounded and deterministic; like every other text recall
//! answers with, it is redacted where it leaves Strata (the CLI's output, the MCP answer).

use super::fate::StalePolicy;
use super::response::RecallResult;
use crate::model::FactState;

/// The brief's default bound, in characters.
pub const DEFAULT_CHARS: usize = 1200;
/// Results a brief speaks of at most.
const RESULTS: usize = 5;
/// A summary is cut to this many characters in the brief.
const SUMMARY_CHARS: usize = 100;

/// `text` to at most `max` characters, cut with an ellipsis.
fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let mut out: String = text.chars().take(max.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// The first sentence of a summary (or its first line), whitespace folded.
fn headline(summary: &str) -> String {
    let line = summary.lines().next().unwrap_or_default();
    let end = line
        .char_indices()
        .find(|(i, c)| *c == '.' && line[i + 1..].starts_with(|n: char| n.is_whitespace()))
        .map_or(line.len(), |(i, _)| i);
    line[..end].split_whitespace().collect::<Vec<_>>().join(" ")
}

fn line(r: &RecallResult, stale: StalePolicy) -> String {
    let mut out = format!(
        "{} ({}) {}",
        r.fingerprint,
        r.concluded_at.date(),
        cut(&headline(&r.summary), SUMMARY_CHARS)
    );
    // The fixes that still hold, or, when none does (or the policy does not look), all.
    let holding: Vec<&str> = r
        .resolved_by
        .iter()
        .filter(|f| f.state == FactState::Valid || stale == StalePolicy::Keep)
        .map(|f| f.entity.as_str())
        .collect();
    let fixes = if holding.is_empty() {
        r.resolved_by.iter().map(|f| f.entity.as_str()).collect()
    } else {
        holding
    };
    if !fixes.is_empty() {
        out.push_str(&format!("; fixed by {}", fixes.join(", ")));
    }
    if let Some(prior) = &r.follows {
        out.push_str(&format!("; the current successor of {prior}"));
    }
    if let Some(first) = r.superseded_by.as_ref().and_then(|s| s.first()) {
        let more = r.superseded_by.as_ref().map_or(0, |s| s.len() - 1);
        out.push_str(&format!(
            "; its {} fix was superseded {} by {}",
            first.entity,
            first.t_invalid.date(),
            first.episode
        ));
        if more > 0 {
            out.push_str(&format!(" (and {more} more)"));
        }
        match &r.current_successor {
            Some(s) if s.fingerprint == first.episode => {
                out.push_str(&successor_fixes(&s.resolved_by));
                out.push_str(", which holds now");
            }
            Some(s) => {
                out.push_str(&format!("; the fix that holds now is {}", s.fingerprint));
                out.push_str(&successor_fixes(&s.resolved_by));
            }
            None => {}
        }
    }
    out.push('.');
    out
}

fn successor_fixes(fixes: &[String]) -> String {
    if fixes.is_empty() {
        String::new()
    } else {
        format!(" ({})", fixes.join(", "))
    }
}

/// The top results, a line each, within `max_chars` characters; what does not fit is counted.
pub fn render(results: &[RecallResult], stale: StalePolicy, max_chars: usize) -> String {
    let shown = results.len().min(RESULTS);
    let mut lines: Vec<String> = Vec::new();
    let mut used = 0;
    for r in &results[..shown] {
        let l = line(r, stale);
        let need = l.chars().count() + usize::from(!lines.is_empty());
        if used + need > max_chars {
            if lines.is_empty() {
                lines.push(cut(&l, max_chars));
            }
            break;
        }
        used += need;
        lines.push(l);
    }
    let left = results.len() - lines.len();
    let mut brief = lines.join("\n");
    if left > 0 {
        let note = format!("\n(+{left} more)");
        if brief.chars().count() + note.chars().count() <= max_chars {
            brief.push_str(&note);
        }
    }
    brief
}
