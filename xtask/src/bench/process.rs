//! Whole-process measurements: wall time and peak RSS of one child, and medians over runs that
//! alternate two programs (the figures of record are the ratios: the machines are noisy).

use std::fs::File;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

/// One run of one program.
#[derive(Clone, Debug)]
pub struct Sample {
    /// Wall time from spawn to exit, in seconds.
    pub wall_s: f64,
    /// Peak resident set of the child (`ru_maxrss` from `wait4`), in KiB.
    pub peak_rss_kib: u64,
    /// Exit code, or 128 + signal number when killed by a signal.
    pub exit_code: i32,
}

/// Runs `cmd` to completion with stdin from `/dev/null` and stdout/stderr into files of
/// `out_dir` (`stdout.txt`, `stderr.txt`), timing it and reading its peak RSS.
///
/// Errors: the spawn failed, `wait4` failed or the output files could not be created.
pub fn measure(cmd: &mut Command, out_dir: &Path) -> Result<Sample, String> {
    let stdout = File::create(out_dir.join("stdout.txt")).map_err(|e| e.to_string())?;
    let stderr = File::create(out_dir.join("stderr.txt")).map_err(|e| e.to_string())?;
    cmd.stdin(Stdio::null())
        .stdout(Stdio::from(stdout))
        .stderr(Stdio::from(stderr));
    let start = Instant::now();
    let child = cmd
        .spawn()
        .map_err(|e| format!("cannot start {:?}: {e}", cmd.get_program()))?;
    let pid = child.id() as libc::pid_t;
    let mut status: libc::c_int = 0;
    // SAFETY: an all-zero `rusage` is a valid value of this plain C struct.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `pid` is our own unreaped child; `status` and `usage` are valid out pointers.
    // The `Child` handle is dropped without waiting, so nothing else reaps the pid.
    let rc = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    let wall_s = start.elapsed().as_secs_f64();
    drop(child);
    if rc < 0 {
        return Err(format!("wait4: {}", std::io::Error::last_os_error()));
    }
    let exit_code = if libc::WIFEXITED(status) {
        libc::WEXITSTATUS(status)
    } else {
        128 + libc::WTERMSIG(status)
    };
    Ok(Sample {
        wall_s,
        peak_rss_kib: u64::try_from(usage.ru_maxrss).unwrap_or(0),
        exit_code,
    })
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
        )
        .unwrap();
        assert_eq!(s.exit_code, 3);
        assert!(s.peak_rss_kib > 0);
        assert!(s.wall_s > 0.0);
        let out = std::fs::read_to_string(dir.path().join("stdout.txt")).unwrap();
        assert_eq!(out, "hi\n");
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
