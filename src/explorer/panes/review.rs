use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Paragraph, Wrap};

use super::{Chrome, Component, Intent};
use crate::correct::SupersessionRef;
use crate::explorer::app::{App, Shared};
use crate::explorer::cursor::Cursor;
use crate::explorer::pane::Pane;
use crate::explorer::theme::Theme;
use crate::explorer::ui::{clip, inner, pane_block};
use crate::explorer::worker::View;
use crate::model::Timestamp;
use crate::query::{Change, ReviewRow};

/// Which list the review pane shows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ReviewView {
    /// Supersessions with their evidence and verdicts.
    #[default]
    Supersessions,
    /// What memory learned, in knowledge-time order.
    Changes,
}

/// Rows under the list: the evidence of the supersession (or the change) under the cursor.
const EVIDENCE_ROWS: u16 = 6;

/// The reviewer's view: supersessions known at K, each with both episodes' summaries side
/// by side, or the feed of what memory learned up to K.
#[derive(Default)]
pub struct ReviewPane {
    pub view: ReviewView,
    /// `None` until read (or while re-read after the as-of point moved).
    pub rows: Option<Vec<ReviewRow>>,
    pub feed: Option<Vec<Change>>,
    pub cursor: Cursor,
    pub feed_cursor: Cursor,
    /// The pane has been shown: from then on it follows the store and the as-of point.
    pub opened: bool,
}

impl ReviewPane {
    /// Shows `view`; returns the read it needs.
    pub fn show(&mut self, view: ReviewView, known_at: Timestamp) -> View {
        self.view = view;
        self.opened = true;
        self.load(known_at)
    }

    /// The read of the list shown, at knowledge time `known_at`.
    pub fn load(&self, known_at: Timestamp) -> View {
        match self.view {
            ReviewView::Supersessions => View::Review { known_at },
            ReviewView::Changes => View::Feed { until: known_at },
        }
    }

    pub fn loaded_rows(&mut self, rows: Vec<ReviewRow>) {
        self.cursor.set(self.cursor.index, rows.len());
        self.rows = Some(rows);
    }

    /// The feed arrived; on its first reading the cursor starts at the latest change.
    pub fn loaded_feed(&mut self, feed: Vec<Change>) {
        let index = if self.feed.is_none() {
            feed.len().saturating_sub(1)
        } else {
            self.feed_cursor.index
        };
        self.feed_cursor.set(index, feed.len());
        self.feed = Some(feed);
    }

    /// The supersession under the cursor.
    pub fn supersession(&self) -> Option<SupersessionRef> {
        if self.view != ReviewView::Supersessions {
            return None;
        }
        let r = self.rows.as_ref()?.get(self.cursor.index)?;
        Some(SupersessionRef {
            episode: r.episode.clone(),
            prior: r.prior.clone(),
            entity_type: r.entity_type.clone(),
            entity_ref: r.entity_ref.clone(),
        })
    }

    fn row(&self) -> Option<&ReviewRow> {
        self.rows.as_ref()?.get(self.cursor.index)
    }
}

impl Component for ReviewPane {
    fn chrome(&self) -> Chrome {
        Chrome {
            above: 1,
            below: EVIDENCE_ROWS,
        }
    }

    fn len(&self, _shared: &Shared) -> usize {
        match self.view {
            ReviewView::Supersessions => self.rows.as_ref().map_or(0, Vec::len),
            ReviewView::Changes => self.feed.as_ref().map_or(0, Vec::len),
        }
    }

    fn cursor(&self) -> Option<&Cursor> {
        Some(match self.view {
            ReviewView::Supersessions => &self.cursor,
            ReviewView::Changes => &self.feed_cursor,
        })
    }

    fn cursor_mut(&mut self) -> Option<&mut Cursor> {
        Some(match self.view {
            ReviewView::Supersessions => &mut self.cursor,
            ReviewView::Changes => &mut self.feed_cursor,
        })
    }

    /// Opens the superseding episode in the lineage pane.
    fn open(&self, _shared: &Shared) -> Option<Intent> {
        Some(Intent::Follow {
            fingerprint: self.row()?.episode.clone(),
            focus: Some(Pane::Lineage),
        })
    }

    /// The superseding episode of the row under the cursor.
    fn episode(&self, shared: &Shared) -> Option<String> {
        match self.view {
            ReviewView::Supersessions => self.row().map(|r| r.episode.clone()),
            ReviewView::Changes => shared.selected().map(str::to_string),
        }
    }

