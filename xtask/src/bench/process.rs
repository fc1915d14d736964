//! Whole-process measurements: wall time and peak RSS of one child, and medians over runs that
//! alternate two programs (the figures of record are the ratios: the machines are noisy).

use std::fs::File;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

/// One run of one program.
#[derive(Clone, Debug)]
pub struct Sample {
    /// Wall time from spawn to exit, in seconds.
    pub wall_s: f64,
    /// Peak resident set of the child (`VmHWM` at exit), in KiB; 0 when not probed.
    pub peak_rss_kib: u64,
    /// Exit code, or 128 + signal number when killed by a signal.
    pub exit_code: i32,
}

/// How a run is measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Probe {
    /// Wall time only: a plain spawn and wait, nothing between the child and the clock.
    Wall,
    /// Peak RSS: the child runs under `ptrace`, stopped after `execve` and at exit (the
    /// stops wait for this process to be scheduled, which inflates the wall time of short
    /// runs by milliseconds, so its wall time is not used).
    PeakRss,
}

/// Runs `cmd` to completion with stdin from `/dev/null` and stdout/stderr into files of
/// `out_dir` (`stdout.txt`, `stderr.txt`), timing it and, with [`Probe::PeakRss`], reading
/// its peak RSS (0 with [`Probe::Wall`]).
///
/// The peak RSS is the child's `VmHWM` read from `/proc/<pid>/status` when it exits (the
/// child runs under `ptrace` with `PTRACE_O_TRACEEXIT`, which stops it at exit with its
/// memory still mapped). `ru_maxrss` from `wait4` is only the fallback: Linux carries the
/// spawning process's high-water mark across `execve` into it, so for a small program it
/// reports the spawner's size (8.5 MiB for this xtask), not the program's.
///
/// Errors: the spawn failed, `wait4` failed or the output files could not be created.
pub fn measure(cmd: &mut Command, out_dir: &Path, probe: Probe) -> Result<Sample, String> {
    let stdout = File::create(out_dir.join("stdout.txt")).map_err(|e| e.to_string())?;
    let stderr = File::create(out_dir.join("stderr.txt")).map_err(|e| e.to_string())?;
    cmd.stdin(Stdio::null())
        .stdout(Stdio::from(stdout))
        .stderr(Stdio::from(stderr));
    if probe == Probe::PeakRss {
        // SAFETY: the closure runs in the forked child before `execve` and only makes one
        // async-signal-safe system call.
        unsafe {
            cmd.pre_exec(|| {
                let null = std::ptr::null_mut::<libc::c_void>();
                if libc::ptrace(libc::PTRACE_TRACEME, 0, null, null) == -1 {
                    return Err(std::io::Error::last_os_error());
                }
                Ok(())
            });
        }
    }
    let start = Instant::now();
    let child = cmd
        .spawn()
        .map_err(|e| format!("cannot start {:?}: {e}", cmd.get_program()))?;
    let pid = child.id() as libc::pid_t;
    let null = std::ptr::null_mut::<libc::c_void>();
    let mut hwm_kib = 0;
    let mut status: libc::c_int = 0;
    // SAFETY: an all-zero `rusage` is a valid value of this plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    loop {
        // SAFETY: `pid` is our own unreaped child; `status` and `usage` are valid out
        // pointers. The `Child` handle is dropped without waiting, so nothing else reaps it.
        let rc = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
        if rc < 0 {
            return Err(format!("wait4: {}", std::io::Error::last_os_error()));
        }
        if !libc::WIFSTOPPED(status) {
            break;
        }
        let signal = libc::WSTOPSIG(status);
        let event = (status >> 16) & 0xff;
        let mut deliver = 0;
        if signal == libc::SIGTRAP && event == libc::PTRACE_EVENT_EXIT {
            hwm_kib = vm_hwm_kib(pid).unwrap_or(0);
        } else if signal == libc::SIGTRAP && event == 0 && hwm_kib == 0 {
            // The stop after `execve`: ask for a stop at exit.
            // SAFETY: `pid` is our stopped tracee.
            unsafe {
                libc::ptrace(
                    libc::PTRACE_SETOPTIONS,
                    pid,
                    null,
                    libc::PTRACE_O_TRACEEXIT as usize as *mut libc::c_void,
                )
            };
        } else {
            deliver = signal;
        }
        // SAFETY: `pid` is our stopped tracee; `deliver` is 0 or the signal that stopped it.
        unsafe {
            libc::ptrace(
                libc::PTRACE_CONT,
                pid,
                null,
                deliver as usize as *mut libc::c_void,
            )
        };
    }
    let wall_s = start.elapsed().as_secs_f64();
    drop(child);
    let exit_code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        128 + libc::WTERMSIG(status)
    };
    let peak_rss_kib = match probe {
        Probe::Wall => 0,
        Probe::PeakRss if hwm_kib > 0 => hwm_kib,
        Probe::PeakRss => u64::try_from(usage.ru_maxrss).unwrap_or(0),
    };
    Ok(Sample {
        wall_s,
        peak_rss_kib,
        exit_code,
    })
}

