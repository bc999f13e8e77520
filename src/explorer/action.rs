//! The one vocabulary of named actions. Keys, the help screen, the command palette and
//! headless scripts all resolve to these. Each name, its argument and its help text are
//! written once, on [`ActionName`]; [`Action`] is a name with its argument parsed.

use strum::{EnumIter, EnumMessage, EnumProperty, EnumString, IntoEnumIterator, IntoStaticStr};

use crate::model::{EntityKey, Timestamp};
use crate::recall::Leg;

use super::pane::Pane;

/// Which time axis the as-of slider moves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Axis {
    Valid,
    Known,
}

impl Axis {
    pub fn name(self) -> &'static str {
        match self {
            Axis::Valid => "valid",
            Axis::Known => "known",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    BackDay,
    ForwardDay,
    BackWeek,
    ForwardWeek,
    PrevChange,
    NextChange,
}

/// What a reviewer corrects from the explorer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CorrectionKind {
    Retract,
    Confirm,
    Summary,
    Resolution,
}

impl CorrectionKind {
    /// What it does, as a prompt's title says it.
    pub fn title(self) -> &'static str {
        match self {
            CorrectionKind::Retract => "Retract a supersession",
            CorrectionKind::Confirm => "Confirm a supersession",
            CorrectionKind::Summary => "Correct an episode's summary",
            CorrectionKind::Resolution => "Correct an episode's resolution",
        }
    }

    /// Whether it is about a supersession (else about an episode's text).
    pub fn is_verdict(self) -> bool {
        matches!(self, CorrectionKind::Retract | CorrectionKind::Confirm)
    }
}

/// An edit of the text box being typed in, as a shell's line editor has them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LineEdit {
    Start,
    End,
    WordBack,
    WordForward,
    KillToStart,
    KillToEnd,
    KillWord,
    Yank,
}