    fn render(&self, frame: &mut Frame, rect: Rect, app: &App) {
        render(self, frame, app, rect);
    }
}

pub fn verdict_style(t: &Theme, verdict: &str) -> Style {
    match verdict {
        "retracted" => t.bad(),
        "confirmed" => t.good(),
        _ => t.warn(),
    }
}

fn render(pane: &ReviewPane, frame: &mut Frame, app: &App, rect: Rect) {
    let s = &app.shared;
    let t = &s.theme;
    let tab = |view: ReviewView, label: &'static str| {
        if pane.view == view {
            Span::styled(label, t.heading())
        } else {
            Span::styled(label, t.muted())
        }
    };
    let title = Line::from(vec![
        Span::styled("· ", t.muted()),
        tab(ReviewView::Supersessions, "supersessions (7)"),
        Span::styled(" | ", t.muted()),
        tab(ReviewView::Changes, "changes (8)"),
        Span::styled(format!(" · known {} ", s.as_of.known_at.short()), t.muted()),
    ]);
    frame.render_widget(pane_block(app, Pane::Review, title), rect);
    let area = inner(rect);
    if area.height < EVIDENCE_ROWS + 2 {
        return;
    }
    let [head, list, evidence] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Fill(1),
        Constraint::Length(EVIDENCE_ROWS),
    ])
    .areas(area);
    let focused = s.focus == Pane::Review;
    match pane.view {
        ReviewView::Supersessions => supersessions(pane, frame, t, focused, [head, list, evidence]),
        ReviewView::Changes => changes(pane, frame, t, focused, [head, list, evidence]),
    }
}

fn supersessions(pane: &ReviewPane, frame: &mut Frame, t: &Theme, focused: bool, areas: [Rect; 3]) {
    let [head, list, evidence] = areas;
    let Some(rows) = &pane.rows else {
        frame.render_widget(Paragraph::new(Line::styled("loading…", t.muted())), head);
        return;
    };
    let count = |v: &str| rows.iter().filter(|r| r.verdict == v).count();
    frame.render_widget(
        Paragraph::new(Line::styled(
            clip(
                &format!(
                    "{} supersessions: {} unreviewed · {} confirmed · {} retracted · x retract · v confirm · e/E correct text",
                    rows.len(),
                    count("unreviewed"),
                    count("confirmed"),
                    count("retracted"),
                ),
                head.width as usize,
            ),
            t.muted(),
        )),
        head,
    );
    let width = list.width as usize;
    let wide = width >= 120;
    let lines: Vec<Line> = rows
        .iter()
        .enumerate()
        .skip(pane.cursor.scroll)
        .take(list.height as usize)
        .map(|(i, r)| {
            let mut spans = vec![
                Span::styled(format!("{} ", r.recorded_at.short()), t.muted()),
                Span::styled(format!("{:<10} ", r.verdict), verdict_style(t, &r.verdict)),
                Span::raw(format!(
                    "{} ⟵ {} · {}:{}",
                    r.episode, r.prior, r.entity_type, r.entity_ref
                )),
            ];
            if wide {
                spans.push(Span::styled(
                    format!(" · {} {} {:.2}", r.source, r.status, r.confidence_score),
                    t.muted(),
                ));
            }
            let line = clipped(spans, width);
            if i == pane.cursor.index {
                line.style(t.selected(focused))
            } else {
                line
            }
        })
        .collect();
    if rows.is_empty() {
        frame.render_widget(
            Paragraph::new(Line::styled(
                "nothing superseded anything as of K",
                t.muted(),
            )),
            list,
        );
    } else {
        frame.render_widget(Paragraph::new(lines), list);
    }
    if let Some(r) = pane.row() {
        side_by_side(frame, t, r, evidence);
    }
}

