//! The desktop window (eframe). For now it owns the start-up path every later tab builds on: the
//! brain is loaded (or generated and built on first run) off the UI thread with a progress bar,
//! its provenance is always on screen ("synthetic stand-in" or "MaleCNS v1.0"), its summary is
//! shown, and the real connectome can be fetched with one click (resumable, checked, progress).

use std::path::PathBuf;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::thread;

use anyhow::{anyhow, Result};
use eframe::egui;

use flychess_sim::connectome::download::{fetch, Fetch};
use flychess_sim::connectome::release::{self, DOWNLOADS};
use flychess_sim::connectome::Info;
use flychess_sim::store::{self, BrainSpec, Tables};

/// What a background job reports to the window.
enum Report {
    Progress { stage: String, fraction: f64 },
    Ready { info: Box<Info>, checksum: String },
    Failed(String),
}

enum BrainState {
    Loading { stage: String, fraction: f64 },
    Ready { info: Box<Info>, checksum: String },
    Failed(String),
}

struct FlyChessApp {
    data: PathBuf,
    /// The adapter eframe draws with (the brain view and a GPU engine share it).
    adapter: String,
    brain: BrainState,
    reports: Receiver<Report>,
    sender: Sender<Report>,
    download: Option<(String, f64)>,
    /// `--screenshot FILE`: save the window once the brain is ready, then close.
    screenshot: Option<Screenshot>,
}

struct Screenshot {
    path: PathBuf,
    /// Where the pixels arrive once asked for.
    arrived: Option<Receiver<std::sync::Arc<egui::ColorImage>>>,
}

/// Loads (or builds) `spec` on a worker thread, reporting to `tx`, waking the window each time.
fn start_brain_job(spec: BrainSpec, data: PathBuf, tx: Sender<Report>, ctx: egui::Context) {
    thread::spawn(move || {
        let progress = {
            let tx = tx.clone();
            let ctx = ctx.clone();
            move |stage: &str, fraction: f64| {
                let _ = tx.send(Report::Progress { stage: stage.to_string(), fraction });
                ctx.request_repaint();
            }
        };
        let progress = std::sync::Mutex::new(progress);
        let report = match store::ensure(&spec, &data, &|s, f| {
            if let Ok(p) = progress.lock() {
                p(s, f)
            }
        }) {
            Ok(loaded) => Report::Ready { info: Box::new(loaded.connectome.info()), checksum: loaded.checksum },
            Err(e) => Report::Failed(e.to_string()),
        };
        let _ = tx.send(report);
        ctx.request_repaint();
    });
}

impl FlyChessApp {
    fn new(cc: &eframe::CreationContext<'_>, data: PathBuf, screenshot: Option<PathBuf>) -> Self {
        let (sender, reports) = channel();
        start_brain_job(BrainSpec::default(), data.clone(), sender.clone(), cc.egui_ctx.clone());
        let adapter = match &cc.wgpu_render_state {
            Some(rs) => {
                let info = rs.adapter.get_info();
                let kind = if info.device_type == eframe::wgpu::DeviceType::Cpu { "software renderer" } else { "GPU" };
                format!("{} ({kind}, {:?})", info.name, info.backend)
            }
            None => "no wgpu adapter".into(),
        };
        tracing::info!("drawing with {adapter}");
        FlyChessApp {
            data,
            adapter,
            brain: BrainState::Loading { stage: "starting".into(), fraction: 0.0 },
            reports,
            sender,
            download: None,
            screenshot: screenshot.map(|path| Screenshot { path, arrived: None }),
        }
    }

    fn start_download(&mut self, ctx: &egui::Context) {
        let dir = self.data.join("connectome").join(format!("malecns-{}", release::RELEASE));
        let (tx, ctx, data) = (self.sender.clone(), ctx.clone(), self.data.clone());
        self.download = Some(("starting".into(), 0.0));
        thread::spawn(move || {
            for spec in DOWNLOADS {
                let f = Fetch {
                    url: format!("{}{}", release::BASE_URL, spec.file),
                    dest: dir.join(spec.file),
                    bytes: spec.bytes,
                    sha256: spec.sha256.map(str::to_owned),
                };
                let stage = format!("downloading {}", spec.file);
                let result = fetch(&f, 8, &|done, total| {
                    let fraction = total.map(|t| done as f64 / t.max(1) as f64).unwrap_or(0.0);
                    let _ = tx.send(Report::Progress { stage: stage.clone(), fraction });
                    ctx.request_repaint();
                });
                if let Err(e) = result {
                    let _ = tx.send(Report::Failed(format!("{e}")));
                    ctx.request_repaint();
                    return;
                }
            }
            start_brain_job(BrainSpec { tables: Tables::Release { dir }, control: Default::default() }, data, tx, ctx);
        });
    }
}

impl FlyChessApp {
    /// Asks for a screenshot once the brain is settled, saves it when it arrives, then closes.
    fn take_screenshot(&mut self, ctx: &egui::Context) {
        let settled = !matches!(self.brain, BrainState::Loading { .. });
        let Some(shot) = &mut self.screenshot else { return };
        let Some(arrived) = &shot.arrived else {
            if settled {
                let (tx, rx) = channel();
                let waker = ctx.clone();
                ctx.request_screenshot(move |image| {
                    let _ = tx.send(image);
                    waker.request_repaint();
                });
                shot.arrived = Some(rx);
            }
            ctx.request_repaint();
            return;
        };
        let image = arrived.try_recv().ok();
        if let Some(image) = image {
            let [w, h] = image.size;
            let bytes: Vec<u8> = image.pixels.iter().flat_map(|c| c.to_array()).collect();
            match image::RgbaImage::from_raw(w as u32, h as u32, bytes).map(|img| img.save(&shot.path)) {
                Some(Ok(())) => tracing::info!("saved {}", shot.path.display()),
                Some(Err(e)) => tracing::error!("could not save {}: {e}", shot.path.display()),
                None => tracing::error!("the screenshot had an unexpected size"),
            }
            ctx.send_viewport_cmd(egui::ViewportCommand::Close);
        }
        ctx.request_repaint();
    }
}