/// Every action by name, in the order the help screen lists them. `message` is the help
/// text; `argument`, what an action that takes one expects.
#[derive(
    Clone,
    Copy,
    Debug,
    PartialEq,
    Eq,
    Hash,
    PartialOrd,
    Ord,
    EnumIter,
    EnumString,
    IntoStaticStr,
    EnumMessage,
    EnumProperty,
)]
pub enum ActionName {
    #[strum(serialize = "quit", message = "leave the explorer")]
    Quit,
    #[strum(serialize = "help", message = "show or hide this help")]
    Help,
    #[strum(serialize = "palette", message = "open the command palette")]
    Palette,
    #[strum(serialize = "search", message = "filter the timeline by text")]
    Search,
    #[strum(serialize = "focus.next", message = "focus the next pane")]
    FocusNext,
    #[strum(serialize = "focus.prev", message = "focus the previous pane")]
    FocusPrev,
    #[strum(serialize = "focus.timeline", message = "focus the timeline (1)")]
    FocusTimeline,
    #[strum(serialize = "focus.facts", message = "focus the fact inspector (2)")]
    FocusFacts,
    #[strum(serialize = "focus.recall", message = "focus the recall breakdown (3)")]
    FocusRecall,
    #[strum(serialize = "focus.lessons", message = "focus lessons and skills (4)")]
    FocusLessons,
    #[strum(
        serialize = "focus.lineage",
        message = "focus the supersession lineage (5)"
    )]
    FocusLineage,
    #[strum(serialize = "focus.entity", message = "focus the entity view (6)")]
    FocusEntity,
    #[strum(
        serialize = "focus.review",
        message = "review supersessions with their evidence and verdicts (7)"
    )]
    FocusReview,
    #[strum(
        serialize = "focus.changes",
        message = "what memory learned up to the as-of point: episodes, invalidations, corrections (8)"
    )]
    FocusChanges,
    #[strum(
        serialize = "zoom",
        message = "give the focused pane the whole screen, or restore"
    )]
    Zoom,
    #[strum(serialize = "up", message = "move up")]
    Up,
    #[strum(serialize = "down", message = "move down")]
    Down,
    #[strum(serialize = "page_up", message = "move up a page")]
    PageUp,
    #[strum(serialize = "page_down", message = "move down a page")]
    PageDown,
    #[strum(serialize = "top", message = "go to the first row")]
    Top,
    #[strum(serialize = "bottom", message = "go to the last row")]
    Bottom,
    #[strum(
        serialize = "open",
        message = "drill into the row: episode, entity or lineage link"
    )]
    Open,
    #[strum(
        serialize = "back",
        message = "go back to the previous selection, or close"
    )]
    Back,
    #[strum(
        serialize = "asof.axis",
        message = "switch the slider between valid and knowledge time"
    )]
    AsOfAxis,
    #[strum(
        serialize = "asof.back_day",
        message = "move the as-of point one day back"
    )]
    AsOfBackDay,
    #[strum(
        serialize = "asof.forward_day",
        message = "move the as-of point one day forward"
    )]
    AsOfForwardDay,
    #[strum(
        serialize = "asof.back_week",
        message = "move the as-of point one week back"
    )]
    AsOfBackWeek,
    #[strum(
        serialize = "asof.forward_week",
        message = "move the as-of point one week forward"
    )]
    AsOfForwardWeek,
    #[strum(
        serialize = "asof.prev_change",
        message = "jump to the previous change of the selection's facts"
    )]
    AsOfPrevChange,
    #[strum(
        serialize = "asof.next_change",
        message = "jump to the next change of the selection's facts"
    )]
    AsOfNextChange,
    #[strum(serialize = "asof.now", message = "snap both axes to now")]
    AsOfNow,
    #[strum(
        serialize = "asof.valid",
        message = "set valid time",
        props(argument = "RFC3339")
    )]
    AsOfValid,
    #[strum(
        serialize = "asof.known",
        message = "set knowledge time",
        props(argument = "RFC3339")
    )]
    AsOfKnown,
    #[strum(serialize = "recall.edit", message = "edit the recall query")]
    RecallEdit,
    #[strum(serialize = "recall.run", message = "run recall at the as-of point")]
    RecallRun,
    #[strum(
        serialize = "recall.seed",
        message = "recall incidents like the episode under the cursor, or the selection (leaving it out)"
    )]
    RecallSeed,
    #[strum(
        serialize = "recall.semantic",
        message = "turn the semantic leg on or off"
    )]
    RecallSemantic,
    #[strum(serialize = "recall.bm25", message = "turn the BM25 leg on or off")]
    RecallBm25,
    #[strum(serialize = "recall.graph", message = "turn the graph leg on or off")]
    RecallGraph,
    #[strum(
        serialize = "recall.fusion",
        message = "cycle fusion: adaptive, rrf, seed, weighted"
    )]
    RecallFusion,
    #[strum(
        serialize = "recall.successor",
        message = "select the fix that holds now: the current successor of the recalled episode"
    )]
    RecallSuccessor,
    #[strum(
        serialize = "recall.query",
        message = "set the recall query and run it",
        props(argument = "TEXT")
    )]
    RecallQuery,
    #[strum(
        serialize = "history.prev",
        message = "the previous recall query from this store's history"
    )]
    HistoryPrev,
    #[strum(
        serialize = "history.next",
        message = "the next recall query from the history, or back to what was typed"
    )]
    HistoryNext,
    #[strum(serialize = "input.start", message = "move to the start of the line")]
    InputStart,
    #[strum(serialize = "input.end", message = "move to the end of the line")]
    InputEnd,
    #[strum(serialize = "input.word_back", message = "move back a word")]
    InputWordBack,
    #[strum(serialize = "input.word_forward", message = "move forward a word")]
    InputWordForward,
    #[strum(
        serialize = "input.kill_to_start",
        message = "delete from the cursor to the start of the line"
    )]
    InputKillToStart,
    #[strum(
        serialize = "input.kill_to_end",
        message = "delete from the cursor to the end of the line"
    )]
    InputKillToEnd,
    #[strum(
        serialize = "input.kill_word",
        message = "delete the word before the cursor"
    )]
    InputKillWord,
    #[strum(
        serialize = "input.yank",
        message = "insert what the last delete removed"
    )]
    InputYank,
    #[strum(
        serialize = "filter.text",
        message = "show episodes whose text contains TEXT",
        props(argument = "TEXT")
    )]
    FilterText,
    #[strum(
        serialize = "filter.entity",
        message = "show episodes with a fact about the entity",
        props(argument = "TYPE:REF")
    )]
    FilterEntity,
    #[strum(
        serialize = "filter.class",
        message = "show episodes of a fault class",
        props(argument = "NAME")
    )]
    FilterClass,
    #[strum(
        serialize = "filter.selected",
        message = "filter the timeline by the entity in view"
    )]
    FilterSelected,
    #[strum(serialize = "filter.clear", message = "clear every timeline filter")]
    FilterClear,
    #[strum(
        serialize = "select",
        message = "select an episode",
        props(argument = "FINGERPRINT")
    )]
    Select,
    #[strum(
        serialize = "correct.retract",
        message = "retract the supersession under the cursor (asks a reason, then to confirm)"
    )]
    CorrectRetract,
    #[strum(
        serialize = "correct.confirm",
        message = "confirm the supersession under the cursor (asks a reason, then to confirm)"
    )]
    CorrectConfirm,
    #[strum(
        serialize = "correct.summary",
        message = "correct the episode's summary: new text, a reason, then confirm"
    )]
    CorrectSummary,
    #[strum(
        serialize = "correct.resolution",
        message = "correct the episode's resolution: new text, a reason, then confirm"
    )]
    CorrectResolution,
    #[strum(
        serialize = "correct.record",
        message = "record the correction being confirmed, at the current knowledge time"
    )]
    CorrectRecord,
    #[strum(serialize = "refresh", message = "reload everything from the store")]
    Refresh,
}

