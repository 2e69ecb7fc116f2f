//! The Flies tab: every fly on this machine (metadata read once per file version), renaming,
//! deleting and exporting the user's flies, the lab's control flies built with one click, and the
//! ladder's ratings (the user's own, else the ones shipped with the flies), looked up by player id.

use super::*;
use flychess_lab::lab::FlyAction;
use flychess_lab::lab::flies::FlyCard;

/// The ladder's ratings as tables (or how to make them): the harness check, the clone test,
/// every player's rating with its interval and how its games ended, every pairing's W-D-L.
fn ratings_view(ui: &mut egui::Ui, report: Option<&(serde_json::Value, String)>) {
    let Some((v, from)) = report else {
        ui.weak("No ratings yet: `flychess rate` (or `flychess rate --quick`) plays the ladder and writes them.");
        return;
    };
    ui.label(format!(
        "From {from}: {} games, {} per pairing; anchor {} = {}.",
        v["games"],
        v["options"]["games"],
        v["anchor"].as_str().unwrap_or("?"),
        v["anchor_elo"]
    ));
    let harness = &v["harness_check"];
    if harness.is_object() {
        ui.label(format!(
            "Harness check: {} against itself scored {:.1}% over {} games{}.",
            harness["fly"].as_str().unwrap_or("?"),
            100.0 * harness["score"].as_f64().unwrap_or(0.0),
            harness["games"],
            if harness["passed"].as_bool() == Some(true) { " (exactly 50%, as it must)" } else { ": NOT 50%, do not trust these ratings" }
        ));
    }
    let clone = &v["clone"];
    if let Some(interval) = clone["score_interval"].as_array() {
        let at = |i: usize| 100.0 * interval.get(i).and_then(|x| x.as_f64()).unwrap_or(0.0);
        ui.label(format!(
            "Clone test: {} against an independent copy scored {:.1}% [{:.1}, {:.1}] over {} pairs{}.",
            clone["fly"].as_str().unwrap_or("?"),
            100.0 * clone["score"].as_f64().unwrap_or(0.0),
            at(0),
            at(1),
            clone["pairs"],
            if clone["within"].as_bool() == Some(true) { " (holds 50%)" } else { ": 50% is outside, do not trust these ratings" }
        ));
    }
    // The players this install has (the rows of the flies as they are now) in the table; the
    // ladder's rows of earlier versions and development flies, which nobody here can play,
    // folded away below it.
    let rows: Vec<&serde_json::Value> = v["ratings"].as_array().into_iter().flatten().collect();
    let (current, earlier): (Vec<&serde_json::Value>, Vec<&serde_json::Value>) =
        rows.into_iter().partition(|r| r["current"].as_bool() != Some(false));
    ratings_grid(ui, "ratings", &current);
    if !earlier.is_empty() {
        egui::CollapsingHeader::new(format!("Earlier versions and development flies ({}), not on this machine", earlier.len()))
            .id_salt("earlier ratings")
            .show(ui, |ui| ratings_grid(ui, "earlier ratings grid", &earlier));
    }
    if let Some(pairings) = v["pairings"].as_array() {
        egui::CollapsingHeader::new(format!("Pairings ({})", pairings.len())).id_salt("pairings").show(ui, |ui| {
            egui::Grid::new("pairings grid").num_columns(3).striped(true).show(ui, |ui| {
                for h in ["pairing", "W-D-L (first player)", "score"] {
                    ui.strong(h);
                }
                ui.end_row();
                for p in pairings {
                    ui.label(format!("{} – {}", p["first"].as_str().unwrap_or("?"), p["second"].as_str().unwrap_or("?")));
                    ui.label(format!("{}-{}-{}", p["wins"], p["draws"], p["losses"]));
                    ui.label(format!("{:.0}%", 100.0 * p["score"].as_f64().unwrap_or(0.0)));
                    ui.end_row();
                }
            });
        });
    }
}

