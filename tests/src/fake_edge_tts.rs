//! `FakeEdgeTts`: a local fake of Microsoft Edge's read-aloud WebSocket on `127.0.0.1:0`, for
//! `[tts] type = "edge"` with `api_base = fake.url()`. It speaks the real exchange: the client
//! connects with `TrustedClientToken`, `Sec-MS-GEC` and `ConnectionId` in the query, sends a
//! `Path:speech.config` text frame (the output format) and a `Path:ssml` text frame; the fake
//! answers a `Path:turn.start` text frame, binary frames (2-byte big-endian header length,
//! headers with `Path:audio`, the audio: [`FAKE_EDGE_OGG`] in two pieces) and `Path:turn.end`.
//! Every exchange is recorded (query, the two frames).
//!
//! ```text
//! let edge = FakeEdgeTts::start().await;  // [tts] type = "edge", api_base = edge.url()
//! let seen = edge.exchanges();
//! ```

use std::sync::{Arc, Mutex};

use futures::{SinkExt as _, StreamExt as _};
use tokio::net::TcpListener;
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::tungstenite::handshake::server::{Request, Response};
use tokio_util::sync::CancellationToken;

/// The Ogg/Opus audio the fake sends.
pub const FAKE_EDGE_OGG: &[u8] = b"OggS\x00\x02fake-edge-opus-voice";

/// One synthesis the fake served.
#[derive(Debug, Clone, Default)]
pub struct EdgeExchange {
    /// The request's query string.
    pub query: String,
    /// The `speech.config` frame.
    pub config: String,
    /// The `ssml` frame.
    pub ssml: String,
}

/// The fake server; stops when dropped.
pub struct FakeEdgeTts {
    port: u16,
    exchanges: Arc<Mutex<Vec<EdgeExchange>>>,
    stop: CancellationToken,
}

impl Drop for FakeEdgeTts {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

impl FakeEdgeTts {
    pub async fn start() -> FakeEdgeTts {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let port = listener.local_addr().unwrap().port();
        let exchanges = Arc::new(Mutex::new(Vec::new()));
        let stop = CancellationToken::new();
        let (seen, cancel) = (exchanges.clone(), stop.clone());
        tokio::spawn(async move {
            loop {
                let stream = tokio::select! {
                    () = cancel.cancelled() => return,
                    accepted = listener.accept() => match accepted {
                        Ok((stream, _)) => stream,
                        Err(_) => return,
                    },
                };
                tokio::spawn(serve(stream, seen.clone()));
            }
        });
        FakeEdgeTts {
            port,
            exchanges,
            stop,
        }
    }

    /// The `api_base` to configure.
    pub fn url(&self) -> String {
        format!(
            "ws://127.0.0.1:{}/consumer/speech/synthesize/readaloud/edge/v1",
            self.port
        )
    }

    /// The syntheses served so far.
    pub fn exchanges(&self) -> Vec<EdgeExchange> {
        self.exchanges.lock().unwrap().clone()
    }
}

/// A binary frame as the service sends it: header length, headers, data.
fn binary(path: &str, data: &[u8]) -> Message {
    let headers = format!("X-RequestId:fake\r\nContent-Type:audio/ogg\r\nPath:{path}\r\n");
    let mut frame = (headers.len() as u16).to_be_bytes().to_vec();
    frame.extend_from_slice(headers.as_bytes());
    frame.extend_from_slice(data);
    Message::binary(frame)
}

// The handshake callback's error type is tungstenite's (an HTTP response).
#[allow(clippy::result_large_err)]
async fn serve(stream: tokio::net::TcpStream, seen: Arc<Mutex<Vec<EdgeExchange>>>) {
    let mut exchange = EdgeExchange::default();
    let query = Arc::new(Mutex::new(String::new()));
    let q = query.clone();
    let callback = move |req: &Request, resp: Response| {
        *q.lock().unwrap() = req.uri().query().unwrap_or_default().to_owned();
        Ok(resp)
    };
    let Ok(mut ws) = tokio_tungstenite::accept_hdr_async(stream, callback).await else {
        return;
    };
    exchange.query = query.lock().unwrap().clone();
    while let Some(Ok(message)) = ws.next().await {
        let Message::Text(text) = message else {
            continue;
        };
        let text = text.to_string();
        if text.contains("Path:speech.config") {
            exchange.config = text;
        } else if text.contains("Path:ssml") {
            exchange.ssml = text;
            seen.lock().unwrap().push(exchange.clone());
            let (a, b) = FAKE_EDGE_OGG.split_at(8);
            let frames = [
                Message::text("X-RequestId:fake\r\nPath:turn.start\r\n\r\n{}"),
                binary("audio", a),
                binary("audio.metadata", b"{}"),
                binary("audio", b),
                Message::text("X-RequestId:fake\r\nPath:turn.end\r\n\r\n{}"),
            ];
            for frame in frames {
                if ws.send(frame).await.is_err() {
                    return;
                }
            }
        }
    }
}
