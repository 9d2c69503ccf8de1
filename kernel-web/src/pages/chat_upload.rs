//! `POST /api/chat/upload`: a chat message with attachments, as `multipart/form-data` (a `text`
//! field, `file` fields and, optionally, the `session` the turn runs in). Images of the types agentd accepts go as images, anything else as a
//! document with its name (agentd reads text and code, and refuses the rest with a clear reason,
//! shown to the owner); documents count as outside content, as in kernel-tg. At most
//! [`MAX_ATTACHMENTS`] files of [`MAX_ATTACHMENT_BYTES`] each, and [`MAX_UPLOAD_BYTES`] in all,
//! checked while reading; every refusal is 413/422 with a text in the owner's language.

use axum::extract::State;
use axum::extract::multipart::{Field, Multipart};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use kernel_common::limits::{IMAGE_TYPES, MAX_ATTACHMENT_BYTES, MAX_ATTACHMENTS};
use kernel_proto::v1 as pb;

use super::chat::{MAX_TEXT, stream_turn};
use crate::state::Web;

/// The most one upload may carry in all (the body limit of this route).
pub(crate) const MAX_UPLOAD_BYTES: usize = 2 * MAX_ATTACHMENT_BYTES + 64 * 1024;
/// The longest file name passed on.
const MAX_NAME_CHARS: usize = 200;

/// Why an upload was refused.
#[derive(Debug, PartialEq, Eq)]
enum Refused {
    TooLarge,
    TooMany,
    Malformed,
    Empty,
}

/// `POST /api/chat/upload`.
pub(crate) async fn upload(State(web): State<Web>, multipart: Multipart) -> Response {
    let t = web.texts;
    match read(multipart).await {
        Ok(request) => stream_turn(&web, request).await,
        Err(Refused::TooLarge) => {
            (StatusCode::PAYLOAD_TOO_LARGE, t.upload_too_large()).into_response()
        }
        Err(Refused::TooMany) => {
            (StatusCode::PAYLOAD_TOO_LARGE, t.upload_too_many()).into_response()
        }
        Err(Refused::Malformed) => {
            (StatusCode::UNPROCESSABLE_ENTITY, t.upload_malformed()).into_response()
        }
        Err(Refused::Empty) => (StatusCode::UNPROCESSABLE_ENTITY, t.upload_empty()).into_response(),
    }
}

async fn read(mut multipart: Multipart) -> Result<pb::ChatRequest, Refused> {
    let mut text = String::new();
    let mut session_id = None;
    let mut attachments = Vec::new();
    let mut total = 0usize;
    loop {
        let field = match multipart.next_field().await {
            Ok(Some(field)) => field,
            Ok(None) => break,
            Err(e) if e.status() == StatusCode::PAYLOAD_TOO_LARGE => return Err(Refused::TooLarge),
            Err(_) => return Err(Refused::Malformed),
        };
        match field.name() {
            Some("text") => {
                let bytes = bytes(field, MAX_TEXT, &mut total).await?;
                text = String::from_utf8(bytes).map_err(|_| Refused::Malformed)?;
            }
            Some("session") => {
                let bytes = bytes(field, 32, &mut total).await?;
                let id = std::str::from_utf8(&bytes).map_err(|_| Refused::Malformed)?;
                session_id = Some(id.trim().parse().map_err(|_| Refused::Malformed)?);
            }
            Some("file") => {
                let name: String = field
                    .file_name()
                    .unwrap_or_default()
                    .chars()
                    .filter(|c| !c.is_control())
                    .take(MAX_NAME_CHARS)
                    .collect();
                let mime = field
                    .content_type()
                    .unwrap_or_default()
                    .to_ascii_lowercase();
                let data = bytes(field, MAX_ATTACHMENT_BYTES, &mut total).await?;
                if name.is_empty() && data.is_empty() {
                    continue; // an empty file input
                }
                if attachments.len() == MAX_ATTACHMENTS {
                    return Err(Refused::TooMany);
                }
                attachments.push(attachment(name, &mime, data));
            }
            _ => return Err(Refused::Malformed),
        }
    }
    if text.trim().is_empty() && attachments.is_empty() {
        return Err(Refused::Empty);
    }
    let outside_content = attachments
        .iter()
        .any(|a: &pb::Attachment| matches!(a.kind, Some(pb::attachment::Kind::Document(_))));
    Ok(pb::ChatRequest {
        text,
        attachments,
        outside_content,
        session_id,
        ..Default::default()
    })
}

/// A field's bytes, at most `max` (and the upload's total at most [`MAX_UPLOAD_BYTES`]).
async fn bytes(mut field: Field<'_>, max: usize, total: &mut usize) -> Result<Vec<u8>, Refused> {
    let mut out = Vec::new();
    loop {
        match field.chunk().await {
            Ok(Some(chunk)) => {
                *total += chunk.len();
                if out.len() + chunk.len() > max || *total > MAX_UPLOAD_BYTES {
                    return Err(Refused::TooLarge);
                }
                out.extend_from_slice(&chunk);
            }
            Ok(None) => return Ok(out),
            Err(e) if e.status() == StatusCode::PAYLOAD_TOO_LARGE => return Err(Refused::TooLarge),
            Err(_) => return Err(Refused::Malformed),
        }
    }
}

/// An image when its type is one agentd takes as an image, else a document.
fn attachment(file_name: String, mime: &str, data: Vec<u8>) -> pb::Attachment {
    let kind = if IMAGE_TYPES.contains(&mime) {
        pb::attachment::Kind::Image(pb::Image {
            data,
            mime_type: mime.to_owned(),
        })
    } else {
        pb::attachment::Kind::Document(pb::Document { data, file_name })
    };
    pb::Attachment { kind: Some(kind) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn images_of_known_types_go_as_images_and_the_rest_as_documents() {
        let image = attachment("a.png".into(), "image/png", vec![1]);
        assert!(matches!(image.kind, Some(pb::attachment::Kind::Image(_))));
        let svg = attachment("a.svg".into(), "image/svg+xml", vec![1]);
        assert!(matches!(svg.kind, Some(pb::attachment::Kind::Document(_))));
        let text = attachment("notes.txt".into(), "text/plain", vec![1]);
        match text.kind {
            Some(pb::attachment::Kind::Document(d)) => assert_eq!(d.file_name, "notes.txt"),
            other => panic!("{other:?}"),
        }
    }
}
