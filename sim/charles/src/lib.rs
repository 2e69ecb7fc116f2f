//! Charles (seed `000_…txt`): a transformer that never was a fly, as burn modules, one
//! implementation for any size. The board encoder reads 64 square tokens (13 piece ids from the
//! side to move: empty, the mover's six pieces, the opponent's six) plus a learned square
//! embedding, prepends a learned summary token and runs bidirectional pre-norm layers (multi-head
//! attention, SwiGLU feed-forward); the summary token out is the board's embedding. The move
//! decider takes the current board's embedding and, for every legal move, the board after it
//! minus the current one (both boards read from the mover's side), adds a type embedding to each,
//! runs bidirectional layers over that sequence (padding masked), projects the contextualised
//! move tokens to keys and the untouched current embedding to the query (bias-free), normalises
//! both with a parameter-free RMS norm and scores each move by their scaled dot product; padding
//! scores −1e9. The loss is the cross-entropy against the labels' τ shares over the legal moves,
//! the flies' target. The seed's size is `CharlesConfig::seed` (32.5 M parameters); training
//! and playing live in `run`, its player in `player`. This crate stands above both the arena, whose
//! `Network` trait it implements so the arena seats Charles without burn, and learning, on whose
//! burn device (`flychess_learning::burn_device`) it trains.
#![warn(clippy::too_many_lines)]

pub mod error;
pub mod player;
pub mod run;

pub use error::{Error, Result};

use burn::module::{Module, Param};
use burn::nn::attention::{MhaInput, MultiHeadAttention, MultiHeadAttentionConfig};
use burn::nn::{Embedding, EmbeddingConfig, Linear, LinearConfig, RmsNorm, RmsNormConfig, SwiGlu, SwiGluConfig};
use burn::tensor::activation::log_softmax;
use burn::tensor::{Bool, Device, Int, Tensor, TensorData};
use serde::{Deserialize, Serialize};
use shakmaty::{Chess, Move, Position};

use flychess_brain::chess::planes_from;

/// Padding's score: its softmax share underflows to exactly 0.
const PADDING: f32 = -1e9;

/// How big Charles is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct CharlesConfig {
    pub d: usize,
    pub heads: usize,
    pub encoder_layers: usize,
    pub decider_layers: usize,
    pub ffn: usize,
}

impl CharlesConfig {
    /// The seed's Charles: d 384, 6 + 12 layers, 6 heads, SwiGLU 1,040 (32.5 M parameters).
    pub fn seed() -> CharlesConfig {
        CharlesConfig { d: 384, heads: 6, encoder_layers: 6, decider_layers: 12, ffn: 1_040 }
    }

    /// The shipped size: small enough to train on a 2-core CPU in an hour or two (every position
    /// encodes itself and the board after each legal move, about 35 boards of 65 tokens).
    pub fn small() -> CharlesConfig {
        CharlesConfig { d: 64, heads: 4, encoder_layers: 2, decider_layers: 2, ffn: 176 }
    }

    /// A size for tests only (d 16, 1 + 1 layers): trains in seconds, plays like noise.
    pub fn tiny() -> CharlesConfig {
        CharlesConfig { d: 16, heads: 2, encoder_layers: 1, decider_layers: 1, ffn: 32 }
    }

    pub fn parse(s: &str) -> Option<CharlesConfig> {
        match s {
            "tiny" => Some(CharlesConfig::tiny()),
            "small" => Some(CharlesConfig::small()),
            "seed" => Some(CharlesConfig::seed()),
            _ => None,
        }
    }
}

/// One bidirectional pre-norm layer: attention, then a SwiGLU feed-forward, each added back.
#[derive(Module, Debug)]
pub struct Layer {
    attention_norm: RmsNorm,
    attention: MultiHeadAttention,
    ffn_norm: RmsNorm,
    gate: SwiGlu,
    down: Linear,
}

impl Layer {
    fn new(c: &CharlesConfig, device: &Device) -> Layer {
        Layer {
            attention_norm: RmsNormConfig::new(c.d).init(device),
            attention: MultiHeadAttentionConfig::new(c.d, c.heads).with_dropout(0.0).init(device),
            ffn_norm: RmsNormConfig::new(c.d).init(device),
            gate: SwiGluConfig::new(c.d, c.ffn).init(device),
            down: LinearConfig::new(c.ffn, c.d).with_bias(false).init(device),
        }
    }

