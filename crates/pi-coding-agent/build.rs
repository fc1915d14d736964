//! Link settings of the `pi` binary.
//!
//! On x86-64 Linux `pi` is linked as a position-dependent executable: a position-independent
//! one carries ~21,000 relative relocations (vtables, `&'static str` tables such as the
//! built-in model list) that the dynamic loader applies at every start, writing to ~100
//! pages of `.data.rel.ro` before `main` runs — most of the instructions and page faults of
//! `pi --version` (docs/benchmarks.md). The shared libraries stay position-independent and
//! randomized; only the executable's own image loads at a fixed address.

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let os = std::env::var("CARGO_CFG_TARGET_OS").unwrap_or_default();
    let arch = std::env::var("CARGO_CFG_TARGET_ARCH").unwrap_or_default();
    let env = std::env::var("CARGO_CFG_TARGET_ENV").unwrap_or_default();
    if os == "linux" && arch == "x86_64" && env == "gnu" {
        println!("cargo:rustc-link-arg-bin=pi=-no-pie");
    }
}
