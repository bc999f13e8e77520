//! The learning layer: what was learned from past incidents. Reflexion lessons rendered
//! from each concluded episode's own facts, Voyager-style skills (runbooks), and the
//! code↔graph join.

pub mod code;
mod lesson;
pub mod skill;

pub use code::CodeUnit;
pub use lesson::{Lesson, LessonState, LessonView, render};
pub use skill::{Skill, SkillDraft};