impl ActionName {
    pub fn as_str(self) -> &'static str {
        self.into()
    }

    pub fn about(self) -> &'static str {
        self.get_message().unwrap_or_default()
    }

    /// What the action expects as its argument, if it takes one.
    pub fn argument(self) -> Option<&'static str> {
        self.get_str("argument")
    }

    pub fn all() -> impl Iterator<Item = ActionName> {
        ActionName::iter()
    }

    /// The action, for a name that takes no argument.
    pub fn action(self) -> Result<Action, ActionError> {
        self.with(None)
    }

    /// The action with its argument parsed; a missing, extra or malformed argument is an
    /// error naming the action and what it expects.
    pub fn with(self, argument: Option<&str>) -> Result<Action, ActionError> {
        use ActionName as N;
        let name = self.as_str();
        let argument = argument.map(str::trim).filter(|a| !a.is_empty());
        let arg = match (self.argument(), argument) {
            (Some(expected), None) => return Err(ActionError::Missing { name, expected }),
            (None, Some(extra)) => {
                return Err(ActionError::Unexpected {
                    name,
                    argument: extra.to_string(),
                });
            }
            (_, a) => a.unwrap_or_default(),
        };
        let invalid = |why: String| ActionError::Invalid { name, why };
        let time = |a: &str| Timestamp::parse(a).map_err(|e| invalid(e.to_string()));
        Ok(match self {
            N::Quit => Action::Quit,
            N::Help => Action::Help,
            N::Palette => Action::Palette,
            N::Search => Action::Search,
            N::FocusNext => Action::FocusNext,
            N::FocusPrev => Action::FocusPrev,
            N::FocusTimeline => Action::Focus(Pane::Timeline),
            N::FocusFacts => Action::Focus(Pane::Facts),
            N::FocusRecall => Action::Focus(Pane::Recall),
            N::FocusLessons => Action::Focus(Pane::Lessons),
            N::FocusLineage => Action::Focus(Pane::Lineage),
            N::FocusEntity => Action::Focus(Pane::Entity),
            N::FocusReview => Action::Focus(Pane::Review),
            N::FocusChanges => Action::FocusChanges,
            N::Zoom => Action::Zoom,
            N::Up => Action::Up,
            N::Down => Action::Down,
            N::PageUp => Action::PageUp,
            N::PageDown => Action::PageDown,
            N::Top => Action::Top,
            N::Bottom => Action::Bottom,
            N::Open => Action::Open,
            N::Back => Action::Back,
            N::AsOfAxis => Action::AsOfAxis,
            N::AsOfBackDay => Action::AsOfStep(Step::BackDay),
            N::AsOfForwardDay => Action::AsOfStep(Step::ForwardDay),
            N::AsOfBackWeek => Action::AsOfStep(Step::BackWeek),
            N::AsOfForwardWeek => Action::AsOfStep(Step::ForwardWeek),
            N::AsOfPrevChange => Action::AsOfStep(Step::PrevChange),
            N::AsOfNextChange => Action::AsOfStep(Step::NextChange),
            N::AsOfNow => Action::AsOfNow,
            N::AsOfValid => Action::AsOfSet(Axis::Valid, time(arg)?),
            N::AsOfKnown => Action::AsOfSet(Axis::Known, time(arg)?),
            N::RecallEdit => Action::RecallEdit,
            N::RecallRun => Action::RecallRun,
            N::RecallSeed => Action::RecallSeed,
            N::RecallSemantic => Action::RecallToggle(Leg::Semantic),
            N::RecallBm25 => Action::RecallToggle(Leg::Bm25),
            N::RecallGraph => Action::RecallToggle(Leg::Graph),
            N::RecallFusion => Action::RecallFusion,
            N::RecallSuccessor => Action::RecallSuccessor,
            N::RecallQuery => Action::RecallQuery(arg.to_string()),
            N::HistoryPrev => Action::HistoryPrev,
            N::HistoryNext => Action::HistoryNext,
            N::InputStart => Action::Edit(LineEdit::Start),
            N::InputEnd => Action::Edit(LineEdit::End),
            N::InputWordBack => Action::Edit(LineEdit::WordBack),
            N::InputWordForward => Action::Edit(LineEdit::WordForward),
            N::InputKillToStart => Action::Edit(LineEdit::KillToStart),
            N::InputKillToEnd => Action::Edit(LineEdit::KillToEnd),
            N::InputKillWord => Action::Edit(LineEdit::KillWord),
            N::InputYank => Action::Edit(LineEdit::Yank),
            N::FilterText => Action::FilterText(arg.to_string()),
            N::FilterEntity => Action::FilterEntity(
                arg.parse::<EntityKey>()
                    .map_err(|e| invalid(e.to_string()))?,
            ),
            N::FilterClass => Action::FilterClass(arg.to_string()),
            N::FilterSelected => Action::FilterSelected,
            N::FilterClear => Action::FilterClear,
            N::Select => Action::Select(arg.to_string()),
            N::CorrectRetract => Action::Correct(CorrectionKind::Retract),
            N::CorrectConfirm => Action::Correct(CorrectionKind::Confirm),
            N::CorrectSummary => Action::Correct(CorrectionKind::Summary),
            N::CorrectResolution => Action::Correct(CorrectionKind::Resolution),
            N::CorrectRecord => Action::CorrectRecord,
            N::Refresh => Action::Refresh,
        })
    }
}

