//! `pi`: the pi coding agent command line.

fn main() {
    let mut args = std::env::args().skip(1);
    match args.next().as_deref() {
        Some("--version" | "-v") => println!("{}", pi_coding_agent::VERSION),
        _ => {
            eprintln!("Error: pi-rs is under construction; only --version works yet");
            std::process::exit(1);
        }
    }
}
