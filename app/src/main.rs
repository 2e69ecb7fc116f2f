//! The `flychess` binary: with no subcommand it opens the desktop app (eframe); subcommands do
//! the headless work. The command line itself lives in `cli/`; this file starts logging, parses
//! the arguments and reports the outcome. Started under a name beginning `flychess-uci` (a copy or
//! link of the binary, for chess programs that cannot pass arguments to an engine) it is the UCI
//! engine: `flychess-uci ARGS…` is `flychess uci ARGS…`.
#![warn(clippy::too_many_lines)]
// A front door, not a view: the command line reads and writes files (app/clippy.toml forbids that to the ui only).
#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

mod cli;

use clap::Parser;

fn main() -> std::process::ExitCode {
    // Mesa's Vulkan device-select layer connects to Wayland while wgpu looks for an adapter and
    // prints "XDG_RUNTIME_DIR is invalid" twice where there is none (every `uci` start on a
    // headless machine); wgpu chooses the adapter itself, so the layer is left out unless the
    // user set it.
    if std::env::var_os("NODEVICE_SELECT").is_none() {
        // SAFETY: the first statement of main, before any thread of this process exists.
        unsafe { std::env::set_var("NODEVICE_SELECT", "1") };
    }
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,wgpu=warn,naga=warn,eframe=warn,egui_wgpu=warn")),
        )
        .with_writer(std::io::stderr)
        // Colour codes only for a terminal: a redirected stderr (a log, a GUI's engine window)
        // reads plain words.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    let mut args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    #[cfg(windows)]
    if args.len() == 1 {
        let_go_of_a_console_of_its_own();
    }
    let started_as = args.first().and_then(|a| std::path::Path::new(a).file_stem()).map(|s| s.to_string_lossy().to_lowercase());
    if started_as.is_some_and(|s| s.starts_with("flychess-uci")) {
        args.insert(1, "uci".into());
    }
    report(cli::run(cli::Cli::parse_from(args)))
}

/// Windows: `flychess.exe` is a console program (so `flychess.exe eval --json` prints where it
/// was started), and Windows gives a double-clicked console program a console window of its own.
/// Started with no arguments (the window) and alone on its console, it closes that console.
#[cfg(windows)]
fn let_go_of_a_console_of_its_own() {
    use windows_sys::Win32::System::Console::{FreeConsole, GetConsoleProcessList};
    let mut processes = [0u32; 2];
    // SAFETY: the buffer holds `processes.len()` process ids and outlives the call; FreeConsole
    // takes no arguments and only detaches this process from its console.
    unsafe {
        if GetConsoleProcessList(processes.as_mut_ptr(), processes.len() as u32) == 1 {
            FreeConsole();
        }
    }
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
