//! The learning layer: what was learned from past incidents. Reflexion lessons rendered
//! from each concluded episode's own facts, and Voyager-style skills (runbooks).

mod lesson;
pub mod skill;

pub use lesson::{Lesson, LessonState, LessonView, render};
pub use skill::{Skill, SkillDraft};
