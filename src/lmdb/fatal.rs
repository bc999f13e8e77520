//! The last line against a damaged file: LMDB reads its pages through a map and trusts them,
//! and a page garbled in just the wrong place can still send a read past the end of the file
//! (SIGBUS) or LMDB into an assertion (SIGABRT). Instead of dying silently by the signal, the
//! process says which file it was reading, what that means and what to do, and exits with
//! [`DAMAGED_EXIT`]. Faults outside every LMDB map are not ours to explain: they go on to the
//! handler that was there before (Rust's own, which reports a stack overflow).
//!
//! Everything the handler does is async-signal-safe: it reads the fixed table of
//! [`super::mapped`] and calls `write` and `_exit`.

use std::cell::UnsafeCell;
use std::sync::Once;

use super::mapped;

/// The exit status of a process stopped by a damaged file.
pub const DAMAGED_EXIT: i32 = 75;

const SIGNALS: [libc::c_int; 3] = [libc::SIGBUS, libc::SIGSEGV, libc::SIGABRT];

struct Previous(UnsafeCell<[libc::sigaction; 3]>);
// SAFETY: written once in `install`, before the handlers that read it are in place.
unsafe impl Sync for Previous {}
// SAFETY: an all-zero sigaction is SIG_DFL with no flags.
static PREVIOUS: Previous = Previous(UnsafeCell::new(unsafe { std::mem::zeroed() }));

/// Puts the handler in place, once per process (the binary calls it first thing).
pub fn install() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        for (i, &signal) in SIGNALS.iter().enumerate() {
            // SAFETY: a zeroed sigaction with our handler, SA_SIGINFO for the fault address,
            // SA_ONSTACK for the alternate stack Rust gives each thread; the previous action
            // is kept to chain to.
            unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                action.sa_sigaction = on_fatal as *const () as usize;
                action.sa_flags = libc::SA_SIGINFO | libc::SA_ONSTACK;
                libc::sigemptyset(&mut action.sa_mask);
                let previous = &mut (*PREVIOUS.0.get())[i];
                libc::sigaction(signal, &action, previous);
            }
        }
    });
}

fn say(bytes: &[u8]) {
    // SAFETY: write(2) on stderr with a valid buffer; a short or failed write is let be.
    unsafe {
        libc::write(2, bytes.as_ptr().cast(), bytes.len());
    }
}

/// `n` in decimal, without allocating.
fn say_number(mut n: usize) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    loop {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    say(&digits[at..]);
}

/// Control characters in a path are written as `?`, so a hostile file name cannot reach the
/// terminal raw even here.
fn say_path(path: &[u8]) {
    let mut chunk = [0u8; 64];
    for part in path.chunks(chunk.len()) {
        for (out, &b) in chunk.iter_mut().zip(part) {
            *out = if b < 0x20 || b == 0x7f { b'?' } else { b };
        }
        say(&chunk[..part.len()]);
    }
}

/// The store files this process has mapped, one per line.
fn say_open_files() {
    for m in mapped::all() {
        say(b"\n  ");
        say_path(m.path());
    }
}

/// What to do, then the exit.
fn advise_and_exit() -> ! {
    say(
        b"\nRun `strata check`: it names what is damaged. A damaged store must be restored \
          from a backup; a damaged recall index can be moved aside, and `strata index` \
          rebuilds it from the store.\n",
    );
    // SAFETY: _exit is async-signal-safe and ends the process at once.
    unsafe { libc::_exit(DAMAGED_EXIT) }
}

extern "C" fn on_fatal(
    signal: libc::c_int,
    info: *mut libc::siginfo_t,
    context: *mut libc::c_void,
) {
    let name: &[u8] = match signal {
        libc::SIGBUS => b"SIGBUS",
        libc::SIGSEGV => b"SIGSEGV",
        _ => b"SIGABRT",
    };
    if signal == libc::SIGABRT {
        say(b"\nstrata: stopped (SIGABRT) while reading its files, which may be damaged:");
        say_open_files();
        advise_and_exit();
    }
    // SAFETY: the kernel hands a valid siginfo to an SA_SIGINFO handler.
    let addr = unsafe { (*info).si_addr() } as usize;
    if mapped::find(addr).is_none() && near_the_stack(addr, context) {
        // A stack overflow: Rust's own handler says so.
        chain(signal, info, context);
        return;
    }
    say(b"\nstrata: stopped (");
    say(name);
    say(b")");
    let mut line = [0u8; 512];
    if let Some(file) = mapped::find(addr) {
        say(b" reading ");
        say_path(file.path());
        if let Some(offset) = file.offset_of(addr) {
            say(b" at byte ");
            say_number(offset);
        }
        say(b": the file is damaged (shorter than its pages say, or a page garbled)");
    } else if let Some(path) = mapped_file_at(addr, &mut line) {
        // Past the end of another mapped file (a recall index's).
        say(b" reading ");
        say_path(path);
        say(b", which is shorter than it should be or damaged");
    } else {
        // A pointer a garbled page sent elsewhere: LMDB trusts its pages.
        say(b" following a pointer read from a file that may be damaged; the store files open were:");
        say_open_files();
    }
    advise_and_exit();
}

