//! What the owner sends (`UserInput`) and its validation into the user message's blocks.
//!
//! Checked before the turn gate is taken, so a bad request is refused whether or not a turn runs.
//! Images pass straight through as `Block::Image` (JPEG, PNG, GIF or WebP — what both providers
//! accept — up to 20 MB). Documents and voice notes are refused as not implemented yet (text
//! extraction and transcription land with the media issue).

use crate::conversation::{Block, Message, Role};
use crate::error::ApiError;

/// Longest text accepted, in characters.
pub const MAX_TEXT_CHARS: usize = 100_000;
/// Largest attachment accepted, in bytes.
pub const MAX_ATTACHMENT_BYTES: usize = 20 * 1024 * 1024;
/// Image types both providers accept.
pub const IMAGE_TYPES: &[&str] = &["image/jpeg", "image/png", "image/gif", "image/webp"];
/// Most characters of a refused MIME type echoed back in the error message.
const MAX_SHOWN_MIME_CHARS: usize = 64;

/// One user message as received.
#[derive(Debug, Clone, Default)]
pub struct UserInput {
    pub text: String,
    pub attachments: Vec<Attachment>,
}

/// An attached piece of content.
#[derive(Debug, Clone)]
pub enum Attachment {
    Image {
        mime_type: String,
        data: Vec<u8>,
    },
    Document {
        file_name: String,
        data: Vec<u8>,
    },
    Voice {
        mime_type: String,
        data: Vec<u8>,
    },
    /// An attachment whose kind the client did not set.
    Empty,
}

impl UserInput {
    /// A text-only message.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            attachments: Vec::new(),
        }
    }

    /// The user message to store and send: images first, then the text.
    pub fn into_message(self) -> Result<Message, ApiError> {
        if self.text.chars().count() > MAX_TEXT_CHARS {
            return Err(ApiError::InvalidArgument(format!(
                "the message is too long: at most {MAX_TEXT_CHARS} characters"
            )));
        }
        let mut content = Vec::with_capacity(self.attachments.len() + 1);
        for attachment in self.attachments {
            content.push(attachment_block(attachment)?);
        }
        if !self.text.trim().is_empty() {
            content.push(Block::Text { text: self.text });
        }
        if content.is_empty() {
            return Err(ApiError::InvalidArgument("the message is empty".into()));
        }
        Ok(Message {
            role: Role::User,
            content,
        })
    }
}

fn attachment_block(attachment: Attachment) -> Result<Block, ApiError> {
    match attachment {
        Attachment::Image { mime_type, data } => {
            let mime_type = mime_type.trim().to_ascii_lowercase();
            if !IMAGE_TYPES.contains(&mime_type.as_str()) {
                let shown: String = mime_type.chars().take(MAX_SHOWN_MIME_CHARS).collect();
                return Err(ApiError::InvalidArgument(format!(
                    "unsupported image type {shown:?}: send JPEG, PNG, GIF or WebP"
                )));
            }
            check_size(data.len(), "image")?;
            Ok(Block::Image { mime_type, data })
        }
        Attachment::Document { data, .. } => {
            check_size(data.len(), "document")?;
            Err(ApiError::Unimplemented("reading attached documents"))
        }
        Attachment::Voice { data, .. } => {
            check_size(data.len(), "voice note")?;
            Err(ApiError::Unimplemented("transcribing voice notes"))
        }
        Attachment::Empty => Err(ApiError::InvalidArgument(
            "an attachment has no content".into(),
        )),
    }
}

fn check_size(len: usize, what: &str) -> Result<(), ApiError> {
    if len == 0 {
        return Err(ApiError::InvalidArgument(format!("the {what} is empty")));
    }
    if len > MAX_ATTACHMENT_BYTES {
        return Err(ApiError::InvalidArgument(format!(
            "the {what} is larger than 20 MB"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn image(mime: &str, len: usize) -> Attachment {
        Attachment::Image {
            mime_type: mime.into(),
            data: vec![7; len],
        }
    }

    fn refused(input: UserInput) -> ApiError {
        input.into_message().expect_err("refused")
    }

    #[test]
    fn text_and_images_become_blocks() {
        let m = UserInput::text("hello").into_message().unwrap();
        assert_eq!(m, Message::user_text("hello"));
        let m = UserInput {
            text: "  ".into(),
            attachments: vec![image("Image/PNG", 3)],
        }
        .into_message()
        .unwrap();
        assert_eq!(
            m.content,
            vec![Block::Image {
                mime_type: "image/png".into(),
                data: vec![7; 3]
            }]
        );
        let m = UserInput {
            text: "look".into(),
            attachments: vec![image("image/jpeg", 1)],
        }
        .into_message()
        .unwrap();
        assert!(
            matches!(&m.content[..], [Block::Image { .. }, Block::Text { text }] if text == "look")
        );
    }

    #[test]
    fn bad_input_is_refused() {
        assert!(matches!(
            refused(UserInput::text("")),
            ApiError::InvalidArgument(_)
        ));
        assert!(matches!(
            refused(UserInput::text(" \n\t ")),
            ApiError::InvalidArgument(_)
        ));
        assert!(matches!(
            refused(UserInput::text("字".repeat(MAX_TEXT_CHARS + 1))),
            ApiError::InvalidArgument(_)
        ));
        assert!(
            UserInput::text("字".repeat(MAX_TEXT_CHARS))
                .into_message()
                .is_ok()
        );
        let with = |a: Attachment| UserInput {
            text: "x".into(),
            attachments: vec![a],
        };
        assert!(matches!(
            refused(with(image("image/tiff", 3))),
            ApiError::InvalidArgument(_)
        ));
        assert!(matches!(
            refused(with(image("image/png", 0))),
            ApiError::InvalidArgument(_)
        ));
        assert!(matches!(
            refused(with(image("image/png", MAX_ATTACHMENT_BYTES + 1))),
            ApiError::InvalidArgument(_)
        ));
        assert!(matches!(
            refused(with(Attachment::Empty)),
            ApiError::InvalidArgument(_)
        ));
        let doc = Attachment::Document {
            file_name: "a.py".into(),
            data: vec![1],
        };
        assert!(matches!(refused(with(doc)), ApiError::Unimplemented(_)));
        let voice = Attachment::Voice {
            mime_type: "audio/ogg".into(),
            data: vec![1],
        };
        assert!(matches!(refused(with(voice)), ApiError::Unimplemented(_)));
    }
}
