//! The peak resident set of this process, and filling a bench store in a child process so
//! that a bench's peak is its own work's, not the fill's.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use color_eyre::eyre::{Result, eyre};

use crate::cli::context::Context;

/// This process's peak resident set (the kernel's `VmHWM`) since it started or since the
/// last [`reset_peak`], in bytes.
pub fn peak_bytes() -> Option<u64> {
    status_bytes(
        &std::fs::read_to_string("/proc/self/status").ok()?,
        "VmHWM:",
    )
}

/// The field `name` (`VmHWM:`, in kB) of a `/proc/PID/status` text, in bytes.
fn status_bytes(status: &str, name: &str) -> Option<u64> {
    status
        .lines()
        .find_map(|l| l.strip_prefix(name))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|kb| kb.parse::<u64>().ok())
        .map(|kb| kb * 1024)
}

/// Returns freed heap to the kernel and starts the peak again from the resident set now
/// (`/proc/self/clear_refs`, Linux ≥ 4.0). Whatever stays resident from earlier work counts
/// in the next peak, so that peak is an upper bound of the work after this call.
pub fn reset_peak() -> Result<()> {
    // SAFETY: malloc_trim only returns free memory at the top of glibc's heaps to the kernel.
    unsafe {
        libc::malloc_trim(0);
    }
    std::fs::write("/proc/self/clear_refs", "5")
        .map_err(|e| eyre!("cannot reset the peak resident set: {e}"))
}

/// Fills the embedded store in the data directory `data` with synthetic episodes `0..n` in
/// a `strata bench fill` child process (the same path as [`super::fill`]).
pub fn fill_in_child(ctx: &Context, data: &Path, n: usize) -> Result<()> {
    run_child(ctx, data, &["bench", "fill", "--episodes", &n.to_string()]).map(|_| ())
}

/// What a child process took.
pub struct ChildRun {
    pub seconds: f64,
    /// The kernel's high-water mark: heap and mapped file pages together.
    pub peak_rss_bytes: u64,
    /// Sampled every 20 ms: the process's own memory (heap, stacks) ...
    pub peak_anon_bytes: u64,
    /// ... and the file pages mapped into it (the store's), which the kernel may drop at will.
    pub peak_file_mapped_bytes: u64,
}

/// Runs `strata ARGS` on the data directory `data` with the hash embedder (the benches'),
/// waiting for it.
pub fn run_child(ctx: &Context, data: &Path, args: &[&str]) -> Result<ChildRun> {
    let mut child = Command::new(std::env::current_exe()?);
    child
        .env("STRATA_EMBEDDER", "hash")
        .arg("--data")
        .arg(data)
        .args(["--now", &ctx.now.to_rfc3339()]);
    if ctx.allow_future_now {
        child.arg("--allow-future-now");
    }
    let started = Instant::now();
    // The bench's own stdout is its JSON: what the child prints goes to stderr.
    let pid = child.args(args).stdout(std::io::stderr()).spawn()?.id();
    let sampler = ResidentSampler::start(pid);
    let (status, peak_rss_bytes) = wait_with_peak_rss(pid)?;
    let (peak_anon_bytes, peak_file_mapped_bytes) = sampler.stop();
    if status != 0 {
        return Err(eyre!(
            "`strata {}` failed (wait status {status})",
            args.join(" ")
        ));
    }
    Ok(ChildRun {
        seconds: started.elapsed().as_secs_f64(),
        peak_rss_bytes,
        peak_anon_bytes,
        peak_file_mapped_bytes,
    })
}

/// Waits for the child and reads its peak resident set from the kernel's accounting.
pub fn wait_with_peak_rss(pid: u32) -> Result<(i32, u64)> {
    let mut status = 0;
    // SAFETY: rusage is a plain C struct the kernel fills in.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our own child, not yet waited for; both out-pointers are valid.
    let rc = unsafe { libc::wait4(pid as libc::pid_t, &mut status, 0, &mut usage) };
    if rc < 0 {
        return Err(std::io::Error::last_os_error().into());
    }
    // ru_maxrss is in KiB on Linux.
    Ok((status, (usage.ru_maxrss as u64) * 1024))
}

/// RssAnon and RssFile of a process, in bytes, from /proc.
pub fn resident(pid: u32) -> Option<(u64, u64)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    Some((
        status_bytes(&status, "RssAnon:")?,
        status_bytes(&status, "RssFile:")?,
    ))
}

/// Samples a process's [`resident`] memory every 20 ms until stopped, keeping the peaks.
pub struct ResidentSampler {
    running: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<(u64, u64)>,
}

impl ResidentSampler {
    pub fn start(pid: u32) -> ResidentSampler {
        let running = Arc::new(AtomicBool::new(true));
        let thread = {
            let running = running.clone();
            std::thread::spawn(move || {
                let (mut anon, mut file) = (0u64, 0u64);
                while running.load(Ordering::Acquire) {
                    if let Some((a, f)) = resident(pid) {
                        anon = anon.max(a);
                        file = file.max(f);
                    }
                    std::thread::sleep(Duration::from_millis(20));
                }
                (anon, file)
            })
        };
        ResidentSampler { running, thread }
    }

    /// The peak (RssAnon, RssFile) seen, in bytes.
    pub fn stop(self) -> (u64, u64) {
        self.running.store(false, Ordering::Release);
        self.thread.join().unwrap_or((0, 0))
    }
}
