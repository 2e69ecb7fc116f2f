//! The `flychess` binary: with no subcommand it opens the desktop app (eframe); subcommands do
//! the headless work. The command line itself lives in `cli/`; this file starts logging, parses
//! the arguments and reports the outcome.

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
    report(cli::run(cli::Cli::parse()))
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