/// Whether a fault at `addr` is on the stack the faulting thread was using: a stack overflow
/// hits the guard page just below its stack pointer.
fn near_the_stack(addr: usize, context: *mut libc::c_void) -> bool {
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    {
        // SAFETY: an SA_SIGINFO handler's third argument is the interrupted ucontext.
        let sp = unsafe {
            (*(context as *const libc::ucontext_t)).uc_mcontext.gregs[libc::REG_RSP as usize]
        } as usize;
        addr.abs_diff(sp) < (1 << 20)
    }
    #[cfg(not(all(target_os = "linux", target_arch = "x86_64")))]
    {
        let _ = (addr, context);
        true
    }
}

/// The path of the file mapped at `addr`, from `/proc/self/maps`, read with raw syscalls into
/// `line` (async-signal-safe: no allocation).
fn mapped_file_at(addr: usize, line: &mut [u8; 512]) -> Option<&[u8]> {
    // SAFETY: open/read/close on a NUL-terminated path and buffers we own.
    let fd = unsafe { libc::open(c"/proc/self/maps".as_ptr(), libc::O_RDONLY) };
    if fd < 0 {
        return None;
    }
    let mut chunk = [0u8; 1024];
    let mut len = 0usize;
    let mut found = None;
    'read: loop {
        // SAFETY: reading into a buffer we own, within its length.
        let n = unsafe { libc::read(fd, chunk.as_mut_ptr().cast(), chunk.len()) };
        if n <= 0 {
            break;
        }
        for &b in &chunk[..n as usize] {
            if b != b'\n' {
                if len < line.len() {
                    line[len] = b;
                    len += 1;
                }
                continue;
            }
            if let Some(path) = path_if_holds(&line[..len], addr) {
                found = Some(path);
                break 'read;
            }
            len = 0;
        }
    }
    // SAFETY: closing the descriptor opened above.
    unsafe { libc::close(fd) };
    let (from, to) = found?;
    Some(&line[from..to])
}

/// Where in a `/proc/self/maps` line its path is, when the line's range holds `addr`.
fn path_if_holds(line: &[u8], addr: usize) -> Option<(usize, usize)> {
    let hex = |s: &[u8]| {
        s.iter().try_fold(0usize, |n, &c| {
            let d = (c as char).to_digit(16)?;
            n.checked_mul(16)?.checked_add(d as usize)
        })
    };
    let dash = line.iter().position(|&b| b == b'-')?;
    let space = line.iter().position(|&b| b == b' ')?;
    let (start, end) = (hex(&line[..dash])?, hex(&line[dash + 1..space])?);
    if addr < start || addr >= end {
        return None;
    }
    let slash = line.iter().position(|&b| b == b'/')?;
    Some((slash, line.len()))
}

/// Hands the signal to the handler that was in place before ours, or to the default action.
fn chain(signal: libc::c_int, info: *mut libc::siginfo_t, context: *mut libc::c_void) {
    let Some(i) = SIGNALS.iter().position(|&s| s == signal) else {
        return;
    };
    // SAFETY: PREVIOUS was filled before this handler was installed and is never written again.
    let previous = unsafe { (*PREVIOUS.0.get())[i] };
    let handler = previous.sa_sigaction;
    if handler == libc::SIG_DFL || handler == libc::SIG_IGN {
        // SAFETY: restoring the default action; the faulting instruction runs again and
        // the kernel ends the process as it would have.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = libc::SIG_DFL;
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
    } else if previous.sa_flags & libc::SA_SIGINFO != 0 {
        // SAFETY: the previous handler was installed with SA_SIGINFO, so it takes these three.
        let f: extern "C" fn(libc::c_int, *mut libc::siginfo_t, *mut libc::c_void) =
            unsafe { std::mem::transmute(handler) };
        f(signal, info, context);
    } else {
        // SAFETY: a plain handler takes the signal number alone.
        let f: extern "C" fn(libc::c_int) = unsafe { std::mem::transmute(handler) };
        f(signal);
    }
}
