//! The process's memory figures the long jobs print: the peak resident set (Linux's VmHWM, the
//! peak working set on Windows) and, on Linux, any field of /proc/self/status (the bench's
//! memory rows read VmRSS before and after a think).

/// A memory figure of this process in MB from /proc/self/status (`VmHWM`: the peak resident
/// set, `VmRSS`: now; Linux only, None elsewhere).
#[cfg(target_os = "linux")]
pub(crate) fn status_mb(field: &str) -> Option<f64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

// Elsewhere there is no /proc to read (under Wine a read of "/proc/self/status" would even reach
// the Linux process hosting Wine and report its figure).
#[cfg(not(target_os = "linux"))]
pub(crate) fn status_mb(_field: &str) -> Option<f64> {
    None
}

/// The peak resident memory of this process in MB: Linux's VmHWM; on Windows the peak working
/// set (GetProcessMemoryInfo); None elsewhere.
pub(crate) fn peak_memory_mb() -> Option<f64> {
    #[cfg(windows)]
    {
        use windows_sys::Win32::System::ProcessStatus::{GetProcessMemoryInfo, PROCESS_MEMORY_COUNTERS};
        use windows_sys::Win32::System::Threading::GetCurrentProcess;
        let mut counters: PROCESS_MEMORY_COUNTERS = unsafe { std::mem::zeroed() };
        let size = std::mem::size_of::<PROCESS_MEMORY_COUNTERS>() as u32;
        // SAFETY: `counters` is a PROCESS_MEMORY_COUNTERS of the size passed, written by the call;
        // GetCurrentProcess returns a pseudo-handle that needs no closing.
        let ok = unsafe { GetProcessMemoryInfo(GetCurrentProcess(), &mut counters, size) };
        return (ok != 0).then(|| counters.PeakWorkingSetSize as f64 / (1024.0 * 1024.0));
    }
    #[allow(unreachable_code)]
    status_mb("VmHWM:")
}
