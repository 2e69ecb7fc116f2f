//! Where burn runs (`FitOn`): its ndarray backend on the CPU, or its wgpu backend on a hardware
//! GPU when there is one (a software adapter such as Mesa lavapipe counts as none), asked for once;
//! and the guard that points burn's default device at the CPU on a machine with no graphics adapter
//! at all. The readout's burn fit (`burn_fit`) and Charles's runs (`flychess_charles`) both choose
//! their device here.

use burn::tensor::Device;

use crate::error::{Error, Result};

/// Where a fit runs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FitOn {
    /// A hardware GPU when there is one (burn's wgpu backend), else the CPU. A software adapter
    /// such as Mesa lavapipe counts as none: on the CPU it is slower than the CPU backend.
    #[default]
    Auto,
    /// burn's ndarray backend on the CPU.
    Cpu,
    /// burn's wgpu backend on the best adapter there is, software ones included (an error without
    /// any adapter).
    Gpu,
}

/// The adapter burn's wgpu backend picks by default (wgpu's choice with high performance
/// preferred, as the GPU engine's `best_adapter`), asked for once: its name and whether it is a
/// hardware GPU.
fn gpu_adapter() -> Option<&'static (String, bool)> {
    static ADAPTER: std::sync::OnceLock<Option<(String, bool)>> = std::sync::OnceLock::new();
    ADAPTER
        .get_or_init(|| {
            let info = flychess_brain::brain::gpu::best_adapter().ok()?.get_info();
            Some((format!("{} ({:?})", info.name, info.backend), info.device_type != wgpu::DeviceType::Cpu))
        })
        .as_ref()
}

impl FitOn {
    /// The GPU adapter's name when the fit runs on one, None for the CPU.
    fn gpu(self) -> Result<Option<&'static String>> {
        Ok(match (self, gpu_adapter()) {
            (FitOn::Cpu, _) | (FitOn::Auto, None) => None,
            (FitOn::Auto, Some((name, hardware))) => hardware.then_some(name),
            (FitOn::Gpu, Some((name, _))) => Some(name),
            (FitOn::Gpu, None) => return Err(Error::Invalid("no GPU adapter for the fit (fit on the CPU instead)".into())),
        })
    }

    /// Whether the fit runs on a GPU (burn's wgpu backend) rather than the CPU.
    pub fn uses_gpu(self) -> Result<bool> {
        Ok(self.gpu()?.is_some())
    }

    /// Where the fit will run, for people.
    pub fn describe(self) -> Result<String> {
        Ok(match self.gpu()? {
            Some(name) => format!("burn wgpu on {name}"),
            None => "burn ndarray on the CPU".to_string(),
        })
    }

    /// The burn device (with autodiff) a fit runs on.
    pub fn device(self) -> Result<Device> {
        Ok(match self.gpu()? {
            Some(_) => Device::wgpu(burn::tensor::DeviceKind::DefaultDevice).autodiff(),
            // burn 0.22 marks ndarray deprecated in favour of its newer `flex` CPU backend; ndarray
            // is the one this project specifies and has measured.
            #[allow(deprecated)]
            None => Device::ndarray().autodiff(),
        })
    }
}

/// burn makes a loaded optimizer state's tensors on its default device (`load_record` takes no
/// device), which is wgpu wherever it is compiled in; on a machine with no graphics adapter at all
/// (no Vulkan, no OpenGL: a bare server, a fresh Debian) that device cannot be made and burn
/// panics on a thread of its own. There burn's default is pointed at its CPU backend
/// (`BURN_DEVICE=ndarray`, burn's own switch), once, before a record is loaded; a `BURN_DEVICE` the
/// user set is left alone.
pub fn default_device_that_exists() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        if std::env::var_os("BURN_DEVICE").is_none() && gpu_adapter().is_none() {
            tracing::info!("no graphics adapter: burn's default device is its CPU backend (BURN_DEVICE=ndarray)");
            // SAFETY: set once, before any burn device is made; nothing in this program reads or
            // writes the environment from another thread at the same time (burn reads
            // BURN_DEVICE only when it makes its default device, which this call precedes).
            unsafe { std::env::set_var("BURN_DEVICE", "ndarray") };
        }
    });
}