    fn forward(&self, x: Tensor<3>, padding: Option<Tensor<2, Bool>>) -> Tensor<3> {
        let mut input = MhaInput::self_attn(self.attention_norm.forward(x.clone()));
        if let Some(p) = padding {
            input = input.mask_pad(p);
        }
        let x = x + self.attention.forward(input).context;
        let h = self.ffn_norm.forward(x.clone());
        x + self.down.forward(self.gate.forward(h))
    }
}

/// The whole model.
#[derive(Module, Debug)]
pub struct Charles {
    piece: Embedding,
    square: Param<Tensor<2>>,
    summary: Param<Tensor<2>>,
    encoder: Vec<Layer>,
    board_type: Param<Tensor<2>>,
    move_type: Param<Tensor<2>>,
    decider: Vec<Layer>,
    query: Linear,
    key: Linear,
}

/// Parameter-free RMS norm along the last dimension.
fn rms<const D: usize>(x: Tensor<D>) -> Tensor<D> {
    let mean_square = x.clone().powi_scalar(2).mean_dim(D - 1);
    x / (mean_square + 1e-6).sqrt()
}

fn small_normal(shape: [usize; 2], device: &Device, seed: u64) -> Param<Tensor<2>> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let values: Vec<f32> = (0..shape[0] * shape[1])
        .map(|_| {
            // The sum of four uniforms, scaled to a standard deviation of 0.02.
            let mut u = 0.0;
            for _ in 0..4 {
                s ^= s << 13;
                s ^= s >> 7;
                s ^= s << 17;
                u += (s >> 40) as f32 / (1u64 << 24) as f32 - 0.5;
            }
            u * 0.02 * (3.0f32).sqrt()
        })
        .collect();
    Param::from_tensor(Tensor::<2>::from_data(TensorData::new(values, shape), device))
}

impl Charles {
    /// A fresh Charles, initialised from seed 1.
    pub fn new(c: &CharlesConfig, device: &Device) -> Charles {
        Charles::seeded(c, device, 1)
    }

    /// A fresh Charles whose random initialisation follows `seed` (burn's generator is seeded and
    /// used under a lock, so two models made at once in one process cannot mix their draws).
    pub fn seeded(c: &CharlesConfig, device: &Device, seed: u64) -> Charles {
        static INIT: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let _one_at_a_time = INIT.lock().unwrap_or_else(|e| e.into_inner());
        device.seed(seed);
        let model = Charles {
            piece: EmbeddingConfig::new(13, c.d).init(device),
            square: small_normal([64, c.d], device, 1),
            summary: small_normal([1, c.d], device, 2),
            encoder: (0..c.encoder_layers).map(|_| Layer::new(c, device)).collect(),
            board_type: small_normal([1, c.d], device, 3),
            move_type: small_normal([1, c.d], device, 4),
            decider: (0..c.decider_layers).map(|_| Layer::new(c, device)).collect(),
            query: LinearConfig::new(c.d, c.d).with_bias(false).init(device),
            key: LinearConfig::new(c.d, c.d).with_bias(false).init(device),
        };
        // burn draws a parameter's initial values when it is first read: read them all here,
        // under the lock, or another model made meanwhile would take draws from this seed.
        struct Touch;
        impl burn::module::ModuleVisitor for Touch {
            fn visit_float<const D: usize>(&mut self, param: &Param<Tensor<D>>) {
                let _ = param.val();
            }
        }
        model.visit(&mut Touch);
        model
    }

    /// Boards `[n, 64]` (piece ids) → embeddings `[n, d]`.
    pub fn encode(&self, boards: Tensor<2, Int>) -> Tensor<2> {
        let [n, _] = boards.dims();
        let d = self.square.val().dims()[1];
        let x = self.piece.forward(boards) + self.square.val().unsqueeze_dim::<3>(0);
        let summary = self.summary.val().unsqueeze_dim::<3>(0).repeat_dim(0, n);
        let mut x = Tensor::cat(vec![summary, x], 1);
        for layer in &self.encoder {
            x = layer.forward(x, None);
        }
        x.slice([0..n, 0..1, 0..d]).reshape([n, d])
    }

