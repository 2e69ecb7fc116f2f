//! The one-off jobs the tabs' panels ask for — the error going back, the lesson comic, what the fly
//! looks at, how a fly is doing and how it loses, the figures, a control brain's think — each on a
//! thread of its own that the lab starts. A panel keeps only the `Aside` its answer arrives on and
//! draws it; the work, and every simulator call in it, lives here.

pub mod blame;
pub mod control;
pub mod doing;
pub mod explain;
pub mod figures;
pub mod lesson;
pub mod profile;
pub mod train;
pub mod train_brain;
pub mod train_charles;
pub mod train_dopamine;

use std::sync::mpsc::{Receiver, channel};

use super::Wake;

/// Where the answer of a job run aside arrives (an error as text).
pub type Aside<T> = std::sync::mpsc::Receiver<Result<T, String>>;

/// Runs `work` on a thread of its own named `name` and hands back where its answer (an error as
/// text) arrives; `wake` is called when it has (the window repaints). A thread that cannot be
/// started answers with that error at once.
pub fn aside<T: Send + 'static>(wake: Wake, name: &str, work: impl FnOnce() -> anyhow::Result<T> + Send + 'static) -> Aside<T> {
    let (tx, rx) = std::sync::mpsc::channel();
    let answer = tx.clone();
    let spawned = std::thread::Builder::new().name(name.into()).spawn(move || {
        let _ = tx.send(work().map_err(|e| format!("{e:#}")));
        wake();
    });
    if let Err(e) = spawned {
        let _ = answer.send(Err(format!("could not start the {name} thread: {e}")));
    }
    rx
}

/// Runs a job that talks while it runs (the Train tab's runs) on a thread of its own named `name`:
/// `work` is handed `send` for its messages (each wakes the window); its end, an error as text,
/// arrives as `finished(…)`, also when the thread cannot be started.
pub fn talking<M: Send + 'static, T: 'static>(
    wake: Wake,
    name: &str,
    work: impl FnOnce(&(dyn Fn(M) + Sync)) -> anyhow::Result<T> + Send + 'static,
    finished: fn(Result<T, String>) -> M,
) -> Receiver<M> {
    let (tx, rx) = channel();
    let (answer, unstarted) = (tx.clone(), wake.clone());
    let spawned = std::thread::Builder::new().name(name.into()).spawn(move || {
        let send = |m: M| {
            let _ = tx.send(m);
            wake();
        };
        let result = work(&send);
        send(finished(result.map_err(|e| format!("{e:#}"))));
    });
    if let Err(e) = spawned {
        let _ = answer.send(finished(Err(format!("could not start the {name} thread: {e}"))));
        unstarted();
    }
    rx
}