impl eframe::App for FlyChessApp {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        let ctx = ui.ctx().clone();
        while let Ok(r) = self.reports.try_recv() {
            match r {
                Report::Progress { stage, fraction } => {
                    if stage.starts_with("downloading") {
                        self.download = Some((stage, fraction));
                    } else {
                        self.brain = BrainState::Loading { stage, fraction };
                    }
                }
                Report::Ready { info, checksum } => {
                    self.download = None;
                    self.brain = BrainState::Ready { info, checksum };
                }
                Report::Failed(e) => {
                    self.download = None;
                    self.brain = BrainState::Failed(e);
                }
            }
        }
        self.take_screenshot(&ctx);
        egui::CentralPanel::default().show(ui, |ui| {
            ui.heading("Fly Chess");
            ui.label("A whole fruit-fly nervous system learns and plays chess.");
            ui.separator();
            match &self.brain {
                BrainState::Loading { stage, fraction } => {
                    ui.label(format!("Preparing the brain: {stage}"));
                    ui.add(egui::ProgressBar::new(*fraction as f32).show_percentage().animate(true));
                    ui.small("The first start generates the synthetic stand-in connectome and builds its brain file; later starts load it in under a second.");
                }
                BrainState::Failed(e) => {
                    ui.colored_label(egui::Color32::LIGHT_RED, format!("The brain could not be prepared: {e}"));
                }
                BrainState::Ready { info, checksum } => {
                    brain_summary(ui, info, checksum);
                }
            }
            ui.small(format!("Graphics: {}", self.adapter));
            ui.separator();
            match &self.download {
                Some((stage, fraction)) => {
                    ui.label(stage);
                    ui.add(egui::ProgressBar::new(*fraction as f32).show_percentage());
                }
                None => {
                    let synthetic = matches!(&self.brain, BrainState::Ready { info, .. } if info.synthetic);
                    if synthetic
                        && ui
                            .button("Get the real connectome (MaleCNS v1.0, 1.1 GB download)")
                            .on_hover_text("Berg et al. 2026, CC BY 4.0; resumable, checked by size and sha256")
                            .clicked()
                    {
                        self.start_download(&ctx);
                    }
                }
            }
        });
    }
}

fn brain_summary(ui: &mut egui::Ui, info: &Info, checksum: &str) {
    let colour = if info.synthetic { egui::Color32::from_rgb(230, 170, 60) } else { egui::Color32::from_rgb(90, 200, 120) };
    ui.horizontal(|ui| {
        ui.label("Brain:");
        ui.colored_label(colour, egui::RichText::new(&info.source).strong());
    });
    if info.synthetic {
        ui.small("A made-up nervous system with the published structure of MaleCNS v1.0, used until the real tables are downloaded.");
    }
    egui::Grid::new("brain-summary").num_columns(2).striped(true).show(ui, |ui| {
        let mut row = |k: &str, v: String| {
            ui.label(k);
            ui.label(v);
            ui.end_row();
        };
        row("neurons", format!("{} ({} with a cell-body position)", info.neurons, info.with_soma));
        row("connections (≥ 5 synapses)", format!("{}", info.connections));
        row("photoreceptors on the eye", format!("{} of {}", info.photoreceptors_placed, info.photoreceptors));
        row("descending neurons", format!("{}", info.descending));
        row("Kenyon cells / MBONs", format!("{} / {}", info.kenyon, info.mbon));
        row(
            "eye → descending neurons",
            info.eye_to_descending_shortest_path.map(|h| format!("{h} synapses")).unwrap_or_else(|| "not reached".into()),
        );
        row("brain id (sha256)", checksum.chars().take(16).collect());
    });
}

/// eframe's device, asked for everything the adapter offers: the simulator's rates buffer (12
/// steps × 163,803 neurons × the batch) outgrows the default 128 MiB binding, and burn needs the
/// adapter's features — except MAPPABLE_PRIMARY_BUFFERS, which would slow every buffer down.
fn wgpu_options() -> eframe::egui_wgpu::WgpuConfiguration {
    use eframe::egui_wgpu::{WgpuConfiguration, WgpuSetup, WgpuSetupCreateNew};
    use eframe::wgpu;
    let mut setup = WgpuSetupCreateNew::without_display_handle();
    setup.device_descriptor = std::sync::Arc::new(|adapter: &wgpu::Adapter| wgpu::DeviceDescriptor {
        label: Some("flychess"),
        required_features: adapter.features() - wgpu::Features::MAPPABLE_PRIMARY_BUFFERS,
        required_limits: adapter.limits(),
        ..Default::default()
    });
    WgpuConfiguration { wgpu_setup: WgpuSetup::CreateNew(setup), ..Default::default() }
}

pub fn run(data: PathBuf, screenshot: Option<PathBuf>) -> Result<()> {
    let options = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default().with_inner_size([1280.0, 800.0]).with_min_inner_size([640.0, 480.0]).with_title("Fly Chess"),
        wgpu_options: wgpu_options(),
        ..Default::default()
    };
    eframe::run_native("Fly Chess", options, Box::new(move |cc| Ok(Box::new(FlyChessApp::new(cc, data, screenshot)))))
        .map_err(|e| anyhow!("could not open a window: {e}"))
}
