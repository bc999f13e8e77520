//! The recall breakdown: the query, each leg's state and latency, and the fused results
//! with every leg's rank and RRF contribution.

use std::collections::HashMap;

use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Cell, Paragraph, Row, Table};
use ratatui_textarea::{CursorMove, TextArea};

use super::{Chrome, Component, Intent, RecallSeed};
use crate::explorer::app::{App, Mode, Shared};
use crate::explorer::cursor::Cursor;
use crate::explorer::pane::Pane;
use crate::explorer::theme::Theme;
use crate::explorer::ui::{clip, inner, ms, pane_block};
use crate::learning::CodeUnit;
use crate::model::AsOf;
use crate::recall::fusion::RRF_K;
use crate::recall::{
    FusionPolicy, Leg, LegSet, LegStatus, RecallRequest, RecallResponse, RecallResult,
};

pub struct RecallPane {
    pub query: TextArea<'static>,
    pub legs: LegSet,
    pub fusion: FusionPolicy,
    pub k: usize,
    /// The episode the query was seeded from: left out of the results, its entities
    /// seeding the graph leg.
    pub seed: Option<RecallSeed>,
    pub response: Option<RecallResponse>,
    pub running: bool,
    pub cursor: Cursor,
    /// The code units each result's implicated services own.
    pub files: HashMap<String, Vec<CodeUnit>>,
}

impl RecallPane {
    pub fn new(k: usize) -> RecallPane {
        let mut query = TextArea::default();
        query.set_placeholder_text("describe the incident, or press y to seed from the selection");
        RecallPane {
            query,
            legs: LegSet::ALL,
            fusion: FusionPolicy::default(),
            k,
            seed: None,
            response: None,
            running: false,
            cursor: Cursor::default(),
            files: HashMap::new(),
        }
    }

    /// Replaces the query; `seed`: the episode it describes.
    pub fn set_query(&mut self, text: &str, seed: Option<RecallSeed>) {
        self.query = TextArea::default();
        self.query.insert_str(text);
        self.query.move_cursor(CursorMove::Head);
        self.seed = seed;
    }

    /// Edits the query; one that changed no longer stands for the seeded episode.
    pub fn edit(&mut self, edit: impl FnOnce(&mut TextArea<'static>) -> bool) {
        if edit(&mut self.query) {
            self.seed = None;
        }
    }

    pub fn toggle(&mut self, leg: Leg) -> Result<(), &'static str> {
        let next = self.legs.with(leg, !self.legs.contains(leg));
        if next.legs().is_empty() {
            return Err("at least one leg must stay on");
        }
        self.legs = next;
        Ok(())
    }

    pub fn next_fusion(&mut self) {
        self.fusion = self.fusion.next();
    }

    /// Whether a recall ran or is running (so a change of legs or as-of point reruns it).
    pub fn has_run(&self) -> bool {
        self.response.is_some() || self.running
    }

    /// The request for the query at the as-of point.
    pub fn run(&mut self, as_of: AsOf) -> Result<RecallRequest, &'static str> {
        let text = self.query.lines().join(" ");
        if text.trim().is_empty() {
            return Err("recall: the query is empty (press i to type one, y to seed it)");
        }
        self.running = true;
        Ok(RecallRequest {
            text,
            entities: self
                .seed
                .as_ref()
                .map(|s| s.entities(&as_of))
                .unwrap_or_default(),
            as_of,
            k: self.k,
            legs: self.legs,
            fusion: self.fusion,
            stale: Default::default(),
            exclude: self.seed.iter().map(|s| s.fingerprint.clone()).collect(),
        })
    }

    /// Selects the current successor of the result under the cursor, when a later episode
    /// superseded it as of the recall's point.
    pub fn successor(&self) -> Option<Intent> {
        let result = self.response.as_ref()?.results.get(self.cursor.index)?;
        Some(Intent::Follow {
            fingerprint: result.current_successor.as_ref()?.fingerprint.clone(),
            focus: Some(Pane::Facts),
        })
    }

    pub fn answered(&mut self, response: RecallResponse, files: HashMap<String, Vec<CodeUnit>>) {
        self.running = false;
        self.files = files;
        let len = response.results.len();
        self.response = Some(response);
        self.cursor.set(self.cursor.index, len);
    }
}

impl Component for RecallPane {
    fn chrome(&self) -> Chrome {
        Chrome { above: 5, below: 2 }
    }

