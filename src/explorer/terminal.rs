//! The explorer in a real terminal: input and replies in, frames out, drawing coalesced.

use std::io;
use std::time::{Duration, Instant};

use ratatui::crossterm::event::{
    self, DisableMouseCapture, EnableMouseCapture, Event, KeyEventKind, MouseEventKind,
};
use ratatui::crossterm::execute;

use super::app::{App, MouseKind};
use super::key::KeyChord;
use super::ui;

const FRAME: Duration = Duration::from_millis(16);

/// Runs until the user quits. The terminal is restored on return and on panic.
pub fn run(mut app: App) -> io::Result<()> {
    let mut terminal = ratatui::try_init()?;
    restore_only_for_the_ui_thread();
    execute!(io::stdout(), EnableMouseCapture)?;
    let result = event_loop(&mut terminal, &mut app);
    let _ = execute!(io::stdout(), DisableMouseCapture);
    ratatui::restore();
    result
}

fn event_loop(terminal: &mut ratatui::DefaultTerminal, app: &mut App) -> io::Result<()> {
    let size = terminal.size()?;
    app.on_resize(size.width, size.height);
    let mut dirty = true;
    let mut last_draw = Instant::now() - FRAME;
    while !app.quit {
        while let Some(reply) = app.worker().try_recv() {
            app.on_reply(reply);
            dirty = true;
        }
        if dirty && last_draw.elapsed() >= FRAME {
            terminal.draw(|frame| ui::render(frame, app))?;
            last_draw = Instant::now();
            dirty = false;
        }
        let wait = if dirty {
            FRAME.saturating_sub(last_draw.elapsed())
        } else {
            FRAME
        };
        if event::poll(wait)? {
            match event::read()? {
                Event::Key(key) if key.kind != KeyEventKind::Release => {
                    if let Some(chord) = KeyChord::from_event(&key) {
                        app.on_key(chord);
                    }
                }
                Event::Mouse(m) => {
                    let kind = match m.kind {
                        MouseEventKind::Down(_) => Some(MouseKind::Click),
                        MouseEventKind::ScrollUp => Some(MouseKind::ScrollUp),
                        MouseEventKind::ScrollDown => Some(MouseKind::ScrollDown),
                        _ => None,
                    };
                    if let Some(kind) = kind {
                        app.on_mouse(kind, m.column, m.row);
                    }
                }
                Event::Resize(w, h) => app.on_resize(w, h),
                _ => continue,
            }
            dirty = true;
        }
    }
    Ok(())
}

/// A panic on the UI thread restores the terminal (mouse capture included) before the
/// report prints. One on a background thread is logged and answered as a failed call;
/// the app keeps its screen.
fn restore_only_for_the_ui_thread() {
    let previous = std::panic::take_hook();
    let ui_thread = std::thread::current().id();
    std::panic::set_hook(Box::new(move |info| {
        if std::thread::current().id() == ui_thread {
            let _ = execute!(io::stdout(), DisableMouseCapture);
            previous(info);
        } else {
            tracing::error!(panic = %info, "background thread panicked");
        }
    }));
}
