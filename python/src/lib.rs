//! The native half of the `flychess` Python package (issue 57): the brain and sim crates bound
//! directly with pyo3, not the command line wrapped. It owns the Python classes `Brain` (a brain
//! made ready as the app makes it: the neuron table's columns, the incoming connections as CSR
//! arrays, the 12 steps of rates for a researcher's positions as a float32 numpy array
//! `[batch, steps, neurons]` from the same engines, bit for bit, with the GIL released), `Fly` (a
//! readout fly: policy, value and its inputs) and `Player` (any name the command line takes,
//! seated by `players::seat`), and the edge every call crosses: Rust errors become Python exceptions that
//! name their input (`ValueError`, `KeyError`, `FileNotFoundError`), and a panic is caught there
//! (`guard`) and raised as `RuntimeError`, never unwinding into the interpreter.
//!
//! The pure-Python half (pysrc/flychess) turns the columns into a pyarrow Table, writes Feather
//! or Parquet (`export_think`) and carries the docstrings' type stubs.
#![warn(clippy::too_many_lines)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use numpy::{IntoPyArray, PyArray1, PyArray3, PyArrayMethods};
use pyo3::exceptions::{PyFileNotFoundError, PyKeyError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::PyDict;
use shakmaty::{Chess, Position};

use flychess_brain::brain::simulator::{EngineChoice, Simulator};
use flychess_brain::brain::{Brain as SimBrain, STEPS};
use flychess_brain::chess::{Planes, planes, position_from_fen};
use flychess_brain::connectome::Control;
use flychess_brain::connectome::brain_file::Loaded;
use flychess_brain::store::{BrainSpec, Tables};

/// Runs `f`, turning a panic into a `RuntimeError` (nothing unwinds across the boundary).
fn guard<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(payload) => {
            let what = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic".into());
            Err(PyRuntimeError::new_err(format!("flychess failed inside (a bug, please report it): {what}")))
        }
    }
}

/// At most `most` characters of `text`, an ellipsis after a cut.
fn quoted(text: &str, most: usize) -> String {
    let cut: String = text.chars().take(most).collect();
    if cut.len() < text.len() { format!("{cut}…") } else { cut }
}

/// A Rust error as a Python exception: a missing file or folder → FileNotFoundError, anything
/// else → RuntimeError (callers raise ValueError/KeyError themselves where the input is theirs).
fn raised(e: impl std::fmt::Display) -> PyErr {
    let text = e.to_string();
    if text.contains("No such file or directory") || text.contains("not found") {
        PyFileNotFoundError::new_err(text)
    } else {
        PyRuntimeError::new_err(text)
    }
}

/// The position a FEN names, or ValueError quoting at most 80 characters of it.
fn position(fen: &str) -> PyResult<Chess> {
    position_from_fen(fen).map_err(|e| {
        let why = e.to_string();
        let why = why.rsplit_once(": ").map(|(_, w)| w.to_string()).unwrap_or(why);
        PyValueError::new_err(format!("bad FEN {:?}: {why}", quoted(fen, 80)))
    })
}

/// The data folder: the one given (it must exist: FileNotFoundError), else $FLYCHESS_DATA, else
/// the user's (as the app's).
fn data_folder(data: Option<PathBuf>) -> PyResult<PathBuf> {
    match data {
        Some(d) if !d.is_dir() => Err(PyFileNotFoundError::new_err(format!("no data folder at {}", d.display()))),
        Some(d) => Ok(d),
        None => Ok(std::env::var_os("FLYCHESS_DATA").map(PathBuf::from).unwrap_or_else(flychess_brain::store::data_dir)),
    }
}

/// The data folder of `brain` when one is given, else `data_folder(data)`.
fn folder_of(brain: &Option<Py<Brain>>, data: Option<PathBuf>) -> PyResult<PathBuf> {
    match brain {
        Some(b) => Ok(b.get().data.clone()),
        None => data_folder(data),
    }
}