    fn len(&self, _shared: &Shared) -> usize {
        self.response.as_ref().map_or(0, |r| r.results.len())
    }

    fn cursor(&self) -> Option<&Cursor> {
        Some(&self.cursor)
    }

    fn cursor_mut(&mut self) -> Option<&mut Cursor> {
        Some(&mut self.cursor)
    }

    /// Selects the recalled episode.
    fn open(&self, _shared: &Shared) -> Option<Intent> {
        let result = self.response.as_ref()?.results.get(self.cursor.index)?;
        Some(Intent::Follow {
            fingerprint: result.fingerprint.clone(),
            focus: Some(Pane::Facts),
        })
    }

    fn render(&self, frame: &mut Frame, rect: Rect, app: &App) {
        render(self, frame, app, rect);
    }
}

/// A column of the results table. Narrow panes drop columns, least important first, and
/// never cut the fingerprint.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Column {
    Position,
    Fingerprint,
    LegsHit,
    Leg(Leg),
    Score,
    DecidedBy,
    Concluded,
    Summary,
}

impl Column {
    /// Lower is kept longer; 0 is never dropped.
    fn priority(self) -> u8 {
        match self {
            Column::Position | Column::Fingerprint => 0,
            Column::Leg(_) => 1,
            Column::Score => 2,
            Column::LegsHit => 3,
            Column::Summary => 4,
            Column::DecidedBy => 5,
            Column::Concluded => 6,
        }
    }

    fn header(self, full: bool) -> &'static str {
        match self {
            Column::Position => "#",
            Column::Fingerprint => "fingerprint",
            Column::LegsHit => "legs",
            Column::Leg(Leg::Semantic) if full => "semantic",
            Column::Leg(Leg::Semantic) => "sem",
            Column::Leg(Leg::Bm25) => "bm25",
            Column::Leg(Leg::Graph) => "graph",
            Column::Score => "score",
            Column::DecidedBy => "decided by",
            Column::Concluded => "concluded",
            Column::Summary => "summary",
        }
    }
}

/// The summary column takes what is left, but no less than this.
const SUMMARY_MIN: u16 = 10;

/// The columns that fit `width`, with their widths (0: the rest of the row).
fn fit(columns: &[(Column, u16)], width: u16) -> Vec<(Column, u16)> {
    let mut kept: Vec<(Column, u16)> = columns.to_vec();
    loop {
        let cells: u16 = kept
            .iter()
            .map(|(c, w)| {
                if *c == Column::Summary {
                    SUMMARY_MIN
                } else {
                    *w
                }
            })
            .sum();
        let need = cells + kept.len().saturating_sub(1) as u16;
        let droppable = kept
            .iter()
            .enumerate()
            .filter(|(_, (c, _))| c.priority() > 0)
            .max_by_key(|(_, (c, _))| c.priority())
            .map(|(i, _)| i);
        match droppable {
            Some(i) if need > width => {
                kept.remove(i);
            }
            _ => return kept,
        }
    }
}

fn cell(
    column: Column,
    res: &RecallResult,
    full: bool,
    selected: Option<&str>,
    t: &Theme,
) -> Cell<'static> {
    match column {
        Column::Position => Cell::from(format!("{}", res.position)),
        Column::Fingerprint => Cell::from(format!(
            "{}{}",
            res.fingerprint,
            if res.is_superseded() { " ▽" } else { "" }
        )),
        Column::LegsHit => Cell::from(format!("{}", res.legs_hit)),
        Column::Leg(leg) => Cell::from(match res.per_leg.get(leg) {
            Some(rank) if full => Span::raw(format!("{:>2} {:.4}", rank.rank, rank.contribution)),
            Some(rank) => Span::raw(format!("{:>2}", rank.rank)),
            None => Span::styled("  –", t.muted()),
        }),
        Column::Score => Cell::from(Span::styled(format!("{:.5}", res.rrf_score), t.accent())),
        Column::DecidedBy => Cell::from(Span::styled(
            res.decided_by.map(|k| k.as_str()).unwrap_or("first"),
            t.muted(),
        )),
        Column::Concluded => Cell::from(Span::styled(res.concluded_at.short(), t.muted())),
        Column::Summary => {
            let mark = if selected == Some(res.fingerprint.as_str()) {
                "◆ "
            } else {
                ""
            };
            Cell::from(format!("{mark}{}", res.summary))
        }
    }
}