/// Ratings rows as a table: each player's Elo with its interval, games and how they ended (an
/// earlier version's row names the start of its player id, which tells two versions apart).
fn ratings_grid(ui: &mut egui::Ui, id: &str, rows: &[&serde_json::Value]) {
    egui::Grid::new(id).num_columns(5).striped(true).show(ui, |ui| {
        for h in ["player", "Elo", "95% interval", "games", "how its games ended"] {
            ui.strong(h);
        }
        ui.end_row();
        for r in rows {
            let name = r["name"].as_str().unwrap_or("?");
            if r["current"].as_bool() == Some(false) {
                ui.label(format!("{name} ({})", r["id"].as_str().map(|i| &i[..8.min(i.len())]).unwrap_or("?")));
            } else {
                ui.label(name);
            }
            ui.label(format!("{:.0}", r["elo"].as_f64().unwrap_or(0.0)));
            ui.label(format!("{:.0} to {:.0}", r["low"].as_f64().unwrap_or(0.0), r["high"].as_f64().unwrap_or(0.0)));
            ui.label(format!("{}", r["games"]));
            let ends: Vec<String> = r["endings"].as_object().into_iter().flatten().map(|(k, n)| format!("{k} {n}")).collect();
            ui.small(ends.join(", "));
            ui.end_row();
        }
    });
}

impl FlyChessApp {
    /// The Flies tab's rows: each fly's metadata read (and its file's checksum verified) once,
    /// and again only when the list or a file's size or modification time changes, not every
    /// frame.
    fn fly_cards(&mut self) -> Vec<FlyCard> {
        let data = self.launch.data.clone();
        let key = flychess_lab::lab::flies::card_stamps(self.lab.flies(), &data);
        if self.fly_cards.as_ref().is_none_or(|(k, _)| *k != key) {
            self.fly_cards = Some((key, flychess_lab::lab::flies::read_cards(self.lab.flies(), &data)));
        }
        self.fly_cards.as_ref().map(|(_, c)| c.clone()).unwrap_or_default()
    }

    pub(super) fn flies_tab(&mut self, ui: &mut egui::Ui) {
        ui.heading("Flies");
        let checksum = self.ready().map(|r| r.checksum.clone()).unwrap_or_default();
        let data = self.launch.data.clone();
        // Both ways: at the window's opening size (1280×800) the last columns stay reachable.
        egui::ScrollArea::both().show(ui, |ui| {
            egui::Grid::new("flies").num_columns(8).striped(true).show(ui, |ui| {
                for h in ["fly", "kind", "brain", "data", "HOLD top-1", "good moves", "Elo [95%]", "made"] {
                    ui.strong(h);
                }
                ui.strong("");
                ui.end_row();
                for card in self.fly_cards() {
                    let FlyCard { name, path, meta: fly, shipped, dopamine } = card;
                    match fly {
                        Ok(f) => {
                            ui.label(RichText::new(&name).strong());
                            ui.label(&f.kind);
                            let same = f.brain_checksum == checksum;
                            let brain = if same { f.brain.clone() } else { format!("{} (not the loaded brain)", f.brain) };
                            // A brain's label can be long: its start, all of it on hover.
                            let short: String = brain.chars().take(24).collect();
                            let shown = if short.len() < brain.len() { format!("{short}…") } else { brain.clone() };
                            ui.label(shown).on_hover_text(brain);
                            ui.label(format!("{} positions", f.train_positions)).on_hover_text(&f.data);
                            match &f.hold {
                                Some(m) => {
                                    ui.label(format!("{:.1}%", 100.0 * m.top1));
                                    ui.label(format!("{:.1}%", 100.0 * m.good));
                                }
                                None => {
                                    ui.label("-");
                                    ui.label("-");
                                }
                            }
                            ui.label(self.lab.ratings().get(&name).cloned().unwrap_or_else(|| "unrated".into()));
                            ui.label(&f.created);
                        }
                        Err(e) => {
                            ui.label(&name);
                            ui.colored_label(Color32::LIGHT_RED, e);
                            for _ in 0..6 {
                                ui.label("");
                            }
                        }
                    }
                    ui.horizontal(|ui| {
                        if shipped {
                            ui.weak("shipped");
                        } else {
                            let asked = self.delete_asked.as_deref() == Some(name.as_str());
                            if ui.button(if asked { "Really delete?" } else { "Delete" }).clicked() {
                                if asked {
                                    self.lab.command(Command::Fly(FlyAction::Delete(name.clone())));
                                    self.flies_status = format!("Deleting {name}…");
                                    self.delete_asked = None;
                                } else {
                                    self.delete_asked = Some(name.clone());
                                }
                            }
                            if ui.button("Rename").clicked() {
                                self.rename = Some((name.clone(), name.clone()));
                            }
                        }
                        if !dopamine && ui.button("How it's doing").clicked() {
                            self.doing.ask(&name);
                        }
                        if !dopamine && ui.button("How it loses").clicked() {
                            self.loses.ask(&name, &data);
                        }
                        if ui.button("Export…").clicked() {
                            self.flies_status =
                                match (path.as_ref(), rfd::FileDialog::new().set_file_name(format!("{name}.fly")).save_file()) {
                                    (Ok(_), Some(to)) => {
                                        self.lab.command(Command::Fly(FlyAction::Export { name: name.clone(), to }));
                                        format!("Exporting {name}…")
                                    }
                                    (Err(e), _) => e.to_string(),
                                    (_, None) => "No file chosen (or no file dialog on this desktop).".into(),
                                };
                        }
                    });
                    ui.end_row();
                }
            });
            if let Some((old, mut new)) = self.rename.take() {
                let mut keep = true;
                ui.horizontal(|ui| {
                    ui.label(format!("Rename {old} to"));
                    ui.text_edit_singleline(&mut new);
                    if ui.button("OK").clicked() {
                        keep = false;
                        self.flies_status = format!("Renaming {old}…");
                        self.lab.command(Command::Fly(FlyAction::Rename { from: old.clone(), to: new.clone() }));
                    }
                    if ui.button("Cancel").clicked() {
                        keep = false;
                    }
                });
                if keep {
                    self.rename = Some((old, new));
                }
            }
            // The lab's word on the last action replaces the tab's own "…ing" line once it comes.
            let said = if self.lab.flies_said().is_empty() { self.flies_status.as_str() } else { self.lab.flies_said() };
            if !said.is_empty() {
                ui.label(said);
            }
            if let Some(r) = self.ready().cloned() {
                ui.separator();
                self.doing.show(ui, &r, &data);
                ui.separator();
                let stockfish = Some(std::path::PathBuf::from(self.settings.stockfish.trim())).filter(|p| !p.as_os_str().is_empty());
                self.loses.show(ui, &r, &data, stockfish);
            }
            ui.separator();
            self.lab_flies(ui);
            ui.separator();
            ui.heading("Ratings");
            ratings_view(ui, self.lab.ratings_report());
        });
    }