fn engine_choice(engine: &str) -> PyResult<EngineChoice> {
    match engine {
        "cpu" => Ok(EngineChoice::Cpu),
        "gpu" => Ok(EngineChoice::Gpu),
        "auto" => Ok(EngineChoice::Auto),
        other => Err(PyValueError::new_err(format!("engine is \"cpu\", \"gpu\" or \"auto\", not {:?}", quoted(other, 40)))),
    }
}

/// A brain made ready to think (built from its tables the first time, its homeostasis measured).
#[pyclass(module = "flychess._native", frozen)]
struct Brain {
    loaded: Arc<Loaded>,
    brain: Arc<SimBrain>,
    data: PathBuf,
    spec: BrainSpec,
}

impl Brain {
    /// The boards of `fens` (each checked: ValueError naming the first bad one).
    fn boards(fens: Vec<String>) -> PyResult<Vec<Planes>> {
        fens.iter().map(|f| position(f).map(|p| planes(&p))).collect()
    }
}

#[pymethods]
impl Brain {
    /// Brain.load(which="flywire783", data=None, seed=1): "flywire783" (the default brain, its
    /// tables shipped with the program), "standin" (the synthetic stand-in, from `seed`), or the
    /// path of a folder of FlyWire v783 tables.
    #[staticmethod]
    #[pyo3(signature = (which = "flywire783", data = None, seed = 1))]
    fn load(py: Python<'_>, which: &str, data: Option<PathBuf>, seed: u64) -> PyResult<Brain> {
        guard(|| {
            let data = data_folder(data)?;
            let tables = match which {
                "flywire783" | "flywire" => Tables::FlyWire { dir: None },
                "standin" => Tables::Synthetic { seed },
                path if Path::new(path).is_dir() => Tables::FlyWire { dir: Some(PathBuf::from(path)) },
                other => {
                    return Err(PyKeyError::new_err(format!(
                        "no brain {:?}: the brains are \"flywire783\", \"standin\", or a folder of FlyWire tables",
                        quoted(other, 80)
                    )));
                }
            };
            let spec = BrainSpec { tables, control: Control::None };
            let (loaded, brain) =
                py.detach(|| flychess_brain::store::ready_brain(&spec, &data, Default::default(), &|_, _| {})).map_err(raised)?;
            Ok(Brain { loaded: Arc::new(loaded), brain: Arc::new(brain), data, spec })
        })
    }

    /// The brain file's content hash (sha256, hex): what flies and caches are keyed by.
    #[getter]
    fn checksum(&self) -> String {
        self.loaded.checksum.clone()
    }

    /// Where the brain comes from, in words.
    #[getter]
    fn name(&self) -> String {
        self.loaded.connectome.provenance.label()
    }

    fn __len__(&self) -> usize {
        self.brain.neurons
    }

    fn __repr__(&self) -> String {
        format!("<flychess.Brain {} ({} neurons)>", self.loaded.connectome.provenance.label(), self.brain.neurons)
    }

