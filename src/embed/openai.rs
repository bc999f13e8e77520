use serde::{Deserialize, Serialize};

use super::{EmbedError, Embedder, EmbedderKind, l2_normalise};

/// The only path this client ever calls: embeddings, never completions.
pub const EMBEDDINGS_PATH: &str = "/v1/embeddings";

/// Any OpenAI-compatible embeddings endpoint (OpenAI, Ollama, vLLM, TEI...).
pub struct OpenAiEmbedder {
    url: String,
    model: String,
    dimension: usize,
    api_key: Option<String>,
    agent: ureq::Agent,
}

#[derive(Serialize)]
struct Request<'a> {
    model: &'a str,
    input: &'a [&'a str],
}

#[derive(Deserialize)]
struct Response {
    data: Vec<Item>,
}

#[derive(Deserialize)]
struct Item {
    index: usize,
    embedding: Vec<f32>,
}

impl OpenAiEmbedder {
    /// `base_url` is the server root, e.g. `http://127.0.0.1:11434`.
    pub fn new(base_url: &str, model: &str, dimension: usize, api_key: Option<String>) -> Self {
        let agent = ureq::Agent::config_builder()
            .timeout_global(Some(std::time::Duration::from_secs(30)))
            .http_status_as_error(false)
            .build()
            .new_agent();
        OpenAiEmbedder {
            url: format!("{}{EMBEDDINGS_PATH}", base_url.trim_end_matches('/')),
            model: model.to_string(),
            dimension,
            api_key,
            agent,
        }
    }
}

impl Embedder for OpenAiEmbedder {
    fn kind(&self) -> EmbedderKind {
        EmbedderKind::Openai
    }

    fn model(&self) -> &str {
        &self.model
    }

    fn dimension(&self) -> usize {
        self.dimension
    }

    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let mut request = self.agent.post(&self.url);
        if let Some(key) = &self.api_key {
            request = request.header("Authorization", &format!("Bearer {key}"));
        }
        let mut response = request
            .send_json(Request {
                model: &self.model,
                input: texts,
            })
            .map_err(|e| EmbedError::Server(format!("{}: {e}", self.url)))?;
        let status = response.status();
        if !status.is_success() {
            let body = response.body_mut().read_to_string().unwrap_or_default();
            return Err(EmbedError::Server(format!(
                "{} answered {status}: {}",
                self.url,
                body.chars().take(200).collect::<String>()
            )));
        }
        let mut parsed: Response = response
            .body_mut()
            .read_json()
            .map_err(|e| EmbedError::Server(format!("{}: unreadable answer: {e}", self.url)))?;
        if parsed.data.len() != texts.len() {
            return Err(EmbedError::Server(format!(
                "{} returned {} vectors for {} texts",
                self.url,
                parsed.data.len(),
                texts.len()
            )));
        }
        parsed.data.sort_by_key(|i| i.index);
        parsed
            .data
            .into_iter()
            .map(|mut item| {
                if item.embedding.len() != self.dimension {
                    return Err(EmbedError::Dimension {
                        expected: self.dimension,
                        got: item.embedding.len(),
                    });
                }
                l2_normalise(&mut item.embedding);
                Ok(item.embedding)
            })
            .collect()
    }
}
