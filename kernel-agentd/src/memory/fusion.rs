//! The hybrid ranking of memory search and conversation recall alike: lexical candidates (BM25
//! order, each marked *exact* per [`super::exact::ExactWords`]: every content word, a quoted
//! phrase, a number or a name) and vector candidates (cosine order) fused by weighted reciprocal
//! rank, exact hits first. On the conversational set (BENCHMARKS.md, "Conversation recall")
//! conversation recall's weights ([`HISTORY`]) beat dense-only retrieval, plain RRF, the earlier
//! memory rule and BM25 (with its bilingual lexicon), while every question in the owner's own
//! words finds its turn; memory search keeps the weights its sets were measured with
//! ([`SHIPPED`]).
//!
//! Why not the earlier memory rule (every lexical hit that contains all the words above every hit
//! by meaning, a vector hit weighed by its closeness to the best one): in conversation nearly
//! every turn shares a word with the question, so meaning never got a say. Reciprocal rank lets
//! both lists vote; the weights and the constant were chosen on the even half of
//! `bench/recall/conversations.json` (the odd half held out), and the exact tier keeps the
//! owner's own words on top.

use std::collections::HashMap;

/// How the two lists vote.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Weights {
    /// The reciprocal-rank constant (60 in the original RRF paper).
    pub k: f32,
    /// Weight of an exact lexical hit, and of any other lexical hit.
    pub lexical: f32,
    pub weak: f32,
    /// Weight of the vector list.
    pub vector: f32,
    /// Whether every exact lexical hit ranks above every other hit.
    pub exact_first: bool,
}

/// Plain reciprocal-rank fusion (k = 60, equal weights, no tiers): the baseline.
pub const PLAIN_RRF: Weights = Weights {
    k: 60.0,
    lexical: 1.0,
    weak: 1.0,
    vector: 1.0,
    exact_first: false,
};

/// Memory search's ranking: a small constant (the first few places of each list matter most),
/// meaning counted twice a lexical hit's vote, a lexical hit without the exact words half, exact
/// hits first.
pub const SHIPPED: Weights = Weights {
    k: 5.0,
    lexical: 1.0,
    weak: 0.5,
    vector: 2.0,
    exact_first: true,
};

/// Conversation recall's ranking. Its lexical list carries the other language's words too
/// (`recall::lexicon`), so a lexical hit without the question's exact words is often the
/// cross-language answer: it votes three quarters, and meaning votes as much as a lexical hit.
/// Chosen on the even half of the set (0.955; memory's weights gave 0.938 there).
pub const HISTORY: Weights = Weights {
    k: 5.0,
    lexical: 1.0,
    weak: 0.75,
    vector: 1.0,
    exact_first: true,
};

/// The cosine below which a hit found only by meaning is dropped: none. Memory's
/// `embeddings.min_similarity` (0.78 for e5) cost a twelfth of the cross-language questions
/// (recall@5 0.684 → 0.632 on the set): a question in the other language lies at cosine
/// 0.75–0.8 from its turn.
pub const SHIPPED_FLOOR: f32 = 0.0;

/// Ids best first, at most `limit`: `lexical` (`(id, exact)`, best first) and `vector`
/// (`(id, cosine)`, best first) fused by `w`; a hit found only by meaning whose cosine is below
/// `floor` is dropped. Ties: the better lexical rank, then the newer id.
pub fn fuse(
    lexical: &[(i64, bool)],
    vector: &[(i64, f32)],
    floor: f32,
    w: &Weights,
    limit: usize,
) -> Vec<i64> {
    // id -> (tier: 0 exact, 1 other; score; lexical rank)
    let mut scores: HashMap<i64, (u8, f32, usize)> = HashMap::new();
    for (rank, &(id, exact)) in lexical.iter().enumerate() {
        let tier = u8::from(!(exact && w.exact_first));
        let weight = if exact { w.lexical } else { w.weak };
        let score = weight / (w.k + rank as f32 + 1.0);
        scores.entry(id).or_insert((tier, score, rank));
    }
    for (rank, &(id, cosine)) in vector.iter().enumerate() {
        let score = w.vector / (w.k + rank as f32 + 1.0);
        match scores.get_mut(&id) {
            Some(entry) => entry.1 += score,
            None if cosine >= floor => {
                scores.insert(id, (1, score, usize::MAX));
            }
            None => {}
        }
    }
    let mut ranked: Vec<(i64, (u8, f32, usize))> = scores.into_iter().collect();
    ranked.sort_by(|a, b| {
        (a.1.0)
            .cmp(&b.1.0)
            .then(b.1.1.total_cmp(&a.1.1))
            .then(a.1.2.cmp(&b.1.2))
            .then(b.0.cmp(&a.0))
    });
    ranked.into_iter().take(limit).map(|(id, _)| id).collect()
}