    /// The neuron table's columns (the package makes them a pyarrow Table): index, root id, cell
    /// type, class, super-class, side, region, transmitter, sign, position in µm (`positions`
    /// says what they are; NaN where there is none), eye slot (−1: not a placed photoreceptor), descending (the readout's
    /// inputs).
    fn _neuron_columns<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        guard(|| {
            let n = &self.loaded.connectome.neurons;
            let len = n.len();
            let d = PyDict::new(py);
            d.set_item("index", (0..len as u32).collect::<Vec<u32>>().into_pyarray(py))?;
            d.set_item("root_id", n.body_id.clone().into_pyarray(py))?;
            d.set_item("type", (0..len).map(|i| n.type_name(i).to_string()).collect::<Vec<_>>())?;
            d.set_item("class", (0..len).map(|i| n.class_name(i).to_string()).collect::<Vec<_>>())?;
            d.set_item("super_class", (0..len).map(|i| n.superclass_name(i).to_string()).collect::<Vec<_>>())?;
            d.set_item("side", n.side.iter().map(|s| s.name()).collect::<Vec<_>>())?;
            d.set_item("region", n.region.iter().map(|r| r.name()).collect::<Vec<_>>())?;
            d.set_item("transmitter", n.transmitter.iter().map(|t| t.name()).collect::<Vec<_>>())?;
            d.set_item("sign", n.sign.clone().into_pyarray(py))?;
            // The cloud's positions: the release's own, or (FlyWire's bundle) a layout made from
            // the wiring: `positions` says which.
            for (k, axis) in ["x_um", "y_um", "z_um"].into_iter().enumerate() {
                d.set_item(axis, n.soma_um.iter().map(|p| p[k]).collect::<Vec<f32>>().into_pyarray(py))?;
            }
            let eye: Vec<i32> =
                self.brain.eye_slot.iter().map(|&s| if s == flychess_brain::brain::NO_EYE { -1 } else { s as i32 }).collect();
            d.set_item("eye_slot", eye.into_pyarray(py))?;
            let mut descending = vec![false; len];
            for &j in &self.loaded.connectome.groups.descending {
                descending[j as usize] = true;
            }
            d.set_item("descending", descending.into_pyarray(py))?;
            Ok(d)
        })
    }

    /// Every neuron as a pyarrow Table (`.to_pandas()` for pandas), in the brain's order: index,
    /// root_id, type, class, super_class, side, region, transmitter, sign, x_um, y_um,
    /// z_um (the cloud's positions: `positions` says what they are), eye_slot (−1: no placed photoreceptor),
    /// descending (the readout's inputs).
    #[getter]
    fn neurons<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let columns = self._neuron_columns(py)?;
        py.import("pyarrow")?.call_method1("table", (columns,))
    }

    /// The incoming connections as compressed sparse rows: neuron j's inputs are entries
    /// `indptr[j]:indptr[j+1]`; `indices` the senders, `weight` the synapse counts' strength,
    /// `sign` the sender's sign (+1 excites, −1 inhibits). The same arrays the engines step.
    #[getter]
    fn connections<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        guard(|| {
            let c = &self.loaded.connectome.inputs;
            let signs = &self.loaded.connectome.neurons.sign;
            let d = PyDict::new(py);
            d.set_item("indptr", c.row_start.clone().into_pyarray(py))?;
            d.set_item("indices", c.pre.clone().into_pyarray(py))?;
            d.set_item("weight", c.strength.clone().into_pyarray(py))?;
            d.set_item("sign", c.pre.iter().map(|&p| signs[p as usize]).collect::<Vec<i8>>().into_pyarray(py))?;
            Ok(d)
        })
    }

    /// What the neuron table's x_um/y_um/z_um are, in words: the release's positions, or (the
    /// FlyWire bundle, which has none) a layout made from the wiring, not anatomy.
    #[getter]
    fn positions(&self) -> &'static str {
        self.loaded.connectome.provenance.positions_label()
    }

    /// The regions' names, in the order of their numbers.
    #[getter]
    fn regions(&self) -> Vec<&'static str> {
        flychess_brain::connectome::rules::Region::ALL.iter().map(|r| r.name()).collect()
    }

    /// think(fens, steps=12, engine="cpu", neurons=None) → float32 array [batch, steps, neurons].
    /// `steps`: how many of the 12 (1..steps) or a list of 1-based steps; `neurons`: a list of
    /// neuron indices (only the rows they depend on are worked out). The same floats, bit for bit,
    /// as the program's engine; the GIL is released while it thinks.
    #[pyo3(signature = (fens, steps = None, engine = "cpu", neurons = None))]
    fn think<'py>(
        &self,
        py: Python<'py>,
        fens: Vec<String>,
        steps: Option<StepsArg>,
        engine: &str,
        neurons: Option<Vec<i64>>,
    ) -> PyResult<Bound<'py, PyArray3<f32>>> {
        guard(|| {
            let boards = Brain::boards(fens)?;
            let steps: Vec<usize> = match steps {
                None => (0..STEPS).collect(),
                Some(StepsArg::Count(n)) if (1..=STEPS as i64).contains(&n) => (0..n as usize).collect(),
                Some(StepsArg::Count(n)) => return Err(PyValueError::new_err(format!("steps is 1 to {STEPS}, not {n}"))),
                Some(StepsArg::List(list)) => list
                    .into_iter()
                    .map(|s| {
                        if (1..=STEPS as i64).contains(&s) {
                            Ok(s as usize - 1)
                        } else {
                            Err(PyValueError::new_err(format!("step {s} is not one of 1 to {STEPS}")))
                        }
                    })
                    .collect::<PyResult<_>>()?,
            };
            let n = self.brain.neurons;
            let neurons: Vec<u32> = match neurons {
                None => (0..n as u32).collect(),
                Some(list) => list
                    .into_iter()
                    .map(|j| {
                        if (0..n as i64).contains(&j) {
                            Ok(j as u32)
                        } else {
                            Err(PyValueError::new_err(format!("neuron {j} is not in this brain of {n} (0 to {})", n - 1)))
                        }
                    })
                    .collect::<PyResult<_>>()?,
            };
            let choice = engine_choice(engine)?;
            let (b, s, k) = (boards.len(), steps.len(), neurons.len());
            let brain = self.brain.clone();
            let rates = py
                .detach(move || -> flychess_brain::Result<Vec<f32>> {
                    let simulator = Simulator::choose(choice, &brain)?;
                    simulator.read(&brain, &boards, &neurons, &steps)
                })
                .map_err(raised)?;
            let array = rates.into_pyarray(py);
            array.reshape([b, s, k]).map_err(|e| PyRuntimeError::new_err(e.to_string()))
        })
    }

    /// The seconds the same think as `think(fens)` (every step, every neuron, the CPU engine)
    /// takes in Rust alone, without handing the array to Python: the speed test's reference.
    fn _think_seconds_in_rust(&self, py: Python<'_>, fens: Vec<String>) -> PyResult<f64> {
        guard(|| {
            let boards = Brain::boards(fens)?;
            let brain = self.brain.clone();
            py.detach(move || -> flychess_brain::Result<f64> {
                let (steps, neurons): (Vec<usize>, Vec<u32>) = ((0..STEPS).collect(), (0..brain.neurons as u32).collect());
                let started = std::time::Instant::now();
                let rates = Simulator::choose(EngineChoice::Cpu, &brain)?.read(&brain, &boards, &neurons, &steps)?;
                let seconds = started.elapsed().as_secs_f64();
                drop(std::hint::black_box(rates));
                Ok(seconds)
            })
            .map_err(raised)
        })
    }

    /// eye(fen) → float32 array over every neuron: the photoreceptors' drive from the board (how
    /// many of the pieces each one reports stand on its square), 0 for every other neuron.
    fn eye<'py>(&self, py: Python<'py>, fen: &str) -> PyResult<Bound<'py, PyArray1<f32>>> {
        guard(|| {
            let board = planes(&position(fen)?);
            let x = self.brain.eye_input(&[board]);
            let mut drive = vec![0f32; self.brain.neurons];
            for (cell, v) in self.brain.eye.iter().zip(x) {
                drive[cell.neuron as usize] = v;
            }
            Ok(drive.into_pyarray(py))
        })
    }

    /// signal(fens) → {region: [12 floats]}: per region and step, the mean over its neurons of
    /// the standard deviation of rates across these positions (`flychess brain signal`'s measure).
    fn signal<'py>(&self, py: Python<'py>, fens: Vec<String>) -> PyResult<Bound<'py, PyDict>> {
        guard(|| {
            let boards = Brain::boards(fens)?;
            if boards.len() < 2 {
                return Err(PyValueError::new_err("signal needs at least two positions (a spread across positions)"));
            }
            let (brain, loaded) = (self.brain.clone(), self.loaded.clone());
            let by = py.detach(move || flychess_brain::brain::signal::by_region(&brain, &loaded.connectome.neurons.region, &boards));
            let d = PyDict::new(py);
            for r in flychess_brain::connectome::rules::Region::ALL {
                d.set_item(r.name(), by[r as usize].to_vec())?;
            }
            Ok(d)
        })
    }
}