fn render(r: &RecallPane, frame: &mut Frame, app: &App, rect: Rect) {
    let s = &app.shared;
    let t = &s.theme;
    let title = Span::styled(
        format!(
            "fusion {} · k {} {}",
            r.fusion.as_str(),
            r.k,
            if r.running { "· running… " } else { "" }
        ),
        t.muted(),
    );
    frame.render_widget(pane_block(app, Pane::Recall, title), rect);
    let area = inner(rect);
    if area.height < 8 {
        return;
    }
    let editing = s.mode == Mode::Query;
    let mut query = r.query.clone();
    let query_title = match (&r.seed, editing) {
        (_, true) => " query · Enter runs · ↑↓ history · Esc leaves ".to_string(),
        (Some(seed), false) => format!(
            " query · like {} (left out of the results) · i edits ",
            clip(&seed.fingerprint, 26)
        ),
        (None, false) => " query · i edits · y seeds from the selection ".to_string(),
    };
    let mut block = Block::bordered()
        .border_type(BorderType::Plain)
        .border_style(t.border(editing))
        .title(query_title);
    if let Some(seeds) = r.response.as_ref().map(|resp| &resp.entities)
        && !seeds.is_empty()
    {
        let seeds = format!(" graph seeds: {} ", seeds.join(", "));
        block = block.title_bottom(clip(&seeds, usize::from(area.width.saturating_sub(4))));
    }
    query.set_block(block);
    query.set_cursor_line_style(ratatui::style::Style::new());
    if !editing {
        query.set_cursor_style(ratatui::style::Style::new());
    }
    frame.render_widget(&query, Rect { height: 3, ..area });
    frame.render_widget(
        Paragraph::new(legs_line(r, s)),
        Rect {
            y: area.y + 3,
            height: 1,
            ..area
        },
    );
    let list = Rect {
        y: area.y + 4,
        height: area.height - 6,
        ..area
    };
    let explain = Rect {
        y: area.y + area.height - 2,
        height: 2,
        ..area
    };
    let Some(response) = &r.response else {
        let msg = if r.running {
            "recalling…"
        } else {
            "no recall yet: y recalls incidents like the selected episode, r runs the query"
        };
        frame.render_widget(Paragraph::new(Line::styled(msg, t.muted())), list);
        return;
    };
    let focused = s.focus == Pane::Recall;
    let height = list.height.saturating_sub(1) as usize;
    // Wide panes show each leg's contribution and the ordering key; the line under the
    // table spells them out for the selected result.
    let full = list.width >= 110;
    let fp_width = response
        .results
        .iter()
        .map(|r| r.fingerprint.chars().count() + if r.is_superseded() { 2 } else { 0 })
        .max()
        .unwrap_or(11)
        .clamp(11, usize::from(list.width.saturating_sub(4)).max(11)) as u16;
    let leg_width = if full { 9 } else { 5 };
    let mut columns = vec![
        (Column::Position, 3),
        (Column::Fingerprint, fp_width),
        (Column::LegsHit, 4),
        (Column::Leg(Leg::Semantic), leg_width),
        (Column::Leg(Leg::Bm25), leg_width),
        (Column::Leg(Leg::Graph), leg_width),
        (Column::Score, 8),
    ];
    if full {
        columns.extend([(Column::DecidedBy, 10), (Column::Concluded, 16)]);
    }
    columns.push((Column::Summary, 0));
    let columns = fit(&columns, list.width);
    let selected = s.selected();
    let rows: Vec<Row> = response
        .results
        .iter()
        .enumerate()
        .skip(r.cursor.scroll)
        .take(height)
        .map(|(i, res)| {
            let row = Row::new(
                columns
                    .iter()
                    .map(|(c, _)| cell(*c, res, full, selected, t))
                    .collect::<Vec<_>>(),
            );
            if i == r.cursor.index {
                row.style(t.selected(focused))
            } else if res.is_superseded() {
                row.style(t.muted())
            } else {
                row
            }
        })
        .collect();
    let widths: Vec<Constraint> = columns
        .iter()
        .map(|(c, w)| {
            if *c == Column::Summary {
                Constraint::Fill(1)
            } else {
                Constraint::Length(*w)
            }
        })
        .collect();
    let header: Vec<&str> = columns.iter().map(|(c, _)| c.header(full)).collect();
    let table = Table::new(rows, widths).header(Row::new(header).style(t.heading()));
    frame.render_widget(table, list);
    if response.results.is_empty() {
        frame.render_widget(
            Paragraph::new(Line::styled("no results at this as-of point", t.muted())),
            Rect {
                y: list.y + 1,
                height: 1,
                ..list
            },
        );
    }
    if let Some(res) = response.results.get(r.cursor.index) {
        let mut lines = explanation(res);
        if let (Some(s), Some(second)) = (
            res.superseded_by.as_ref().and_then(|s| s.first()),
            lines.get_mut(1),
        ) {
            let mut fate = format!(" · superseded by {} on {}", s.episode, s.t_invalid.date());
            if let Some(now) = &res.current_successor {
                let fix = if now.resolved_by.is_empty() {
                    now.fingerprint.clone()
                } else {
                    now.resolved_by.join(", ")
                };
                fate.push_str(&format!(
                    " · current fix: {fix} (o selects {})",
                    now.fingerprint
                ));
            }
            second.spans.push(Span::raw(fate));
        } else if let Some(units) = r.files.get(&res.fingerprint) {
            let files: Vec<String> = units
                .iter()
                .map(|u| format!("{}:{}", u.repo, u.path))
                .collect();
            if let Some(second) = lines.get_mut(1) {
                second
                    .spans
                    .push(Span::raw(format!(" · files {}", files.join(", "))));
            }
        }
        frame.render_widget(Paragraph::new(lines).style(t.muted()), explain);
    }
}

