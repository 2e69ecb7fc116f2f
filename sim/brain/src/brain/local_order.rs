//! The order the CPU engine keeps the neurons in memory. Each connection gathers its sender's
//! rates of the whole batch (128 bytes at batch 32), and in the brain's own numbering (FlyWire's
//! by root id) a row's senders lie all over a 17 MB matrix: a core's 1 MB cache keeps one in five
//! of them between uses. Renumbered in reverse Cuthill–McKee order (a breadth-first walk of the
//! wiring, taken both ways, from its least connected neurons), neurons that talk to each other sit
//! close together, and a row's senders are mostly ones the rows before it just read (`flychess
//! bench` reports the misses of a 1 MB cache in either order).
//!
//! Only the places change, never a sum: the renumbered brain keeps every row's connections in
//! the brain's own edge order (by original sender), with the same weights, μ, gains and eye
//! slots, so each rate is the same float, bit for bit, as the brain's own order gives. The engine
//! thinks in the renumbered brain and hands rates back in the brain's numbering.

use super::Brain;

/// A brain renumbered for locality, and the way back.
#[derive(Debug)]
pub struct LocalOrder {
    /// The same brain with neuron `k` = the original neuron `original[k]`; each row's
    /// connections in the original edge order.
    pub(crate) brain: Brain,
    /// New index → original neuron.
    pub(crate) original: Vec<u32>,
    /// Original neuron → new index.
    pub(crate) place: Vec<u32>,
}

impl LocalOrder {
    pub(crate) fn new(brain: &Brain) -> LocalOrder {
        let original = reverse_cuthill_mckee(brain);
        let mut place = vec![0u32; brain.neurons];
        for (k, &o) in original.iter().enumerate() {
            place[o as usize] = k as u32;
        }
        let renumbered = brain.renumbered(&original, &place);
        LocalOrder { brain: renumbered, original, place }
    }

    /// The renumbered brain.
    pub fn brain(&self) -> &Brain {
        &self.brain
    }

    /// The new indices of these original neurons.
    pub(crate) fn places_of(&self, neurons: &[u32]) -> Vec<u32> {
        neurons.iter().map(|&j| self.place[j as usize]).collect()
    }

    /// Bytes it holds (the renumbered brain and both maps).
    pub(crate) fn bytes(&self) -> usize {
        self.brain.bytes() + 4 * (self.original.len() + self.place.len())
    }

    /// Mean distance in memory, in neurons, between a receiving neuron and each of its senders:
    /// in the brain's numbering and in this one.
    pub fn mean_sender_distance(&self, brain: &Brain) -> (f64, f64) {
        (mean_sender_distance(brain), mean_sender_distance(&self.brain))
    }
}

fn mean_sender_distance(brain: &Brain) -> f64 {
    let total: f64 = (0..brain.neurons).map(|j| brain.pre[brain.row(j)].iter().map(|&p| (p as f64 - j as f64).abs()).sum::<f64>()).sum();
    total / brain.connections().max(1) as f64
}

/// The share of connections whose sender's rates are not in a cache holding the last
/// `senders_held` distinct senders read (least recently used first out), the rows walked in order
/// as one thread walks them: how often a gather goes past a core's own cache. Exact reuse
/// distances by a Fenwick tree over the gathers.
pub fn cache_misses(brain: &Brain, senders_held: usize) -> f64 {
    let gathers = brain.connections();
    let mut tree = vec![0i32; gathers + 1];
    let add = |tree: &mut [i32], at: usize, v: i32| {
        let mut i = at + 1;
        while i <= gathers {
            tree[i] += v;
            i += i & i.wrapping_neg();
        }
    };
    let below = |tree: &[i32], at: usize| -> i64 {
        let (mut i, mut total) = (at, 0i64);
        while i > 0 {
            total += tree[i] as i64;
            i -= i & i.wrapping_neg();
        }
        total
    };
    let mut last = vec![usize::MAX; brain.neurons];
    let (mut misses, mut now) = (0usize, 0usize);
    for &p in &brain.pre {
        let before = last[p as usize];
        if before == usize::MAX {
            misses += 1;
        } else {
            // Distinct senders read since: one marker per sender, at its latest read.
            if (below(&tree, now) - below(&tree, before + 1)) as usize >= senders_held {
                misses += 1;
            }
            add(&mut tree, before, -1);
        }
        add(&mut tree, now, 1);
        last[p as usize] = now;
        now += 1;
    }
    misses as f64 / gathers.max(1) as f64
}