/// `steps=`: a count (the first N steps) or a list of 1-based steps.
#[derive(FromPyObject)]
enum StepsArg {
    Count(i64),
    List(Vec<i64>),
}

/// The readout flies' names in the data folder and shipped (for KeyError).
fn known_flies(data: &Path) -> String {
    flychess_fly::fly::list(data).join(", ")
}

/// A readout fly on its brain: its move probabilities, its value, its inputs.
#[pyclass(module = "flychess._native", frozen)]
struct Fly {
    fly: Arc<flychess_fly::fly::Fly>,
    brain: Py<Brain>,
}

#[pymethods]
impl Fly {
    /// Fly.load(name_or_path, brain=None, data=None): a fly by name (the data folder's, then the
    /// shipped ones) or a .fly file, on `brain` (default: the brain it was trained on, when that
    /// is the default FlyWire brain).
    #[staticmethod]
    #[pyo3(signature = (name, brain = None, data = None))]
    fn load(py: Python<'_>, name: &str, brain: Option<Py<Brain>>, data: Option<PathBuf>) -> PyResult<Fly> {
        guard(|| {
            let folder = folder_of(&brain, data)?;
            let path = if name.ends_with(".fly") && Path::new(name).exists() {
                PathBuf::from(name)
            } else {
                flychess_fly::fly::find(name, &folder).map_err(|_| {
                    PyKeyError::new_err(format!("no fly named {:?}; the flies are: {}", quoted(name, 80), known_flies(&folder)))
                })?
            };
            if flychess_arena::bio::file::is_dopamine_fly(&path) {
                return Err(PyValueError::new_err(format!(
                    "{} is a dopamine fly (its mushroom body votes; it has no readout): play it with flychess.Player({name:?})",
                    quoted(name, 80)
                )));
            }
            let fly = flychess_fly::fly::Fly::load(&path).map_err(raised)?;
            let brain = match brain {
                Some(b) => b,
                None => Py::new(py, Brain::load(py, "flywire783", Some(folder.clone()), 1)?)?,
            };
            let b = brain.get();
            if fly.meta.brain_checksum != b.loaded.checksum {
                return Err(PyValueError::new_err(format!(
                    "fly {} was trained on brain {}, not on {}; load that brain and pass brain=",
                    fly.meta.name,
                    fly.meta.brain,
                    b.loaded.connectome.provenance.label()
                )));
            }
            if fly.readout.inputs != b.loaded.connectome.groups.descending.len() {
                return Err(PyValueError::new_err(format!(
                    "fly {} reads {} neurons; this brain has {}",
                    fly.meta.name,
                    fly.readout.inputs,
                    b.loaded.connectome.groups.descending.len()
                )));
            }
            Ok(Fly { fly: Arc::new(fly), brain })
        })
    }