fn legs_line(r: &RecallPane, s: &Shared) -> Line<'static> {
    let t = &s.theme;
    let mut spans = Vec::new();
    for (leg, key) in [(Leg::Semantic, 's'), (Leg::Bm25, 'b'), (Leg::Graph, 'g')] {
        let on = r.legs.contains(leg);
        spans.push(Span::styled(
            format!("[{}] {} ({key}) ", if on { "x" } else { " " }, leg.as_str()),
            if on { t.text() } else { t.muted() },
        ));
        if let Some(resp) = &r.response {
            let rep = resp.legs.get(leg);
            let style = match rep.status {
                LegStatus::Ok => t.good(),
                LegStatus::Behind => t.warn(),
                LegStatus::Disabled => t.muted(),
                LegStatus::Failed | LegStatus::Timeout => t.bad(),
            };
            let detail = match rep.status {
                LegStatus::Ok | LegStatus::Behind => match &rep.confidence {
                    Some(c) => format!(
                        "{} hits {} conf {:.2}",
                        rep.hits,
                        ms(s, rep.latency_ms),
                        c.value
                    ),
                    None => format!("{} hits {}", rep.hits, ms(s, rep.latency_ms)),
                },
                LegStatus::Disabled => String::new(),
                LegStatus::Failed | LegStatus::Timeout => {
                    clip(rep.error.as_deref().unwrap_or_default(), 40)
                }
            };
            spans.push(Span::styled(format!("{} ", rep.status.as_str()), style));
            if !detail.is_empty() {
                spans.push(Span::styled(format!("{detail} "), t.muted()));
            }
        }
        spans.push(Span::styled("│ ", t.muted()));
    }
    spans.push(Span::styled(
        format!("fusion {} (f)", r.fusion.as_str()),
        t.text(),
    ));
    Line::from(spans)
}

/// How the selected result's score was computed, so a reader can redo it by hand.
fn explanation(res: &RecallResult) -> Vec<Line<'static>> {
    let parts: Vec<String> = Leg::ALL
        .iter()
        .filter_map(|leg| {
            res.per_leg.get(*leg).map(|r| {
                let weight = (r.weight * 1000.0).round() / 1000.0;
                format!(
                    "{} {weight}/({RRF_K}+{}) = {:.5}",
                    leg.as_str(),
                    r.rank,
                    r.contribution
                )
            })
        })
        .collect();
    let placed = match res.decided_by {
        Some(k) => format!("placed below #{} by {}", res.position - 1, k.as_str()),
        None => "first".to_string(),
    };
    vec![
        Line::from(format!(
            "#{} score {:.5} = {}",
            res.position,
            res.rrf_score,
            parts.join(" + ")
        )),
        Line::from(match &res.follows {
            Some(prior) => format!("placed after {prior}: the fix that holds now"),
            None => format!("{placed} · {} legs hit", res.legs_hit),
        }),
    ]
}
