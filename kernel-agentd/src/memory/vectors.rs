//! [`VectorIndex`]: every memory vector of the current model in memory, int8-quantised (one byte
//! per component and one scale per vector: 384 bytes + 20 for a 384-dimensional model), searched
//! by brute force (an int8 dot product per memory, [`super::dot`], keeping the best
//! k in a small sorted array; well under 1 ms for 10k memories). Cosine similarity, since stored
//! vectors are normalised before quantising.

use std::collections::HashMap;

use super::dot::Query;

/// A vector quantised to int8: component ≈ `bytes[i] as f32 * scale`.
#[derive(Debug, Clone, PartialEq)]
pub struct Quantised {
    pub scale: f32,
    pub bytes: Vec<u8>,
}

/// `v` quantised symmetrically to int8 (the largest component becomes ±127).
pub fn quantise(v: &[f32]) -> Quantised {
    let max = v.iter().fold(0.0f32, |m, x| m.max(x.abs()));
    let scale = if max > 0.0 { max / 127.0 } else { 1.0 };
    let bytes = v
        .iter()
        .map(|x| (x / scale).round().clamp(-127.0, 127.0) as i8 as u8)
        .collect();
    Quantised { scale, bytes }
}

/// The memory vectors of one model, with each memory's creation time (unix ms) for date filters.
#[derive(Debug, Default)]
pub struct VectorIndex {
    dim: usize,
    ids: Vec<i64>,
    created: Vec<i64>,
    scales: Vec<f32>,
    /// `ids.len() × dim` components, row by row.
    data: Vec<i8>,
    position: HashMap<i64, usize>,
}

impl VectorIndex {
    /// An empty index; its dimension is set by the first vector.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many memories have a vector here.
    pub fn len(&self) -> usize {
        self.ids.len()
    }

    /// Whether no memory has a vector here.
    pub fn is_empty(&self) -> bool {
        self.ids.is_empty()
    }

    /// The vectors' dimension (0 while empty).
    pub fn dim(&self) -> usize {
        self.dim
    }

    /// Adds or replaces memory `id`'s vector; `false` (nothing changed) when its dimension is not
    /// the index's.
    pub fn insert(&mut self, id: i64, created_ms: i64, scale: f32, bytes: &[u8]) -> bool {
        if self.ids.is_empty() {
            self.dim = bytes.len();
        }
        if bytes.len() != self.dim || self.dim == 0 {
            return false;
        }
        let row = bytes.iter().map(|&b| b as i8);
        match self.position.get(&id) {
            Some(&i) => {
                self.created[i] = created_ms;
                self.scales[i] = scale;
                for (slot, x) in self.data[i * self.dim..(i + 1) * self.dim]
                    .iter_mut()
                    .zip(row)
                {
                    *slot = x;
                }
            }
            None => {
                self.position.insert(id, self.ids.len());
                self.ids.push(id);
                self.created.push(created_ms);
                self.scales.push(scale);
                self.data.extend(row);
            }
        }
        true
    }

    /// Drops memory `id`'s vector, if any.
    pub fn remove(&mut self, id: i64) {
        let Some(i) = self.position.remove(&id) else {
            return;
        };
        let last = self.ids.len() - 1;
        if i != last {
            let moved = self.ids[last];
            self.ids[i] = moved;
            self.created[i] = self.created[last];
            self.scales[i] = self.scales[last];
            self.data
                .copy_within(last * self.dim..(last + 1) * self.dim, i * self.dim);
            self.position.insert(moved, i);
        }
        self.ids.pop();
        self.created.pop();
        self.scales.pop();
        self.data.truncate(last * self.dim);
    }

    /// Up to `k` memories most similar to the normalised `query`, best first, as
    /// `(id, cosine)` (ties: the newer memory first); only memories created in `[from, to)` (unix
    /// ms) when given. One pass over the vectors keeping the best `k` in a small sorted array: no
    /// per-memory allocation.
    pub fn nearest(
        &self,
        query: &[f32],
        k: usize,
        from: Option<i64>,
        to: Option<i64>,
    ) -> Vec<(i64, f32)> {
        if query.len() != self.dim || self.is_empty() || k == 0 {
            return Vec::new();
        }
        let q = quantise(query);
        let qi = Query::new(q.bytes.iter().map(|&b| b as i8).collect());
        let dated = from.is_some() || to.is_some();
        let mut best = TopK::new(k);
        for (i, row) in self.data.chunks_exact(self.dim).enumerate() {
            if dated {
                let at = self.created[i];
                if from.is_some_and(|f| at < f) || to.is_some_and(|t| at >= t) {
                    continue;
                }
            }
            let score = qi.dot(row) as f32 * q.scale * self.scales[i];
            best.offer(score, self.ids[i]);
        }
        best.into_sorted()
    }
}