/// Reverse Cuthill–McKee over the wiring taken as undirected: each connected part from its least
/// connected neuron (ties by index), neighbours visited in order of degree (ties by index), the
/// whole order reversed. Deterministic: the same brain gives the same order.
fn reverse_cuthill_mckee(brain: &Brain) -> Vec<u32> {
    let n = brain.neurons;
    // Undirected neighbour lists as CSR: both directions of every connection, deduplicated.
    let mut degree = vec![0u32; n];
    for j in 0..n {
        for &p in &brain.pre[brain.row(j)] {
            degree[j] += 1;
            degree[p as usize] += 1;
        }
    }
    let mut start = vec![0usize; n + 1];
    for j in 0..n {
        start[j + 1] = start[j] + degree[j] as usize;
    }
    let mut fill = start[..n].to_vec();
    let mut neighbours = vec![0u32; start[n]];
    for j in 0..n {
        for &p in &brain.pre[brain.row(j)] {
            neighbours[fill[j]] = p;
            fill[j] += 1;
            neighbours[fill[p as usize]] = j as u32;
            fill[p as usize] += 1;
        }
    }
    let mut distinct = vec![0u32; n];
    for j in 0..n {
        let list = &mut neighbours[start[j]..start[j + 1]];
        list.sort_unstable();
        let mut kept = 0;
        for k in 0..list.len() {
            if k == 0 || list[k] != list[k - 1] {
                list[kept] = list[k];
                kept += 1;
            }
        }
        distinct[j] = kept as u32;
    }
    let mut by_degree: Vec<u32> = (0..n as u32).collect();
    by_degree.sort_by_key(|&j| (distinct[j as usize], j));
    let mut seen = vec![false; n];
    let mut order = Vec::with_capacity(n);
    let mut next: Vec<u32> = Vec::new();
    for &root in &by_degree {
        if seen[root as usize] {
            continue;
        }
        seen[root as usize] = true;
        let mut head = order.len();
        order.push(root);
        while head < order.len() {
            let v = order[head] as usize;
            head += 1;
            next.clear();
            next.extend(neighbours[start[v]..start[v] + distinct[v] as usize].iter().copied().filter(|&u| !seen[u as usize]));
            next.sort_by_key(|&u| (distinct[u as usize], u));
            for &u in &next {
                seen[u as usize] = true;
            }
            order.extend_from_slice(&next);
        }
    }
    order.reverse();
    order
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eye::{EyeCell, EyeRole};

    /// A chain 0 - 5 - 1 - 4 - 2 - 3 (scattered indices), each link one way.
    fn chain() -> Brain {
        // Row j hears: 5 hears 0, 1 hears 5, 4 hears 1, 2 hears 4, 3 hears 2.
        let mut hears = vec![Vec::new(); 6];
        for (to, from) in [(5u32, 0u32), (1, 5), (4, 1), (2, 4), (3, 2)] {
            hears[to as usize].push(from);
        }
        let mut row_start = vec![0u32];
        let mut pre = Vec::new();
        for h in &hears {
            pre.extend(h);
            row_start.push(pre.len() as u32);
        }
        let weight = vec![0.5; pre.len()];
        Brain::from_parts(6, row_start, pre, weight, vec![EyeCell { neuron: 0, square: 0, role: EyeRole::Own }])
    }

    #[test]
    fn misses_count_reads_past_the_cache_by_distinct_senders_since() {
        // Rows 2-5 hear 0 and 1 each (gathers 0 1 0 1 0 1 0 1): with room for one sender every
        // gather misses, with room for two only the first read of each.
        let pre = vec![0u32, 1, 0, 1, 0, 1, 0, 1];
        let brain = Brain::from_parts(6, vec![0, 0, 0, 2, 4, 6, 8], pre, vec![0.5; 8], vec![]);
        assert_eq!(cache_misses(&brain, 1), 1.0);
        assert_eq!(cache_misses(&brain, 2), 2.0 / 8.0);
        assert_eq!(cache_misses(&brain, 0), 1.0);
    }

    #[test]
    fn a_chain_is_laid_out_end_to_end_and_the_maps_invert_each_other() {
        let brain = chain();
        let order = LocalOrder::new(&brain);
        // Neighbours along the chain end up next to each other in memory.
        let along = [0u32, 5, 1, 4, 2, 3];
        for w in along.windows(2) {
            let (a, b) = (order.place[w[0] as usize] as i64, order.place[w[1] as usize] as i64);
            assert_eq!((a - b).abs(), 1, "{w:?} at {a} and {b}");
        }
        for (k, &o) in order.original.iter().enumerate() {
            assert_eq!(order.place[o as usize] as usize, k);
        }
        let (before, after) = order.mean_sender_distance(&brain);
        assert!(after < before && after == 1.0, "{before} → {after}");
        // Each sender is read once along a chain: every gather is a first read in either order.
        assert_eq!(cache_misses(&brain, 1000), 1.0);
        assert_eq!(cache_misses(&order.brain, 1000), 1.0);
        // Same connections, renumbered, in the original edge order.
        assert_eq!(order.brain.connections(), brain.connections());
        assert_eq!(order.brain.eye[0].neuron, order.place[0]);
    }
}