impl std::fmt::Display for ActionName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum ActionError {
    #[error("unknown action {0:?}; see the help screen (?) for the list")]
    Unknown(String),
    #[error("action {name} expects {expected}")]
    Missing {
        name: &'static str,
        expected: &'static str,
    },
    #[error("action {name} takes no argument, got {argument:?}")]
    Unexpected {
        name: &'static str,
        argument: String,
    },
    #[error("action {name}: {why}")]
    Invalid { name: &'static str, why: String },
}

#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    Quit,
    Help,
    Palette,
    Search,
    FocusNext,
    FocusPrev,
    Focus(Pane),
    /// The review pane, showing what changed rather than the supersessions.
    FocusChanges,
    Zoom,
    Up,
    Down,
    PageUp,
    PageDown,
    Top,
    Bottom,
    Open,
    Back,
    AsOfAxis,
    AsOfStep(Step),
    AsOfNow,
    AsOfSet(Axis, Timestamp),
    RecallEdit,
    RecallRun,
    RecallSeed,
    RecallToggle(Leg),
    RecallFusion,
    RecallSuccessor,
    RecallQuery(String),
    HistoryPrev,
    HistoryNext,
    Edit(LineEdit),
    FilterText(String),
    FilterEntity(EntityKey),
    FilterClass(String),
    FilterSelected,
    FilterClear,
    Select(String),
    Correct(CorrectionKind),
    CorrectRecord,
    Refresh,
}

impl Action {
    /// Resolves a name and its argument, as typed in the palette or a script.
    pub fn parse(name: &str, argument: Option<&str>) -> Result<Action, ActionError> {
        name.parse::<ActionName>()
            .map_err(|_| ActionError::Unknown(name.to_string()))?
            .with(argument)
    }

    /// Parses `name [argument...]` as typed in the palette.
    pub fn parse_line(line: &str) -> Result<Action, ActionError> {
        let line = line.trim();
        match line.split_once(char::is_whitespace) {
            Some((name, arg)) => Action::parse(name, Some(arg)),
            None => Action::parse(line, None),
        }
    }