    #[getter]
    fn name(&self) -> String {
        self.fly.meta.name.clone()
    }

    /// The fly's description as its file keeps it (a dict: kind, brain, data, positions trained,
    /// VAL and HOLD figures, teacher, …).
    #[getter]
    fn meta<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let text = serde_json::to_string(&self.fly.meta).map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
        py.import("json")?.call_method1("loads", (text,))
    }

    /// The brain it thinks on.
    #[getter]
    fn brain(&self, py: Python<'_>) -> Py<Brain> {
        self.brain.clone_ref(py)
    }

    fn __repr__(&self) -> String {
        format!("<flychess.Fly {} ({} positions trained)>", self.fly.meta.name, self.fly.meta.train_positions)
    }

    /// features(fens) → float32 array [batch, descending]: the readout's inputs (each descending
    /// neuron's rate over the fly's read steps).
    fn features<'py>(&self, py: Python<'py>, fens: Vec<String>) -> PyResult<Bound<'py, numpy::PyArray2<f32>>> {
        guard(|| {
            let boards = Brain::boards(fens)?;
            let rows = self.think_features(py, boards);
            let k = self.fly.readout.inputs;
            let b = rows.len();
            let flat: Vec<f32> = rows.into_iter().flatten().collect();
            flat.into_pyarray(py).reshape([b, k]).map_err(|e| PyRuntimeError::new_err(e.to_string()))
        })
    }

    /// policy(fen) → {uci: probability} over every legal move (the readout's softmax).
    fn policy(&self, py: Python<'_>, fen: &str) -> PyResult<std::collections::BTreeMap<String, f32>> {
        guard(|| {
            let (_, p) = self.policy_of(py, fen)?;
            Ok(p.moves.iter().map(flychess_brain::chess::uci).zip(p.probability.iter().copied()).collect())
        })
    }

    /// value(fen) → the value readout for the side to move, in [−1, 1].
    fn value(&self, py: Python<'_>, fen: &str) -> PyResult<f32> {
        guard(|| Ok(self.policy_of(py, fen)?.1.value))
    }
}

