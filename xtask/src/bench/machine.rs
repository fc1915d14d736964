//! The machine a benchmark ran on: CPU model (`/proc/cpuinfo`), logical CPUs (`nproc`),
//! memory (`/proc/meminfo`), kernel, and the date.

use std::process::Command;

/// A description of the benchmark machine.
#[derive(Clone, Debug)]
pub struct Machine {
    /// CPU model name, e.g. `AMD EPYC 7B13`.
    pub cpu: String,
    /// Logical CPUs available to this process (`nproc`).
    pub cpus: usize,
    /// Total memory, MiB.
    pub memory_mib: u64,
    /// `uname -sr`.
    pub kernel: String,
    /// UTC date and time of the run, `YYYY-MM-DD HH:MM UTC`.
    pub date: String,
    /// `rustc --version`.
    pub rustc: String,
}

fn command_output(program: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(program).args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

/// The `model name` of the first CPU in `/proc/cpuinfo` text.
pub fn cpu_model(cpuinfo: &str) -> Option<String> {
    cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .and_then(|rest| rest.split_once(':'))
        .map(|(_, v)| v.trim().to_owned())
}

/// `MemTotal` of `/proc/meminfo` text, in MiB.
pub fn mem_total_mib(meminfo: &str) -> Option<u64> {
    meminfo
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map(|kib| kib / 1024)
}

impl Machine {
    /// Describes this machine now; unknown facts read `unknown` / 0.
    pub fn detect() -> Self {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
        let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
        Machine {
            cpu: cpu_model(&cpuinfo).unwrap_or_else(|| "unknown".into()),
            cpus: std::thread::available_parallelism().map_or(0, |n| n.get()),
            memory_mib: mem_total_mib(&meminfo).unwrap_or(0),
            kernel: command_output("uname", &["-sr"]).unwrap_or_else(|| "unknown".into()),
            date: chrono::Utc::now().format("%Y-%m-%d %H:%M UTC").to_string(),
            rustc: command_output("rustc", &["--version"]).unwrap_or_else(|| "unknown".into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_cpu_model_and_memory() {
        let cpuinfo = "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13\n";
        assert_eq!(cpu_model(cpuinfo).as_deref(), Some("AMD EPYC 7B13"));
        assert_eq!(mem_total_mib("MemTotal:       24683520 kB\n"), Some(24105));
        assert_eq!(cpu_model("nothing"), None);
    }
}
