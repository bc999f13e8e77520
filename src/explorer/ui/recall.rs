use ratatui::Frame;
use ratatui::layout::{Constraint, Rect};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, BorderType, Cell, Paragraph, Row, Table};

use super::{clip, inner, ms, pane_block};
use crate::explorer::app::{App, Mode};
use crate::explorer::pane::Pane;
use crate::recall::{Leg, LegStatus, RecallResult};

pub fn render(frame: &mut Frame, app: &App, rect: Rect) {
    let t = &app.theme;
    let r = &app.recall;
    let title = Span::styled(
        format!(
            "fusion {} · k {} {}",
            r.fusion.as_str(),
            app.recall_k(),
            if r.running { "· running… " } else { "" }
        ),
        t.muted(),
    );
    frame.render_widget(pane_block(app, Pane::Recall, title), rect);
    let area = inner(rect);
    if area.height < 8 {
        return;
    }
    let editing = app.mode == Mode::Query;
    let mut query = r.query.clone();
    query.set_block(
        Block::bordered()
            .border_type(BorderType::Plain)
            .border_style(t.border(editing))
            .title(if editing {
                " query · Enter runs · Esc leaves "
            } else {
                " query · i edits · y seeds from the selection "
            }),
    );
    query.set_cursor_line_style(ratatui::style::Style::new());
    if !editing {
        query.set_cursor_style(ratatui::style::Style::new());
    }
    frame.render_widget(&query, Rect { height: 3, ..area });
    frame.render_widget(
        Paragraph::new(legs_line(app)),
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
            "no recall yet: y seeds the query from the selected episode, r runs it"
        };
        frame.render_widget(Paragraph::new(Line::styled(msg, t.muted())), list);
        return;
    };
    let focused = app.focus == Pane::Recall;
    let height = list.height.saturating_sub(1) as usize;
    // Narrow panes show ranks only; the line under the table spells out the selected one.
    let full = list.width >= 110;
    let fp_width = response
        .results
        .iter()
        .map(|r| r.fingerprint.chars().count())
        .max()
        .unwrap_or(11)
        .clamp(11, 26) as u16;
    let rows: Vec<Row> = response
        .results
        .iter()
        .enumerate()
        .skip(r.cursor.scroll)
        .take(height)
        .map(|(i, res)| {
            let mut cells = vec![
                Cell::from(format!("{}", res.position)),
                Cell::from(res.fingerprint.clone()),
                Cell::from(format!("{}", res.legs_hit)),
            ];
            for leg in Leg::ALL {
                cells.push(Cell::from(match res.per_leg.get(leg) {
                    Some(rank) if full => {
                        Span::raw(format!("{:>2} {:.4}", rank.rank, rank.contribution))
                    }
                    Some(rank) => Span::raw(format!("{:>2}", rank.rank)),
                    None => Span::styled("  –", t.muted()),
                }));
            }
            cells.push(Cell::from(Span::styled(
                format!("{:.5}", res.rrf_score),
                t.accent(),
            )));
            if full {
                cells.push(Cell::from(Span::styled(
                    res.decided_by.map(|k| k.as_str()).unwrap_or("first"),
                    t.muted(),
                )));
                cells.push(Cell::from(Span::styled(
                    res.concluded_at.short(),
                    t.muted(),
                )));
            }
            let mark = if app.selected.as_deref() == Some(res.fingerprint.as_str()) {
                "◆ "
            } else {
                ""
            };
            cells.push(Cell::from(format!("{mark}{}", res.summary)));
            let row = Row::new(cells);
            if i == r.cursor.index {
                row.style(t.selected(focused))
            } else {
                row
            }
        })
        .collect();
    let leg_width = if full { 9 } else { 5 };
    let mut widths = vec![
        Constraint::Length(3),
        Constraint::Length(fp_width),
        Constraint::Length(4),
        Constraint::Length(leg_width),
        Constraint::Length(leg_width),
        Constraint::Length(leg_width),
        Constraint::Length(8),
    ];
    let mut header = vec!["#", "fingerprint", "legs", "sem", "bm25", "graph", "score"];
    if full {
        header[3] = "semantic";
        widths.extend([Constraint::Length(10), Constraint::Length(16)]);
        header.extend(["decided by", "concluded"]);
    }
    widths.push(Constraint::Fill(1));
    header.push("summary");
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
        if let Some(units) = r.files.get(&res.fingerprint) {
            let files: Vec<String> = units
                .iter()
                .map(|u| format!("{}:{}", u.repo, u.path))
                .collect();
            if let Some(second) = lines.get_mut(1) {
                second.spans.push(ratatui::text::Span::raw(format!(
                    " · files {}",
                    files.join(", ")
                )));
            }
        }
        frame.render_widget(Paragraph::new(lines).style(t.muted()), explain);
    }
}

fn legs_line(app: &App) -> Line<'static> {
    let t = &app.theme;
    let mut spans = Vec::new();
    for (leg, key) in [(Leg::Semantic, 's'), (Leg::Bm25, 'b'), (Leg::Graph, 'g')] {
        let on = app.recall.legs.contains(leg);
        spans.push(Span::styled(
            format!("[{}] {} ({key}) ", if on { "x" } else { " " }, leg.as_str()),
            if on { t.text() } else { t.muted() },
        ));
        if let Some(resp) = &app.recall.response {
            let rep = resp.legs.get(leg);
            let style = match rep.status {
                LegStatus::Ok => t.good(),
                LegStatus::Disabled => t.muted(),
                LegStatus::Failed | LegStatus::Timeout => t.bad(),
            };
            let detail = match rep.status {
                LegStatus::Ok => format!("{} hits {}", rep.hits, ms(app, rep.latency_ms)),
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
        format!("fusion {} (f)", app.recall.fusion.as_str()),
        t.text(),
    ));
    Line::from(spans)
}

/// How the selected result's score was computed, so a reader can redo it by hand.
fn explanation(res: &RecallResult) -> Vec<Line<'static>> {
    let parts: Vec<String> = Leg::ALL
        .iter()
        .filter_map(|leg| {
            res.per_leg
                .get(*leg)
                .map(|r| format!("{} 1/(60+{}) = {:.5}", leg.as_str(), r.rank, r.contribution))
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
        Line::from(format!("{placed} · {} legs hit", res.legs_hit)),
    ]
}