/// Both episodes' summaries side by side, and who said what of the supersession.
fn side_by_side(frame: &mut Frame, t: &Theme, r: &ReviewRow, area: Rect) {
    let [rule, body, verdict] = Layout::vertical([
        Constraint::Length(1),
        Constraint::Fill(1),
        Constraint::Length(1),
    ])
    .areas(area);
    frame.render_widget(
        Paragraph::new(Line::styled(
            clip(
                &format!(
                    "── evidence · closed {} valid · {} {} {:.2} ",
                    r.closed_at.short(),
                    r.source,
                    r.status,
                    r.confidence_score
                ),
                rule.width as usize,
            ),
            t.muted(),
        )),
        rule,
    );
    let [new, prior] = Layout::horizontal([Constraint::Fill(1), Constraint::Fill(1)])
        .spacing(2)
        .areas(body);
    let column = |label: &str, fp: &str, summary: &str| {
        Paragraph::new(vec![
            Line::from(vec![
                Span::styled(format!("{label} "), t.accent()),
                Span::styled(fp.to_string(), t.heading()),
            ]),
            Line::raw(clip(summary, 4 * usize::from(new.width))),
        ])
        .wrap(Wrap { trim: true })
    };
    frame.render_widget(column("new", &r.episode, &r.episode_summary), new);
    frame.render_widget(column("prior", &r.prior, &r.prior_summary), prior);
    let line = match &r.review {
        Some(review) => Line::from(vec![
            Span::styled(
                review.verdict.as_str(),
                verdict_style(t, r.verdict.as_str()),
            ),
            Span::raw(format!(
                " by {} at {}: {}",
                review.by,
                review.recorded_at.short(),
                review.reason
            )),
        ]),
        None => Line::styled("unreviewed: x retracts it, v confirms it", t.warn()),
    };
    frame.render_widget(
        Paragraph::new(clipped(line.spans, verdict.width as usize)),
        verdict,
    );
}

fn changes(pane: &ReviewPane, frame: &mut Frame, t: &Theme, focused: bool, areas: [Rect; 3]) {
    let [head, list, detail] = areas;
    let Some(feed) = &pane.feed else {
        frame.render_widget(Paragraph::new(Line::styled("loading…", t.muted())), head);
        return;
    };
    let corrections = feed.iter().filter(|c| c.reason.is_some()).count();
    frame.render_widget(
        Paragraph::new(Line::styled(
            clip(
                &format!(
                    "{} changes up to K, {corrections} of them corrections and verdicts · oldest first",
                    feed.len()
                ),
                head.width as usize,
            ),
            t.muted(),
        )),
        head,
    );
    let width = list.width as usize;
    let lines: Vec<Line> = feed
        .iter()
        .enumerate()
        .skip(pane.feed_cursor.scroll)
        .take(list.height as usize)
        .map(|(i, c)| {
            let kind_style = match c.kind.as_str() {
                "episode" => t.text(),
                "supersession" | "invalidation" => t.warn(),
                _ => t.accent(),
            };
            let line = clipped(
                vec![
                    Span::styled(format!("{} ", c.at.short()), t.muted()),
                    Span::styled(format!("{:<20} ", c.kind), kind_style),
                    Span::raw(c.target.clone()),
                    Span::styled(format!(" ({})", who(c)), t.muted()),
                ],
                width,
            );
            if i == pane.feed_cursor.index {
                line.style(t.selected(focused))
            } else {
                line
            }
        })
        .collect();
    if feed.is_empty() {
        frame.render_widget(
            Paragraph::new(Line::styled("nothing was recorded by K", t.muted())),
            list,
        );
    } else {
        frame.render_widget(Paragraph::new(lines), list);
    }
    let Some(c) = feed.get(pane.feed_cursor.index) else {
        return;
    };
    let mut text = vec![
        Line::styled(
            clip(
                &format!("── {} at {} · {} ", c.kind, c.at.short(), who(c)),
                detail.width as usize,
            ),
            t.muted(),
        ),
        Line::raw(c.target.replace(['\n', '\r', '\t'], " ")),
    ];
    if let Some(reason) = &c.reason {
        text.push(Line::from(vec![
            Span::styled("why ", t.accent()),
            Span::raw(reason.replace(['\n', '\r', '\t'], " ")),
        ]));
    }
    frame.render_widget(Paragraph::new(text).wrap(Wrap { trim: true }), detail);
}

/// Who made a change: the origin and reviewer of a correction, the source of the rest.
fn who(c: &Change) -> String {
    match (&c.origin, &c.by, &c.source) {
        (Some(origin), Some(by), _) => format!("{} {by}", origin.as_str()),
        (_, _, Some(source)) => format!("source {source}"),
        _ => String::new(),
    }
}

/// The spans cut to `width` characters, the last one ending in an ellipsis when cut.
fn clipped(spans: Vec<Span<'static>>, width: usize) -> Line<'static> {
    let mut left = width;
    let mut out = Vec::new();
    for span in spans {
        if left == 0 {
            break;
        }
        let n = span.content.chars().count();
        if n <= left {
            left -= n;
            out.push(span);
        } else {
            let style = span.style;
            out.push(Span::styled(clip(&span.content, left), style));
            left = 0;
        }
    }
    Line::from(out)
}
