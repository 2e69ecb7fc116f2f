//! The About tab: settings (theme, sound, Stockfish), the brain picker and the brain in use, the
//! MaleCNS download, credits.

use super::*;

impl FlyChessApp {
    pub(super) fn about_tab(&mut self, ui: &mut egui::Ui) {
        egui::ScrollArea::vertical().show(ui, |ui| {
            ui.heading("Settings");
            let before = (self.settings.dark, self.settings.larger_ui);
            ui.checkbox(&mut self.settings.dark, "Dark theme");
            ui.checkbox(&mut self.settings.larger_ui, "Larger UI (projectors)");
            if before != (self.settings.dark, self.settings.larger_ui) {
                self.apply_visuals(ui.ctx());
            }
            egui::ComboBox::from_label("Board colours").selected_text(self.settings.board_theme.name()).show_ui(ui, |ui| {
                for t in BoardTheme::ALL {
                    ui.selectable_value(&mut self.settings.board_theme, t, t.name());
                }
            });
            if ui.checkbox(&mut self.settings.muted, "Mute sounds").changed() {
                self.lab.command(Command::Mute(self.settings.muted || self.launch.quiet));
            }
            if let Some(why) = self.lab.speaker().note() {
                ui.small(why);
            }
            ui.checkbox(&mut self.settings.animate, "Slide pieces");
            let mut replay = self.lab.play().replay();
            if ui.checkbox(&mut replay, "Replay the fly's 12 steps before its move").changed() {
                self.lab.command(Command::Replay(replay));
            }
            ui.horizontal(|ui| {
                ui.label("Stockfish:");
                ui.add(
                    egui::TextEdit::singleline(&mut self.stockfish_edit)
                        .hint_text(format!("search {}", flychess_lab::lab::STOCKFISH_SEARCHED))
                        .desired_width(260.0),
                );
                #[cfg(not(feature = "native"))]
                let chosen = false;
                #[cfg(feature = "native")]
                let mut chosen = false;
                #[cfg(feature = "native")]
                if ui.button("Choose…").on_hover_text("Pick the Stockfish program (stockfish.exe on Windows)").clicked()
                    && let Some(path) = rfd::FileDialog::new().set_title("The Stockfish program").pick_file()
                {
                    self.stockfish_edit = path.display().to_string();
                    chosen = true;
                }
                if ui.button("Use").clicked() || chosen {
                    self.settings.stockfish = self.stockfish_edit.trim().to_string();
                    self.lab.command(Command::UseStockfish(self.settings.stockfish.clone()));
                }
            });
            ui.label(RichText::new(self.lab.grader_status()).small());
            ui.separator();
            ui.heading("The brain");
            self.brain_picker(ui);
            if let Some(r) = self.ready().cloned() {
                brain_summary(ui, &r.info, &r.checksum);
            }
            #[cfg(not(feature = "native"))]
            ui.weak("Other brains (MaleCNS, the stand-in, controls) need the desktop program (flychess).");
            #[cfg(feature = "native")]
            match &self.lab.download() {
                Some((stage, fraction)) => {
                    ui.label(stage);
                    ui.add(egui::ProgressBar::new(*fraction as f32).show_percentage());
                }
                None => {
                    if ui
                        .button("Download MaleCNS v1.0 (the male central nervous system, 1.1 GB)")
                        .on_hover_text("Berg et al. 2026, CC BY 4.0; resumable, checked by size and sha256")
                        .clicked()
                    {
                        self.lab.command(Command::DownloadMaleCns);
                    }
                }
            }
            ui.small(format!("Graphics: {}", self.adapter));
            ui.small(format!("Simulator: {}", self.lab.engine()));
            ui.separator();
            ui.heading("Credits");
            for line in CREDITS {
                ui.label(*line);
            }
        });
    }

    /// The brains the window can run: FlyWire v783 (shipped), the stand-in, and MaleCNS once its
    /// tables are downloaded. Choosing one loads it (built and calibrated the first time).
    fn brain_picker(&mut self, ui: &mut egui::Ui) {
        let choices = self.lab.brain_choices();
        let current = match &self.lab.brain() {
            BrainState::Ready(r) => Some(r.spec.clone()),
            _ => None,
        };
        let selected = choices.iter().find(|c| Some(&c.1) == current.as_ref()).map(|c| c.0).unwrap_or("(loading)");
        let mut pick = None;
        egui::ComboBox::from_label("Brain").selected_text(selected).width(380.0).show_ui(ui, |ui| {
            for (label, spec) in &choices {
                if ui.selectable_label(Some(spec) == current.as_ref(), *label).clicked() {
                    pick = Some(spec.clone());
                }
            }
        });
        if let Some(spec) = pick.filter(|s| Some(s) != current.as_ref()) {
            self.switch_brain(spec);
        }
        if let Some((stage, fraction)) = &self.lab.brain_job() {
            ui.label(format!("Preparing the other brain ({stage}); the game goes on with this one."));
            ui.add(egui::ProgressBar::new(*fraction as f32).show_percentage().animate(true));
        }
        if let Some(e) = &self.lab.brain_job_error() {
            ui.colored_label(Color32::LIGHT_RED, format!("The other brain could not be prepared: {e}. This one plays on."));
        }
    }
}

const CREDITS: &[&str] = &[
    "Default brain: FlyWire v783 (the FlyWire Consortium; Dorkenwald et al. and Schlegel et al., Nature 634, 2024; Eckstein et al., Cell 187, 2024; Zheng et al., Cell 174, 2018), CC BY-NC 4.0: connections within each hemisphere, positions laid out from the wiring.",
    "Other brains: MaleCNS v1.0, Berg et al., Cell 189:5504-5526 (2026), CC BY 4.0 (download), and a synthetic stand-in with its published structure.",
    "Pieces: cburnett (Colin M.L. Burnett), GPL-2.0-or-later, via lichess-org/chessground.",
    "Sounds: chess-console (Stefan Haack), CC BY 4.0.",
    "Opening names: lichess-org/chess-openings, CC0.",
    "Grades: Stockfish (GPL-3.0), run as a separate program.",
    "Chess rules: shakmaty and pgn-reader (GPL-3.0-or-later). Fly Chess is GPL-3.0-or-later.",
];

fn brain_summary(ui: &mut egui::Ui, info: &Info, checksum: &str) {
    let colour = if info.synthetic { Color32::from_rgb(230, 170, 60) } else { Color32::from_rgb(90, 200, 120) };
    ui.horizontal(|ui| {
        ui.label("Brain:");
        ui.colored_label(colour, RichText::new(&info.source).strong());
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
        row("neurons", format!("{}", info.neurons));
        row("positions", info.positions.clone());
        row("connections (≥ 5 synapses)", format!("{}", info.connections));
        row("photoreceptors on the eye", format!("{} of {}", info.photoreceptors_placed, info.photoreceptors));
        if let (Some(r), Some(h)) = (info.retinotopy_ratio, info.retinotopy_ratio_held_out) {
            row(
                "eye recovered from the wiring",
                format!("neighbouring columns share {r:.1}× the partners of a shuffled placement ({h:.1}× held out)"),
            );
        }
        row("descending neurons", format!("{}", info.descending));
        row("Kenyon cells / MBONs", format!("{} / {}", info.kenyon, info.mbon));
        row(
            "eye to descending neurons",
            info.eye_to_descending_shortest_path.map(|h| format!("{h} synapses")).unwrap_or_else(|| "not reached".into()),
        );
        row("brain id (sha256)", checksum.chars().take(16).collect());
    });
}
