//! The `flychess` binary: with no subcommand it opens the desktop app (eframe); subcommands do
//! the headless work. The command line itself lives in `cli/`; this file starts logging, parses
//! the arguments and reports the outcome. Started under a name beginning `flychess-uci` (a copy or
//! link of the binary, for chess programs that cannot pass arguments to an engine) it is the UCI
//! engine: `flychess-uci ARGS…` is `flychess uci ARGS…`.

mod cli;

use clap::Parser;

fn main() -> std::process::ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,wgpu=warn,naga=warn,eframe=warn,egui_wgpu=warn")),
        )
        .with_writer(std::io::stderr)
        .init();
    let mut args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let started_as = args.first().and_then(|a| std::path::Path::new(a).file_stem()).map(|s| s.to_string_lossy().to_lowercase());
    if started_as.is_some_and(|s| s.starts_with("flychess-uci")) {
        args.insert(1, "uci".into());
    }
    report(cli::run(cli::Cli::parse_from(args)))
}

fn report(result: anyhow::Result<()>) -> std::process::ExitCode {
    match result {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            std::process::ExitCode::FAILURE
        }
    }
}
