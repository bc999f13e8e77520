//! The one vocabulary of named actions. Keys, the help screen, the command palette and
//! headless scripts all resolve to these.

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

#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    Quit,
    Help,
    Palette,
    Search,
    FocusNext,
    FocusPrev,
    Focus(Pane),
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
    RecallQuery(String),
    FilterText(String),
    FilterEntity(EntityKey),
    FilterClass(String),
    FilterSelected,
    FilterClear,
    Select(String),
    Refresh,
}

/// A named action as the help screen and the palette list it.
pub struct ActionSpec {
    pub name: &'static str,
    /// The argument it takes, if any, as shown to the user.
    pub argument: Option<&'static str>,
    pub about: &'static str,
}

const fn spec(name: &'static str, about: &'static str) -> ActionSpec {
    ActionSpec {
        name,
        argument: None,
        about,
    }
}

const fn spec_arg(name: &'static str, argument: &'static str, about: &'static str) -> ActionSpec {
    ActionSpec {
        name,
        argument: Some(argument),
        about,
    }
}

pub const ACTIONS: &[ActionSpec] = &[
    spec("quit", "leave the explorer"),
    spec("help", "show or hide this help"),
    spec("palette", "open the command palette"),
    spec("search", "filter the timeline by text"),
    spec("focus.next", "focus the next pane"),
    spec("focus.prev", "focus the previous pane"),
    spec("focus.timeline", "focus the timeline (1)"),
    spec("focus.facts", "focus the fact inspector (2)"),
    spec("focus.recall", "focus the recall breakdown (3)"),
    spec("focus.lessons", "focus lessons and skills (4)"),
    spec("focus.lineage", "focus the supersession lineage (5)"),
    spec("focus.entity", "focus the entity view (6)"),
    spec("zoom", "give the focused pane the whole screen, or restore"),
    spec("up", "move up"),
    spec("down", "move down"),
    spec("page_up", "move up a page"),
    spec("page_down", "move down a page"),
    spec("top", "go to the first row"),
    spec("bottom", "go to the last row"),
    spec(
        "open",
        "drill into the row: episode, entity or lineage link",
    ),
    spec("back", "go back to the previous selection, or close"),
    spec(
        "asof.axis",
        "switch the slider between valid and knowledge time",
    ),
    spec("asof.back_day", "move the as-of point one day back"),
    spec("asof.forward_day", "move the as-of point one day forward"),
    spec("asof.back_week", "move the as-of point one week back"),
    spec("asof.forward_week", "move the as-of point one week forward"),
    spec(
        "asof.prev_change",
        "jump to the previous change of the selection's facts",
    ),
    spec(
        "asof.next_change",
        "jump to the next change of the selection's facts",
    ),
    spec("asof.now", "snap both axes to now"),
    spec_arg("asof.valid", "RFC3339", "set valid time"),
    spec_arg("asof.known", "RFC3339", "set knowledge time"),
    spec("recall.edit", "edit the recall query"),
    spec("recall.run", "run recall at the as-of point"),
    spec(
        "recall.seed",
        "seed the query from the selected episode and run it",
    ),
    spec("recall.semantic", "turn the semantic leg on or off"),
    spec("recall.bm25", "turn the BM25 leg on or off"),
    spec("recall.graph", "turn the graph leg on or off"),
    spec("recall.fusion", "cycle fusion: rrf, seed, weighted"),
    spec_arg("recall.query", "TEXT", "set the recall query and run it"),
    spec_arg(
        "filter.text",
        "TEXT",
        "show episodes whose text contains TEXT",
    ),
    spec_arg(
        "filter.entity",
        "TYPE:REF",
        "show episodes with a fact about the entity",
    ),
    spec_arg("filter.class", "NAME", "show episodes of a fault class"),
    spec(
        "filter.selected",
        "filter the timeline by the entity in view",
    ),
    spec("filter.clear", "clear every timeline filter"),
    spec_arg("select", "FINGERPRINT", "select an episode"),
    spec("refresh", "reload everything from the store"),
];

