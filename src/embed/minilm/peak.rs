//! The machine's own limit for the arithmetic MiniLM is made of: an fp32 GEMM (sgemm) and an
//! int8 GEMM (u8 × i8 → i32, what the int8 model's matrix products run as), each one ONNX
//! Runtime operator on all cores, at the shape of the model's feed-forward layer.

use std::path::Path;
use std::time::{Duration, Instant};

use ort::editor::{Graph, Model, Node, ONNX_DOMAIN, Opset};
use ort::memory::Allocator;
use ort::session::Session;
use ort::session::builder::GraphOptimizationLevel;
use ort::value::{
    DynTensor, Outlet, PrimitiveTensorElementType, Shape, SymbolicDimensions, Tensor,
    TensorElementType, ValueType,
};
use serde::Serialize;

use super::onnx::{environment, library};
use crate::embed::EmbedError;

/// Rows (tokens), inner and output width: MiniLM's 384 → 1536 feed-forward product over 256
/// tokens.
const M: usize = 256;
const K: usize = 384;
const N: usize = 1536;
/// How long each product is repeated for.
const RUN_FOR: Duration = Duration::from_millis(1500);

#[derive(Clone, Debug, Serialize)]
pub struct GemmPeak {
    /// `[rows, inner, columns]`.
    pub shape: [usize; 3],
    pub threads: usize,
    /// fp32 multiply-adds × 2 per second, in billions.
    pub sgemm_gflops: f64,
    /// int8 multiply-adds × 2 per second, in billions.
    pub int8_gops: f64,
}

fn failed(e: &dyn std::fmt::Display) -> EmbedError {
    EmbedError::Inference(format!("GEMM benchmark: {e}"))
}

fn tensor_type(ty: TensorElementType, shape: [usize; 2]) -> ValueType {
    ValueType::Tensor {
        ty,
        shape: Shape::new(shape.map(|d| d as i64)),
        dimension_symbols: SymbolicDimensions::empty(2),
    }
}

/// A deterministic `[rows, cols]` tensor of small values.
fn filled<T: PrimitiveTensorElementType + Copy + std::fmt::Debug>(
    shape: [usize; 2],
    value: impl Fn(usize) -> T,
) -> Result<Tensor<T>, EmbedError> {
    let mut t = Tensor::<T>::new(&Allocator::default(), shape).map_err(|e| failed(&e))?;
    let (_, data) = t.try_extract_tensor_mut().map_err(|e| failed(&e))?;
    data.iter_mut().enumerate().for_each(|(i, x)| *x = value(i));
    Ok(t)
}

/// One `operator` node, `y = operator(a, b)`, with `b` a constant like a model's weights.
fn product_session<B: PrimitiveTensorElementType + Copy + std::fmt::Debug>(
    dir: &Path,
    operator: &str,
    (input, output): (TensorElementType, TensorElementType),
    weights: Tensor<B>,
    threads: usize,
) -> Result<Session, EmbedError> {
    let environment = environment(&library(dir)?)?;
    let mut graph = Graph::new().map_err(|e| failed(&e))?;
    graph
        .set_inputs([Outlet::new("a", tensor_type(input, [M, K]))])
        .map_err(|e| failed(&e))?;
    graph
        .set_outputs([Outlet::new("y", tensor_type(output, [M, N]))])
        .map_err(|e| failed(&e))?;
    graph
        .add_node(
            Node::new(operator, ONNX_DOMAIN, "product", ["a", "b"], ["y"], [])
                .map_err(|e| failed(&e))?,
        )
        .map_err(|e| failed(&e))?;
    graph
        .add_initializer("b", weights, false)
        .map_err(|e| failed(&e))?;
    let mut model = Model::new([Opset::new(ONNX_DOMAIN, 21).map_err(|e| failed(&e))?])
        .map_err(|e| failed(&e))?;
    model.set_graph(graph).map_err(|e| failed(&e))?;
    let builder = Session::builder(&environment)
        .map_err(|e| failed(&e))?
        .with_optimization_level(GraphOptimizationLevel::Level3)
        .map_err(|e| failed(&e))?
        .with_intra_threads(threads)
        .map_err(|e| failed(&e))?;
    model.into_session(&builder).map_err(|e| failed(&e))
}

/// Multiply-adds × 2 per second, in billions, of `session` on `input`.
fn rate(session: &mut Session, input: &DynTensor) -> Result<f64, EmbedError> {
    for _ in 0..3 {
        session
            .run(ort::inputs!["a" => input])
            .map_err(|e| failed(&e))?;
    }
    let started = Instant::now();
    let mut runs = 0u64;
    while started.elapsed() < RUN_FOR {
        session
            .run(ort::inputs!["a" => input])
            .map_err(|e| failed(&e))?;
        runs += 1;
    }
    let ops = 2.0 * (M * K * N) as f64 * runs as f64;
    Ok(ops / started.elapsed().as_secs_f64() / 1e9)
}

/// Both products on every core, with ONNX Runtime from the MiniLM directory `dir`.
pub fn measure(dir: &Path) -> Result<GemmPeak, EmbedError> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut sgemm = product_session(
        dir,
        "MatMul",
        (TensorElementType::Float32, TensorElementType::Float32),
        filled([K, N], |i| ((i % 17) as f32 - 8.0) / 64.0)?,
        threads,
    )?;
    let a = filled([M, K], |i| ((i % 13) as f32 - 6.0) / 32.0)?.upcast();
    let sgemm_gflops = rate(&mut sgemm, &a)?;
    let mut int8 = product_session(
        dir,
        "MatMulInteger",
        (TensorElementType::Uint8, TensorElementType::Int32),
        filled([K, N], |i| (i % 17) as i8 - 8)?,
        threads,
    )?;
    let a = filled([M, K], |i| (i % 251) as u8)?.upcast();
    let int8_gops = rate(&mut int8, &a)?;
    Ok(GemmPeak {
        shape: [M, K, N],
        threads,
        sgemm_gflops,
        int8_gops,
    })
}