    pub fn kind(&self) -> ActionName {
        use ActionName as N;
        match self {
            Action::Quit => N::Quit,
            Action::Help => N::Help,
            Action::Palette => N::Palette,
            Action::Search => N::Search,
            Action::FocusNext => N::FocusNext,
            Action::FocusPrev => N::FocusPrev,
            Action::Focus(Pane::Timeline) => N::FocusTimeline,
            Action::Focus(Pane::Facts) => N::FocusFacts,
            Action::Focus(Pane::Recall) => N::FocusRecall,
            Action::Focus(Pane::Lessons) => N::FocusLessons,
            Action::Focus(Pane::Lineage) => N::FocusLineage,
            Action::Focus(Pane::Entity) => N::FocusEntity,
            Action::Focus(Pane::Review) => N::FocusReview,
            Action::FocusChanges => N::FocusChanges,
            Action::Zoom => N::Zoom,
            Action::Up => N::Up,
            Action::Down => N::Down,
            Action::PageUp => N::PageUp,
            Action::PageDown => N::PageDown,
            Action::Top => N::Top,
            Action::Bottom => N::Bottom,
            Action::Open => N::Open,
            Action::Back => N::Back,
            Action::AsOfAxis => N::AsOfAxis,
            Action::AsOfStep(Step::BackDay) => N::AsOfBackDay,
            Action::AsOfStep(Step::ForwardDay) => N::AsOfForwardDay,
            Action::AsOfStep(Step::BackWeek) => N::AsOfBackWeek,
            Action::AsOfStep(Step::ForwardWeek) => N::AsOfForwardWeek,
            Action::AsOfStep(Step::PrevChange) => N::AsOfPrevChange,
            Action::AsOfStep(Step::NextChange) => N::AsOfNextChange,
            Action::AsOfNow => N::AsOfNow,
            Action::AsOfSet(Axis::Valid, _) => N::AsOfValid,
            Action::AsOfSet(Axis::Known, _) => N::AsOfKnown,
            Action::RecallEdit => N::RecallEdit,
            Action::RecallRun => N::RecallRun,
            Action::RecallSeed => N::RecallSeed,
            Action::RecallToggle(Leg::Semantic) => N::RecallSemantic,
            Action::RecallToggle(Leg::Bm25) => N::RecallBm25,
            Action::RecallToggle(Leg::Graph) => N::RecallGraph,
            Action::RecallFusion => N::RecallFusion,
            Action::RecallSuccessor => N::RecallSuccessor,
            Action::RecallQuery(_) => N::RecallQuery,
            Action::HistoryPrev => N::HistoryPrev,
            Action::HistoryNext => N::HistoryNext,
            Action::Edit(LineEdit::Start) => N::InputStart,
            Action::Edit(LineEdit::End) => N::InputEnd,
            Action::Edit(LineEdit::WordBack) => N::InputWordBack,
            Action::Edit(LineEdit::WordForward) => N::InputWordForward,
            Action::Edit(LineEdit::KillToStart) => N::InputKillToStart,
            Action::Edit(LineEdit::KillToEnd) => N::InputKillToEnd,
            Action::Edit(LineEdit::KillWord) => N::InputKillWord,
            Action::Edit(LineEdit::Yank) => N::InputYank,
            Action::FilterText(_) => N::FilterText,
            Action::FilterEntity(_) => N::FilterEntity,
            Action::FilterClass(_) => N::FilterClass,
            Action::FilterSelected => N::FilterSelected,
            Action::FilterClear => N::FilterClear,
            Action::Select(_) => N::Select,
            Action::Correct(CorrectionKind::Retract) => N::CorrectRetract,
            Action::Correct(CorrectionKind::Confirm) => N::CorrectConfirm,
            Action::Correct(CorrectionKind::Summary) => N::CorrectSummary,
            Action::Correct(CorrectionKind::Resolution) => N::CorrectResolution,
            Action::CorrectRecord => N::CorrectRecord,
            Action::Refresh => N::Refresh,
        }
    }

    pub fn name(&self) -> &'static str {
        self.kind().as_str()
    }

    /// The argument as it would be typed, for event logs.
    pub fn argument(&self) -> Option<String> {
        match self {
            Action::AsOfSet(_, t) => Some(t.to_string()),
            Action::RecallQuery(s)
            | Action::FilterText(s)
            | Action::FilterClass(s)
            | Action::Select(s) => Some(s.clone()),
            Action::FilterEntity(k) => Some(format!("{}:{}", k.entity_type, k.entity_ref)),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_parses_and_names_itself() {
        for name in ActionName::all() {
            let arg = name.argument().map(|a| match a {
                "RFC3339" => "2025-01-01T00:00:00Z",
                "TYPE:REF" => "service:api",
                _ => "x",
            });
            let action = Action::parse(name.as_str(), arg).unwrap();
            assert_eq!(action.kind(), name);
            assert!(!name.about().is_empty(), "{name} has no help text");
        }
    }

    #[test]
    fn arguments_are_checked() {
        let err = |r: Result<Action, ActionError>| r.unwrap_err().to_string();
        assert!(err(Action::parse("asof.valid", None)).contains("RFC3339"));
        assert!(err(Action::parse("quit", Some("now"))).contains("no argument"));
        assert!(err(Action::parse("teleport", None)).contains("unknown action"));
        assert!(err(Action::parse("asof.valid", Some("yesterday"))).contains("asof.valid"));
        assert_eq!(
            Action::parse_line("filter.text  disk full ").unwrap(),
            Action::FilterText("disk full".into())
        );
    }
}
