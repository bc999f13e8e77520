//! Colours and emphasis. `NO_COLOR` keeps the emphasis (bold, reverse) and drops every colour.

use std::str::FromStr;

use ratatui::style::{Color, Modifier, Style};
use serde::Deserialize;

/// `[theme]` in the config file: colour names (`cyan`, `lightred`), `#rrggbb` or an index.
#[derive(Clone, Debug, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ThemeSection {
    pub accent: Option<String>,
    pub muted: Option<String>,
    pub good: Option<String>,
    pub warn: Option<String>,
    pub bad: Option<String>,
    pub selection_bg: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Theme {
    pub color: bool,
    pub accent: Color,
    pub muted: Color,
    pub good: Color,
    pub warn: Color,
    pub bad: Color,
    pub selection_bg: Color,
}

impl Default for Theme {
    fn default() -> Self {
        Theme {
            color: true,
            accent: Color::Cyan,
            muted: Color::DarkGray,
            good: Color::Green,
            warn: Color::Yellow,
            bad: Color::Red,
            selection_bg: Color::Indexed(237),
        }
    }
}

/// A theme colour that does not parse.
#[derive(Debug, thiserror::Error)]
#[error("theme.{slot}: {value:?} is not a colour name, #rrggbb or 0-255")]
pub struct ThemeError {
    pub slot: &'static str,
    pub value: String,
}

impl Theme {
    /// The default theme, `section` merged over it, colour off when `no_color`.
    pub fn load(section: &ThemeSection, no_color: bool) -> Result<Theme, ThemeError> {
        let mut theme = Theme::default();
        let slots: [(&Option<String>, &mut Color, &str); 6] = [
            (&section.accent, &mut theme.accent, "accent"),
            (&section.muted, &mut theme.muted, "muted"),
            (&section.good, &mut theme.good, "good"),
            (&section.warn, &mut theme.warn, "warn"),
            (&section.bad, &mut theme.bad, "bad"),
            (
                &section.selection_bg,
                &mut theme.selection_bg,
                "selection_bg",
            ),
        ];
        for (value, slot, name) in slots {
            if let Some(v) = value {
                *slot = Color::from_str(v).map_err(|_| ThemeError {
                    slot: name,
                    value: v.clone(),
                })?;
            }
        }
        theme.color = !no_color;
        Ok(theme)
    }

    fn fg(&self, c: Color) -> Style {
        if self.color {
            Style::new().fg(c)
        } else {
            Style::new()
        }
    }

    pub fn text(&self) -> Style {
        Style::new()
    }

    pub fn muted(&self) -> Style {
        if self.color {
            self.fg(self.muted)
        } else {
            Style::new().add_modifier(Modifier::DIM)
        }
    }

    pub fn accent(&self) -> Style {
        self.fg(self.accent)
    }

    pub fn heading(&self) -> Style {
        self.fg(self.accent).add_modifier(Modifier::BOLD)
    }

    pub fn good(&self) -> Style {
        self.fg(self.good)
    }

    pub fn warn(&self) -> Style {
        self.fg(self.warn)
    }

    pub fn bad(&self) -> Style {
        self.fg(self.bad).add_modifier(Modifier::BOLD)
    }

    pub fn border(&self, focused: bool) -> Style {
        match (focused, self.color) {
            (true, true) => Style::new().fg(self.accent).add_modifier(Modifier::BOLD),
            (true, false) => Style::new().add_modifier(Modifier::BOLD),
            (false, _) => self.muted(),
        }
    }

    pub fn selected(&self, focused: bool) -> Style {
        match (focused, self.color) {
            (true, true) => Style::new()
                .bg(self.selection_bg)
                .add_modifier(Modifier::BOLD),
            (true, false) => Style::new().add_modifier(Modifier::REVERSED),
            (false, true) => Style::new().bg(self.selection_bg),
            (false, false) => Style::new().add_modifier(Modifier::UNDERLINED),
        }
    }

    pub fn banner(&self) -> Style {
        if self.color {
            Style::new()
                .fg(Color::Black)
                .bg(self.bad)
                .add_modifier(Modifier::BOLD)
        } else {
            Style::new().add_modifier(Modifier::REVERSED | Modifier::BOLD)
        }
    }

    pub fn status_bar(&self) -> Style {
        if self.color {
            Style::new().bg(Color::Indexed(236))
        } else {
            Style::new().add_modifier(Modifier::REVERSED)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merges_colours_and_honours_no_color() {
        let t = Theme::load(
            &ThemeSection {
                accent: Some("#ff8800".into()),
                ..ThemeSection::default()
            },
            false,
        )
        .unwrap();
        assert_eq!(t.accent, Color::Rgb(0xff, 0x88, 0));
        assert_eq!(t.good, Color::Green);
        let plain = Theme::load(&ThemeSection::default(), true).unwrap();
        assert_eq!(plain.accent().fg, None);
        assert!(
            plain
                .selected(true)
                .add_modifier
                .contains(Modifier::REVERSED)
        );
        let bad = Theme::load(
            &ThemeSection {
                bad: Some("blurple".into()),
                ..ThemeSection::default()
            },
            false,
        );
        assert!(bad.unwrap_err().to_string().contains("theme.bad"));
    }
}