    /// One logit per move slot `[b, w]` for a batch.
    pub fn logits(&self, batch: &MoveBatch) -> Tensor<2> {
        let (b, w) = (batch.positions, batch.width);
        let current = self.encode(batch.current.clone());
        let d = current.dims()[1];
        let after = self.encode(batch.after.clone()).reshape([b, w, d]);
        let moves = after - current.clone().unsqueeze_dim::<3>(1) + self.move_type.val().unsqueeze_dim::<3>(0);
        let board = current.clone().unsqueeze_dim::<3>(1) + self.board_type.val().unsqueeze_dim::<3>(0);
        let mut x = Tensor::cat(vec![board, moves], 1);
        for layer in &self.decider {
            x = layer.forward(x, Some(batch.mask.clone()));
        }
        let keys = rms(self.key.forward(x.slice([0..b, 1..w + 1, 0..d])));
        let query = rms(self.query.forward(current)).unsqueeze_dim::<3>(1);
        (keys * query).sum_dim(2).reshape([b, w]) / (d as f64).sqrt() + batch.padding.clone()
    }

    /// Mean cross-entropy of a batch against its target shares (a one-element tensor).
    pub fn loss(&self, batch: &MoveBatch) -> Tensor<1> {
        let logits = self.logits(batch);
        (log_softmax(logits, 1) * batch.share.clone()).sum().neg() / batch.positions as f64
    }

    /// The number of parameters.
    pub fn parameters(&self) -> usize {
        self.num_params()
    }
}

/// A board as Charles reads it: 64 piece ids from `us`'s side (0 empty, 1–6 `us`'s pawn … king,
/// 7–12 the other side's), square 8·rank + file in that side's frame.
pub fn tokens(pos: &Chess, us: shakmaty::Color) -> [i64; 64] {
    let p = planes_from(pos, us);
    let mut t = [0i64; 64];
    for (plane, squares) in p.iter().enumerate() {
        for (sq, &on) in squares.iter().enumerate() {
            if on {
                t[sq] = plane as i64 + 1;
            }
        }
    }
    t
}

/// A batch of positions as tensors: the current boards, the boards after each legal move padded
/// to the batch's longest list (padding: an empty board), and the target shares.
pub struct MoveBatch {
    pub current: Tensor<2, Int>,
    pub after: Tensor<2, Int>,
    /// `[b, 1 + w]`: true where a token is padding (the board token never is).
    pub mask: Tensor<2, Bool>,
    pub padding: Tensor<2>,
    pub share: Tensor<2>,
    pub positions: usize,
    pub width: usize,
}

impl MoveBatch {
    /// `positions` with, for each, its legal moves in shakmaty's order and their target shares
    /// (empty shares: all zero, for playing).
    pub fn new(positions: &[(&Chess, &[Move], &[f32])], device: &Device) -> MoveBatch {
        let b = positions.len();
        let w = positions.iter().map(|(_, m, _)| m.len()).max().unwrap_or(1).max(1);
        let mut current = Vec::with_capacity(b * 64);
        let mut after = vec![0i64; b * w * 64];
        let mut mask = vec![false; b * (w + 1)];
        let mut padding = vec![PADDING; b * w];
        let mut share = vec![0f32; b * w];
        for (i, (pos, moves, shares)) in positions.iter().enumerate() {
            let us = pos.turn();
            current.extend_from_slice(&tokens(pos, us));
            for k in 0..w {
                let slot = i * w + k;
                match moves.get(k) {
                    Some(m) => {
                        let mut next = (*pos).clone();
                        next.play_unchecked(*m);
                        after[slot * 64..(slot + 1) * 64].copy_from_slice(&tokens(&next, us));
                        padding[slot] = 0.0;
                        share[slot] = shares.get(k).copied().unwrap_or(0.0);
                    }
                    None => mask[i * (w + 1) + 1 + k] = true,
                }
            }
        }
        let ints = |v: Vec<i64>, rows: usize| Tensor::<2, Int>::from_data(TensorData::new(v, [rows, 64]), device);
        MoveBatch {
            current: ints(current, b),
            after: ints(after, b * w),
            mask: Tensor::<2, Bool>::from_data(TensorData::new(mask, [b, w + 1]), device),
            padding: Tensor::<2>::from_data(TensorData::new(padding, [b, w]), device),
            share: Tensor::<2>::from_data(TensorData::new(share, [b, w]), device),
            positions: b,
            width: w,
        }
    }
}
