//! The explorer in a real terminal. The loop sleeps until a key, a mouse event, a resize
//! or a background reply arrives; frames are coalesced to at most one per 16 ms.

use std::io;
use std::thread;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, select};
use ratatui::crossterm::event::{
    self, DisableMouseCapture, EnableMouseCapture, Event, KeyEventKind, MouseEventKind,
};
use ratatui::crossterm::execute;

use super::app::MouseKind;
use super::driver::Explorer;
use super::key::KeyChord;

const FRAME: Duration = Duration::from_millis(16);

/// Runs until the user quits. The terminal is restored on return and on panic.
pub fn run(mut explorer: Explorer) -> io::Result<()> {
    let mut terminal = ratatui::try_init()?;
    restore_only_for_the_ui_thread();
    execute!(io::stdout(), EnableMouseCapture)?;
    let result = event_loop(&mut terminal, &mut explorer);
    let _ = execute!(io::stdout(), DisableMouseCapture);
    ratatui::restore();
    result
}

/// Terminal events, read on their own thread so the loop can wait on them and on
/// replies at once.
fn input() -> io::Result<Receiver<io::Result<Event>>> {
    let (tx, rx) = crossbeam_channel::unbounded();
    thread::Builder::new()
        .name("strata-input".into())
        .spawn(move || {
            loop {
                let read = event::read();
                let failed = read.is_err();
                if tx.send(read).is_err() || failed {
                    return;
                }
            }
        })?;
    Ok(rx)
}

fn event_loop(terminal: &mut ratatui::DefaultTerminal, explorer: &mut Explorer) -> io::Result<()> {
    let size = terminal.size()?;
    explorer.on_resize(size.width, size.height);
    let events = input()?;
    let mut replies = explorer.replies();
    let mut dirty = true;
    let mut last_draw = Instant::now() - FRAME;
    while !explorer.quit() {
        if dirty && last_draw.elapsed() >= FRAME {
            terminal.draw(|frame| explorer.render(frame))?;
            last_draw = Instant::now();
            dirty = false;
        }
        // Nothing to draw: sleep until something happens. A frame due: until it is.
        let frame_due = if dirty {
            crossbeam_channel::after(FRAME.saturating_sub(last_draw.elapsed()))
        } else {
            crossbeam_channel::never()
        };
        let event = select! {
            recv(events) -> e => Some(e),
            recv(replies) -> r => {
                match r {
                    Ok(raw) => {
                        explorer.on_raw(raw);
                        dirty = true;
                    }
                    // The worker stopped: wait on input alone from now on.
                    Err(_) => replies = crossbeam_channel::never(),
                }
                None
            }
            recv(frame_due) -> _ => None,
        };
        let Some(event) = event else {
            continue;
        };
        let event = event.map_err(|_| io::Error::other("the terminal input closed"))??;
        match event {
            Event::Key(key) if key.kind != KeyEventKind::Release => {
                if let Some(chord) = KeyChord::from_event(&key) {
                    explorer.on_key(chord);
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
                    explorer.on_mouse(kind, m.column, m.row);
                }
            }
            Event::Resize(w, h) => explorer.on_resize(w, h),
            _ => continue,
        }
        dirty = true;
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