impl Action {
    /// Resolves a name and its argument, as typed in the palette or a script.
    pub fn parse(name: &str, argument: Option<&str>) -> Result<Action, String> {
        let Some(spec) = ACTIONS.iter().find(|s| s.name == name) else {
            return Err(format!(
                "unknown action {name:?}; see the help screen (?) for the list"
            ));
        };
        let argument = argument.map(str::trim).filter(|a| !a.is_empty());
        let arg = match (spec.argument, argument) {
            (Some(what), None) => return Err(format!("action {name} expects {what}")),
            (None, Some(extra)) => {
                return Err(format!("action {name} takes no argument, got {extra:?}"));
            }
            (_, a) => a.unwrap_or_default(),
        };
        let time = |a: &str| Timestamp::parse(a).map_err(|e| format!("action {name}: {e}"));
        Ok(match name {
            "quit" => Action::Quit,
            "help" => Action::Help,
            "palette" => Action::Palette,
            "search" => Action::Search,
            "focus.next" => Action::FocusNext,
            "focus.prev" => Action::FocusPrev,
            "zoom" => Action::Zoom,
            "up" => Action::Up,
            "down" => Action::Down,
            "page_up" => Action::PageUp,
            "page_down" => Action::PageDown,
            "top" => Action::Top,
            "bottom" => Action::Bottom,
            "open" => Action::Open,
            "back" => Action::Back,
            "asof.axis" => Action::AsOfAxis,
            "asof.back_day" => Action::AsOfStep(Step::BackDay),
            "asof.forward_day" => Action::AsOfStep(Step::ForwardDay),
            "asof.back_week" => Action::AsOfStep(Step::BackWeek),
            "asof.forward_week" => Action::AsOfStep(Step::ForwardWeek),
            "asof.prev_change" => Action::AsOfStep(Step::PrevChange),
            "asof.next_change" => Action::AsOfStep(Step::NextChange),
            "asof.now" => Action::AsOfNow,
            "asof.valid" => Action::AsOfSet(Axis::Valid, time(arg)?),
            "asof.known" => Action::AsOfSet(Axis::Known, time(arg)?),
            "recall.edit" => Action::RecallEdit,
            "recall.run" => Action::RecallRun,
            "recall.seed" => Action::RecallSeed,
            "recall.semantic" => Action::RecallToggle(Leg::Semantic),
            "recall.bm25" => Action::RecallToggle(Leg::Bm25),
            "recall.graph" => Action::RecallToggle(Leg::Graph),
            "recall.fusion" => Action::RecallFusion,
            "recall.query" => Action::RecallQuery(arg.to_string()),
            "filter.text" => Action::FilterText(arg.to_string()),
            "filter.entity" => Action::FilterEntity(
                arg.parse::<EntityKey>()
                    .map_err(|e| format!("action {name}: {e}"))?,
            ),
            "filter.class" => Action::FilterClass(arg.to_string()),
            "filter.selected" => Action::FilterSelected,
            "filter.clear" => Action::FilterClear,
            "select" => Action::Select(arg.to_string()),
            "refresh" => Action::Refresh,
            focus => match Pane::ALL
                .iter()
                .find(|p| focus == format!("focus.{}", p.name()))
            {
                Some(p) => Action::Focus(*p),
                None => return Err(format!("action {name} is listed but not wired")),
            },
        })
    }

    /// Parses `name [argument...]` as typed in the palette.
    pub fn parse_line(line: &str) -> Result<Action, String> {
        let line = line.trim();
        match line.split_once(char::is_whitespace) {
            Some((name, arg)) => Action::parse(name, Some(arg)),
            None => Action::parse(line, None),
        }
    }

    pub fn name(&self) -> &'static str {
        match self {
            Action::Quit => "quit",
            Action::Help => "help",
            Action::Palette => "palette",
            Action::Search => "search",
            Action::FocusNext => "focus.next",
            Action::FocusPrev => "focus.prev",
            Action::Focus(p) => match p {
                Pane::Timeline => "focus.timeline",
                Pane::Facts => "focus.facts",
                Pane::Recall => "focus.recall",
                Pane::Lessons => "focus.lessons",
                Pane::Lineage => "focus.lineage",
                Pane::Entity => "focus.entity",
            },
            Action::Zoom => "zoom",
            Action::Up => "up",
            Action::Down => "down",
            Action::PageUp => "page_up",
            Action::PageDown => "page_down",
            Action::Top => "top",
            Action::Bottom => "bottom",
            Action::Open => "open",
            Action::Back => "back",
            Action::AsOfAxis => "asof.axis",
            Action::AsOfStep(step) => match step {
                Step::BackDay => "asof.back_day",
                Step::ForwardDay => "asof.forward_day",
                Step::BackWeek => "asof.back_week",
                Step::ForwardWeek => "asof.forward_week",
                Step::PrevChange => "asof.prev_change",
                Step::NextChange => "asof.next_change",
            },
            Action::AsOfNow => "asof.now",
            Action::AsOfSet(Axis::Valid, _) => "asof.valid",
            Action::AsOfSet(Axis::Known, _) => "asof.known",
            Action::RecallEdit => "recall.edit",
            Action::RecallRun => "recall.run",
            Action::RecallSeed => "recall.seed",
            Action::RecallToggle(Leg::Semantic) => "recall.semantic",
            Action::RecallToggle(Leg::Bm25) => "recall.bm25",
            Action::RecallToggle(Leg::Graph) => "recall.graph",
            Action::RecallFusion => "recall.fusion",
            Action::RecallQuery(_) => "recall.query",
            Action::FilterText(_) => "filter.text",
            Action::FilterEntity(_) => "filter.entity",
            Action::FilterClass(_) => "filter.class",
            Action::FilterSelected => "filter.selected",
            Action::FilterClear => "filter.clear",
            Action::Select(_) => "select",
            Action::Refresh => "refresh",
        }
    }

    /// The argument as it would be typed, for event logs.
    pub fn argument(&self) -> Option<String> {
        match self {
            Action::AsOfSet(_, t) => Some(t.to_string()),
            Action::RecallQuery(s) | Action::FilterText(s) | Action::FilterClass(s) => {
                Some(s.clone())
            }
            Action::Select(s) => Some(s.clone()),
            Action::FilterEntity(k) => Some(format!("{}:{}", k.entity_type, k.entity_ref)),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_listed_action_parses_and_names_itself() {
        for spec in ACTIONS {
            let arg = spec.argument.map(|a| match a {
                "RFC3339" => "2025-01-01T00:00:00Z",
                "TYPE:REF" => "service:api",
                _ => "x",
            });
            let action = Action::parse(spec.name, arg).unwrap();
            assert_eq!(action.name(), spec.name);
        }
    }

    #[test]
    fn arguments_are_checked() {
        assert!(
            Action::parse("asof.valid", None)
                .unwrap_err()
                .contains("RFC3339")
        );
        assert!(
            Action::parse("quit", Some("now"))
                .unwrap_err()
                .contains("no argument")
        );
        assert!(
            Action::parse("teleport", None)
                .unwrap_err()
                .contains("unknown action")
        );
        assert_eq!(
            Action::parse_line("filter.text  disk full ").unwrap(),
            Action::FilterText("disk full".into())
        );
    }
}
