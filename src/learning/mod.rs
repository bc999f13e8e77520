//! The learning layer: what was learned from past incidents. For now, Reflexion lessons
//! rendered from each concluded episode's own facts.

mod lesson;

pub use lesson::{Lesson, LessonState, LessonView, render};