impl Fly {
    fn think_features(&self, py: Python<'_>, boards: Vec<Planes>) -> Vec<Vec<f32>> {
        let b = self.brain.get();
        let (brain, loaded, fly) = (b.brain.clone(), b.loaded.clone(), self.fly.clone());
        py.detach(move || {
            flychess_fly::readout::think_features(&brain, &boards, &loaded.connectome.groups.descending, &fly.readout.read_steps)
        })
    }

    fn policy_of(&self, py: Python<'_>, fen: &str) -> PyResult<(Chess, flychess_fly::readout::Policy)> {
        let pos = position(fen)?;
        if pos.legal_moves().is_empty() {
            return Err(PyValueError::new_err(format!("the game is over in {:?} (no legal move)", quoted(fen, 80))));
        }
        let features = self.think_features(py, vec![planes(&pos)]);
        let heads = self.fly.readout.heads(&features[0]);
        let p = flychess_fly::readout::policy(&pos, &heads);
        Ok((pos, p))
    }
}

/// The player of one game, kept between moves (its dice, a Stockfish process, a habituating
/// fly's memory of the game's boards), with the seed it was made with.
type GamePlayer<'a> = std::sync::Mutex<Option<(u64, flychess_arena::players::Player<'a>)>>;

self_cell::self_cell!(
    /// A player as every front door seats it (`players::seat`: its entrant and kit) and the player
    /// of the game under way, which borrows it.
    struct Seat {
        owner: flychess_arena::players::Seated,
        #[not_covariant]
        dependent: GamePlayer,
    }
);

/// Any player the command line names, seated as every front door seats it
/// (`flychess_arena::players::seat`): random, greedy, stockfish, stockfish:P, a fly,
/// FLY+imagination, a dopamine fly, charles[:RUN], a fly or Charles with an aid (+judge, +search, +searchN, +sfD). One game's player is kept between `choose`
/// calls (one Stockfish process, a habituating fly's memory) until `new_game`.
#[pyclass(module = "flychess._native")]
struct Player {
    name: String,
    seat: Seat,
    stockfish: Option<PathBuf>,
}

#[pymethods]
impl Player {
    /// Player(name, brain=None, data=None): seated on `brain` (default: the default FlyWire
    /// brain, loaded when the player needs one). The GIL is released while it loads (flies, a
    /// dopamine fly's preparation, a judge's tuning).
    #[new]
    #[pyo3(signature = (name, brain = None, data = None))]
    fn new(py: Python<'_>, name: &str, brain: Option<Py<Brain>>, data: Option<PathBuf>) -> PyResult<Player> {
        guard(|| {
            use flychess_arena::players::{Lookup, Venue, seat};
            let folder = folder_of(&brain, data)?;
            let brain = match brain {
                Some(b) => Some(b),
                None if flychess_arena::players::needs_brain(name) => {
                    Some(Py::new(py, Brain::load(py, "flywire783", Some(folder.clone()), 1)?)?)
                }
                None => None,
            };
            let ready = brain.as_ref().map(|b| b.get());
            py.detach(|| {
                let mushroom_body = |constants| {
                    let b = ready.ok_or_else(|| flychess_arena::Error::NeedsBrain(name.to_string()))?;
                    let (connectome, checksum) = (&b.loaded.connectome, &b.loaded.checksum);
                    let path = b.spec.brain_path(&b.data);
                    Ok(Arc::new(flychess_arena::bio::prepare(connectome, checksum, &b.brain, &path, constants, &|_| {})?))
                };
                let lookup = Lookup {
                    checksum: ready.map(|b| b.loaded.checksum.as_str()),
                    venue: ready.map(|b| Venue {
                        brain: &b.brain,
                        descending: &b.loaded.connectome.groups.descending,
                        mushroom_body: &mushroom_body,
                    }),
                    ..Lookup::in_folder(&folder, &flychess_charles::player::Runs)
                };
                let seated = seat(name, &lookup, None).map_err(|e| {
                    let text = e.to_string();
                    if text.starts_with("no player named") { PyKeyError::new_err(text) } else { PyValueError::new_err(text) }
                })?;
                let stockfish = if seated.entrant.needs_stockfish() {
                    Some(flychess_fly::stockfish::find_stockfish(None).map_err(raised)?)
                } else {
                    None
                };
                Ok(Player { name: seated.entrant.name(), seat: Seat::new(seated, |_| std::sync::Mutex::new(None)), stockfish })
            })
        })
    }

