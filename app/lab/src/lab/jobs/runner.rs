//! Where the lab's work runs aside: every job, disk scan, brain load and fly load the lab starts
//! goes through `spawn`. On a desktop each is a named thread of its own. In a page (wasm32, where
//! a thread cannot be started) each is queued and run one at a time, each in a macrotask of the
//! browser's event loop that the page's crate schedules (`install_scheduler`), so that a frame is
//! drawn between two jobs and the "thinking…" a view shows is on screen before the work starts.

/// Runs `work` aside under `name` (the thread's name on a desktop); the error, as text, when it
/// cannot be started.
pub fn spawn(name: &str, work: impl FnOnce() + Send + 'static) -> Result<(), String> {
    #[cfg(not(target_arch = "wasm32"))]
    {
        std::thread::Builder::new().name(name.into()).spawn(work).map(drop).map_err(|e| format!("Could not start the {name} thread: {e}"))
    }
    #[cfg(target_arch = "wasm32")]
    {
        let _ = name;
        page::queue(Box::new(work));
        Ok(())
    }
}

#[cfg(target_arch = "wasm32")]
pub use page::install_scheduler;

/// The page's queue: one job a macrotask, in the order they were asked for.
#[cfg(target_arch = "wasm32")]
mod page {
    use std::cell::{Cell, RefCell};
    use std::collections::VecDeque;

    type Job = Box<dyn FnOnce()>;
    /// How the page runs a callback in a macrotask of its own.
    type Schedule = fn(Job);

    thread_local! {
        static QUEUE: RefCell<VecDeque<Job>> = RefCell::new(VecDeque::new());
        static SCHEDULER: Cell<Option<Schedule>> = const { Cell::new(None) };
        static SCHEDULED: Cell<bool> = const { Cell::new(false) };
    }

    /// How the page runs a callback in a macrotask of its own (the page's crate passes a
    /// `setTimeout(…, 0)`). Until it is installed, a job runs at once, where it is asked for.
    pub fn install_scheduler(schedule: fn(Box<dyn FnOnce()>)) {
        SCHEDULER.with(|s| s.set(Some(schedule)));
    }

    pub(super) fn queue(job: Job) {
        QUEUE.with(|q| q.borrow_mut().push_back(job));
        next();
    }

    /// Asks for the macrotask that runs the next job, unless one is asked for already.
    fn next() {
        if SCHEDULED.with(Cell::get) || QUEUE.with(|q| q.borrow().is_empty()) {
            return;
        }
        match SCHEDULER.with(Cell::get) {
            Some(schedule) => {
                SCHEDULED.with(|s| s.set(true));
                schedule(Box::new(run_one));
            }
            None => run_one(),
        }
    }

    fn run_one() {
        SCHEDULED.with(|s| s.set(false));
        let job = QUEUE.with(|q| q.borrow_mut().pop_front());
        if let Some(job) = job {
            job();
        }
        next();
    }
}