/// The best `k` of the `(score, id)` pairs offered, kept sorted best first (higher score, then
/// higher id); an offer below the worst kept one costs one comparison.
struct TopK {
    k: usize,
    kept: Vec<(f32, i64)>,
}

impl TopK {
    fn new(k: usize) -> Self {
        Self {
            k,
            kept: Vec::with_capacity(k + 1),
        }
    }

    fn offer(&mut self, score: f32, id: i64) {
        let better = |a: &(f32, i64)| a.0 > score || (a.0 == score && a.1 > id);
        if self.kept.len() == self.k && self.kept.last().is_some_and(better) {
            return;
        }
        let at = self.kept.partition_point(better);
        self.kept.insert(at, (score, id));
        self.kept.truncate(self.k);
    }

    fn into_sorted(self) -> Vec<(i64, f32)> {
        self.kept.into_iter().map(|(s, id)| (id, s)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn unit(v: &[f32]) -> Vec<f32> {
        let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        v.iter().map(|x| x / n).collect()
    }

    fn add(index: &mut VectorIndex, id: i64, created: i64, v: &[f32]) {
        let q = quantise(&unit(v));
        assert!(index.insert(id, created, q.scale, &q.bytes));
    }

    #[test]
    fn nearest_by_cosine_with_date_filters() {
        let mut index = VectorIndex::new();
        add(&mut index, 1, 100, &[1.0, 0.0, 0.0]);
        add(&mut index, 2, 200, &[0.7, 0.7, 0.0]);
        add(&mut index, 3, 300, &[0.0, 0.0, 1.0]);
        let q = unit(&[1.0, 0.1, 0.0]);
        let found = index.nearest(&q, 2, None, None);
        assert_eq!(found.iter().map(|f| f.0).collect::<Vec<_>>(), [1, 2]);
        assert!((found[0].1 - 0.995).abs() < 0.02, "{found:?}");
        let later = index.nearest(&q, 5, Some(150), None);
        assert_eq!(later.iter().map(|f| f.0).collect::<Vec<_>>(), [2, 3]);
        let window = index.nearest(&q, 5, Some(150), Some(300));
        assert_eq!(window.iter().map(|f| f.0).collect::<Vec<_>>(), [2]);
    }

    #[test]
    fn the_bounded_top_k_equals_a_full_sort() {
        let mut index = VectorIndex::new();
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % 2001) as f32 - 1000.0
        };
        let vectors: Vec<Vec<f32>> = (0..500)
            .map(|_| (0..40).map(|_| next()).collect())
            .collect();
        for (id, v) in vectors.iter().enumerate() {
            add(&mut index, id as i64, id as i64, v);
        }
        // Two memories with the same vector: the newer one first.
        add(&mut index, 500, 500, &vectors[3]);
        let query = unit(&vectors[3]);
        let q = quantise(&query);
        let qi = Query::new(q.bytes.iter().map(|&b| b as i8).collect());
        let mut all: Vec<(i64, f32)> = (0..index.len())
            .map(|i| {
                let row = &index.data[i * index.dim..(i + 1) * index.dim];
                let score = qi.dot(row) as f32 * q.scale * index.scales[i];
                (index.ids[i], score)
            })
            .collect();
        all.sort_by(|a, b| b.1.total_cmp(&a.1).then(b.0.cmp(&a.0)));
        for k in [1, 7, 20, 600] {
            let found = index.nearest(&query, k, None, None);
            assert_eq!(found, all[..k.min(all.len())], "k = {k}");
        }
        assert_eq!(index.nearest(&query, 2, None, None)[0].0, 500);
        let dated = index.nearest(&query, 600, Some(100), Some(200));
        assert_eq!(dated.len(), 100);
        assert!(dated.iter().all(|(id, _)| (100..200).contains(id)));
    }

    #[test]
    fn replace_remove_and_dimension_checks() {
        let mut index = VectorIndex::new();
        add(&mut index, 1, 1, &[1.0, 0.0]);
        add(&mut index, 2, 2, &[0.0, 1.0]);
        add(&mut index, 3, 3, &[1.0, 1.0]);
        add(&mut index, 1, 1, &[0.0, 1.0]);
        assert_eq!(index.len(), 3);
        index.remove(1);
        index.remove(42);
        assert_eq!(index.len(), 2);
        let found = index.nearest(&unit(&[0.0, 1.0]), 5, None, None);
        assert_eq!(found.iter().map(|f| f.0).collect::<Vec<_>>(), [2, 3]);
        let q = quantise(&[1.0, 0.0, 0.0]);
        assert!(!index.insert(9, 9, q.scale, &q.bytes));
        assert!(index.nearest(&[1.0, 0.0, 0.0], 5, None, None).is_empty());
    }
}