    /// What plays, in words.
    #[getter]
    fn name(&self) -> String {
        self.name.clone()
    }

    /// The id its games are kept under (a fly's content hash, never its name).
    #[getter]
    fn id(&self) -> String {
        self.seat.borrow_owner().entrant.id()
    }

    fn __repr__(&self) -> String {
        format!("<flychess.Player {}>", self.name)
    }

    /// choose(fen, seed=1, moves=None) → its move in UCI notation, as it plays on the ladder.
    /// The game is `fen` with `moves` (UCI) played after it, as a UCI GUI sends `position fen …
    /// moves …`: the player answers the position after the last move and knows the game's
    /// earlier positions (a repetition, a habituating fly's memory). The same player answers
    /// every move of the game (one Stockfish process, the fly's memory kept) until `new_game()`
    /// or another `seed` (which seeds the random and greedy movers' dice). The GIL is released
    /// while it thinks.
    #[pyo3(signature = (fen, seed = 1, moves = None))]
    fn choose(&self, py: Python<'_>, fen: &str, seed: u64, moves: Option<Vec<String>>) -> PyResult<String> {
        guard(|| {
            let mut pos = position(fen)?;
            let mut keys = vec![flychess_fly::readout::position_key(&pos)];
            for (k, m) in moves.unwrap_or_default().iter().enumerate() {
                let legal = m.parse::<shakmaty::uci::UciMove>().ok().and_then(|u| u.to_move(&pos).ok()).ok_or_else(|| {
                    PyValueError::new_err(format!(
                        "move {} ({:?}) is not legal in the game from {:?}",
                        k + 1,
                        quoted(m, 12),
                        quoted(fen, 80)
                    ))
                })?;
                pos.play_unchecked(legal);
                keys.push(flychess_fly::readout::position_key(&pos));
            }
            if pos.legal_moves().is_empty() {
                return Err(PyValueError::new_err(format!("the game is over (no legal move) after the moves from {:?}", quoted(fen, 80))));
            }
            let stockfish = &self.stockfish;
            let nodes = flychess_arena::ladder::LadderOptions::default().stockfish_nodes;
            let mv = py
                .detach(|| {
                    self.seat.with_dependent(|seated, game| -> flychess_arena::Result<shakmaty::Move> {
                        let mut game = game.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
                        if game.as_ref().is_none_or(|(s, _)| *s != seed) {
                            *game = Some((seed, seated.player(nodes, seed, stockfish)?));
                        }
                        let (_, player) = game.as_mut().expect("seated above");
                        player.choose(&pos, &keys[..keys.len() - 1])
                    })
                })
                .map_err(raised)?;
            Ok(flychess_brain::chess::uci(&mv))
        })
    }

    /// new_game(): the next `choose` starts a new game (a new player: the fly's memory of the
    /// last game's boards forgotten, the dice seeded again).
    fn new_game(&self) {
        self.seat.with_dependent(|_, game| *game.lock().unwrap_or_else(std::sync::PoisonError::into_inner) = None);
    }
}

/// A panic inside, on purpose: the test that nothing unwinds across the boundary.
#[pyfunction]
fn _panic_for_test() -> PyResult<()> {
    guard(|| panic!("on purpose, for the test"))
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Brain>()?;
    m.add_class::<Fly>()?;
    m.add_class::<Player>()?;
    m.add_function(wrap_pyfunction!(_panic_for_test, m)?)?;
    m.add("STEPS", STEPS)?;
    Ok(())
}