/// The earlier memory rule (issue 39), kept as a baseline for the evaluations: lexical hits
/// weighed 1 (exact) or 0.4 (some words) by rank, a vector hit 0.9 times the square of its
/// closeness between the farthest (0) and the best candidate (1), exact hits first, vector-only
/// hits below `floor` dropped.
#[cfg(any(test, feature = "test-support"))]
pub fn earlier_memory_rule(
    lexical: &[(i64, bool)],
    vector: &[(i64, f32)],
    floor: f32,
    limit: usize,
) -> Vec<i64> {
    // id -> (tier: 0 exact, 1 other; score; cosine; lexical rank)
    let mut scores: HashMap<i64, (u8, f32, f32, usize)> = HashMap::new();
    for (rank, &(id, exact)) in lexical.iter().enumerate() {
        let (tier, base) = if exact { (0, 1.0) } else { (1, 0.4) };
        let score = base / (1.0 + 0.05 * rank as f32);
        scores.entry(id).or_insert((tier, score, f32::MIN, rank));
    }
    if let (Some(&(_, best)), Some(&(_, worst))) = (vector.first(), vector.last()) {
        let spread = best - worst;
        for &(id, cosine) in vector {
            let closeness = if spread > f32::EPSILON {
                ((cosine - worst) / spread).clamp(0.0, 1.0).powi(2)
            } else {
                1.0
            };
            match scores.get_mut(&id) {
                Some(entry) => {
                    entry.1 += 0.9 * closeness;
                    entry.2 = cosine;
                }
                None if cosine >= floor && closeness > 0.0 => {
                    scores.insert(id, (1, 0.9 * closeness, cosine, usize::MAX));
                }
                None => {}
            }
        }
    }
    let mut ranked: Vec<(i64, (u8, f32, f32, usize))> = scores.into_iter().collect();
    ranked.sort_by(|a, b| {
        (a.1.0)
            .cmp(&b.1.0)
            .then(b.1.1.total_cmp(&a.1.1))
            .then(b.1.2.total_cmp(&a.1.2))
            .then(a.1.3.cmp(&b.1.3))
            .then(b.0.cmp(&a.0))
    });
    ranked.into_iter().take(limit).map(|(id, _)| id).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn both_lists_vote_and_exact_hits_stay_on_top() {
        // 7 is second by words and first by meaning: it beats 1, first by words only.
        let lexical = [(1, false), (7, false), (2, false)];
        let vector = [(7, 0.9), (9, 0.85), (1, 0.7)];
        let fused = fuse(&lexical, &vector, 0.0, &SHIPPED, 3);
        assert_eq!(fused[0], 7);
        // An exact hit found last by words and not at all by meaning still ranks first.
        let lexical = [(1, false), (2, false), (3, true)];
        let fused = fuse(&lexical, &vector, 0.0, &SHIPPED, 5);
        assert_eq!(fused[0], 3);
        // Plain RRF has no tier.
        assert_ne!(fuse(&lexical, &vector, 0.0, &PLAIN_RRF, 5)[0], 3);
    }

    #[test]
    fn vector_neighbours_never_push_an_exact_hit_out_of_the_top_k() {
        // Five exact hits, six close vector-only neighbours: all five exact hits stay.
        let exact: Vec<(i64, bool)> = (1..=5).map(|id| (id, true)).collect();
        let near: Vec<(i64, f32)> = (11..=16).map(|id| (id, 0.9 - id as f32 * 0.001)).collect();
        assert_eq!(fuse(&exact, &near, 0.0, &SHIPPED, 5), [1, 2, 3, 4, 5]);
        // Below them, the close neighbours in order of meaning.
        assert_eq!(fuse(&exact, &near, 0.0, &SHIPPED, 7)[5..], [11, 12]);
    }

    #[test]
    fn far_vector_only_hits_are_dropped_and_lexical_ones_kept() {
        let vector = [(11, 0.84), (12, 0.79), (13, 0.70)];
        assert_eq!(fuse(&[], &vector, 0.8, &SHIPPED, 5), [11]);
        assert_eq!(fuse(&[(13, true)], &vector, 0.8, &SHIPPED, 5), [13, 11]);
        assert_eq!(fuse(&[], &[], 0.0, &SHIPPED, 5), Vec::<i64>::new());
        assert_eq!(fuse(&[(1, true), (2, true)], &[], 0.0, &SHIPPED, 1), [1]);
    }
}
