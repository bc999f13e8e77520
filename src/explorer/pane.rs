//! The explorer's panes, numbered as the keys that focus them.

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Pane {
    Timeline,
    Facts,
    Recall,
    Lessons,
    Lineage,
    Entity,
    Review,
}

impl Pane {
    pub const ALL: [Pane; 7] = [
        Pane::Timeline,
        Pane::Facts,
        Pane::Recall,
        Pane::Lessons,
        Pane::Lineage,
        Pane::Entity,
        Pane::Review,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Pane::Timeline => "timeline",
            Pane::Facts => "facts",
            Pane::Recall => "recall",
            Pane::Lessons => "lessons",
            Pane::Lineage => "lineage",
            Pane::Entity => "entity",
            Pane::Review => "review",
        }
    }

    pub fn title(self) -> &'static str {
        match self {
            Pane::Timeline => "Timeline",
            Pane::Facts => "Facts",
            Pane::Recall => "Recall",
            Pane::Lessons => "Lessons & skills",
            Pane::Lineage => "Lineage",
            Pane::Entity => "Entity",
            Pane::Review => "Review",
        }
    }

    /// The title where room is short (the tab strip).
    pub fn short_title(self) -> &'static str {
        match self {
            Pane::Lessons => "Lessons",
            other => other.title(),
        }
    }

    /// 1-based, as shown in titles and bound to the number keys.
    pub fn number(self) -> usize {
        self as usize + 1
    }

    pub fn next(self) -> Pane {
        Pane::ALL[(self as usize + 1) % Pane::ALL.len()]
    }

    pub fn prev(self) -> Pane {
        Pane::ALL[(self as usize + Pane::ALL.len() - 1) % Pane::ALL.len()]
    }
}