/// `VmHWM` of process `pid`, KiB.
fn vm_hwm_kib(pid: libc::pid_t) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// The median of `values` (mean of the two middle values for an even count; NaN when empty).
pub fn median(values: impl IntoIterator<Item = f64>) -> f64 {
    let mut v: Vec<f64> = values.into_iter().collect();
    v.sort_by(f64::total_cmp);
    match v.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => v[n / 2],
        n => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// Medians of a series of samples.
#[derive(Clone, Copy, Debug)]
pub struct Summary {
    /// Median wall time, seconds.
    pub wall_s: f64,
    /// Median peak RSS, MiB.
    pub peak_rss_mib: f64,
    /// Number of runs.
    pub runs: usize,
}

impl Summary {
    /// Medians of `samples`.
    pub fn of(samples: &[Sample]) -> Self {
        Summary {
            wall_s: median(samples.iter().map(|s| s.wall_s)),
            peak_rss_mib: median(samples.iter().map(|s| s.peak_rss_kib as f64 / 1024.0)),
            runs: samples.len(),
        }
    }
}

/// Runs `a` and `b` alternately `runs` times each (`a` first in every pair), returning the
/// samples. Warm-up runs are the caller's (they double as capability checks).
///
/// Each closure performs one complete run (setup, measurement, checks) and returns its sample
/// or an error; the first error stops the series.
pub fn alternate(
    runs: usize,
    mut a: impl FnMut() -> Result<Sample, String>,
    mut b: Option<&mut dyn FnMut() -> Result<Sample, String>>,
) -> Result<(Vec<Sample>, Vec<Sample>), String> {
    let (mut sa, mut sb) = (Vec::with_capacity(runs), Vec::with_capacity(runs));
    for _ in 0..runs {
        sa.push(a()?);
        if let Some(b) = b.as_mut() {
            sb.push(b()?);
        }
    }
    Ok((sa, sb))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts() {
        assert_eq!(median([3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median([4.0, 1.0, 3.0, 2.0]), 2.5);
        assert!(median([]).is_nan());
    }

    #[test]
    fn measure_reports_exit_code_and_rss_of_the_child() {
        let dir = tempfile::tempdir().unwrap();
        let s = measure(
            Command::new("sh").args(["-c", "echo hi; exit 3"]),
            dir.path(),
            Probe::PeakRss,
        )
        .unwrap();
        assert_eq!(s.exit_code, 3);
        assert!(s.peak_rss_kib > 0);
        let out = std::fs::read_to_string(dir.path().join("stdout.txt")).unwrap();
        assert_eq!(out, "hi\n");
        // The child's own high-water mark, not this (much larger) test process's.
        let big = measure(
            Command::new("sh").args([
                "-c",
                "x=$(head -c 30000000 /dev/zero | tr '\\0' a); echo ${#x}",
            ]),
            dir.path(),
            Probe::PeakRss,
        )
        .unwrap();
        assert!(
            big.peak_rss_kib > s.peak_rss_kib + 20_000,
            "{} vs {}",
            big.peak_rss_kib,
            s.peak_rss_kib
        );
        assert!(s.wall_s > 0.0);
        // Untraced: the exit code and the time, no RSS.
        let w = measure(
            Command::new("sh").args(["-c", "echo hi; exit 4"]),
            dir.path(),
            Probe::Wall,
        )
        .unwrap();
        assert_eq!((w.exit_code, w.peak_rss_kib), (4, 0));
        assert!(w.wall_s > 0.0);
    }

    #[test]
    fn alternate_runs_each_program_runs_times() {
        let (mut na, mut nb) = (0, 0);
        let sample = || Sample {
            wall_s: 1.0,
            peak_rss_kib: 1024,
            exit_code: 0,
        };
        let mut b = || {
            nb += 1;
            Ok(sample())
        };
        let (a, bs) = alternate(
            5,
            || {
                na += 1;
                Ok(sample())
            },
            Some(&mut b),
        )
        .unwrap();
        assert_eq!((a.len(), bs.len()), (5, 5));
        assert_eq!((na, nb), (5, 5));
        assert_eq!(Summary::of(&a).peak_rss_mib, 1.0);
    }
}