    /// The lab's control flies: one click builds a missing one (through the Train tab's runner).
    fn lab_flies(&mut self, ui: &mut egui::Ui) {
        ui.heading("Lab flies (controls)");
        ui.small("Built through the same paths as any fly, on 8,192 positions (2,048 to train on) so they compare with each other.");
        let running = self.train.job.as_ref().is_some_and(train::RunningJob::running);
        let Some(ready) = self.ready().cloned() else { return };
        let data = self.launch.data.clone();
        for (name, what) in [
            ("lab-newborn", "newborn: the brain with an untrained readout"),
            ("lab-3-minute", "3-minute fly: the probe (fast way) on few positions"),
            ("lab-shuffled", "shuffled wiring: same neurons, connections handed out at random"),
            ("lab-no-optic-lobe", "no optic lobe: every optic-lobe connection cut"),
            ("lab-no-central-brain", "no central brain: every central-brain connection cut"),
        ] {
            ui.horizontal(|ui| {
                let exists = self.lab.flies().iter().any(|f| f == name);
                ui.label(RichText::new(name).strong());
                ui.label(what);
                if exists {
                    ui.weak("built");
                } else if ui.add_enabled(!running, egui::Button::new("Build")).clicked() {
                    if name == "lab-newborn" {
                        self.flies_status = format!("Building {name}…");
                        self.lab.command(Command::Fly(FlyAction::Newborn(name.to_string())));
                    } else {
                        let choice = train::lab_controls()
                            .into_iter()
                            .find(|(n, _)| name.ends_with(n) && !n.is_empty())
                            .map(|(_, c)| c)
                            .unwrap_or(train::BrainChoice::Loaded);
                        let kind = match &choice {
                            train::BrainChoice::Loaded => "lab: 3-minute fly (probe only)".to_string(),
                            c => format!("lab control: {}", c.label()),
                        };
                        self.train.name = name.to_string();
                        self.train.positions = 8_192;
                        self.train.max_passes = 30;
                        self.train.brain = choice;
                        self.train.start(ui.ctx(), ready.clone(), data.clone(), Some(kind));
                        self.tab = Tab::Train;
                    }
                }
            });
        }
    }
}
