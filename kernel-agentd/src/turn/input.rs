//! What the owner sends (`UserInput`) and its checks: `UserInput::accept` turns it into the
//! `Accepted` parts of a turn or refuses it with a message in the owner's language.
//!
//! Checked before the turn gate is taken, so a bad request is refused whether or not a turn runs,
//! before anything is stored and before any model call. Images (JPEG, PNG, GIF or WebP, by their
//! bytes or else their declared type) and documents are at most 20 MB; documents are read by the
//! `media::document` rules; voice notes need `[stt]` and are transcribed inside the turn.

use kernel_common::config::Locale;
use kernel_common::limits::MAX_ATTACHMENT_BYTES;

use crate::conversation::{Block, Message, Role};
use crate::error::ApiError;
use crate::media::document::{self, FileKind};
use crate::media::stt::{VoiceClip, audio_format};
use crate::media::{Refusal, What, image};

/// Longest text accepted, in characters.
pub(super) const MAX_TEXT_CHARS: usize = 100_000;

/// One user message as received.
#[derive(Debug, Clone, Default)]
pub struct UserInput {
    pub text: String,
    pub attachments: Vec<Attachment>,
    /// The client wants the answer spoken too (the owner sent a voice note).
    pub want_voice_reply: bool,
    /// The message carries content from outside the owner (a forward; documents count anyway).
    pub outside_content: bool,
    /// The client's messages it replies to: one that carried outside content (an outbox
    /// item marked so) makes it outside content too.
    pub replied_to: Vec<i64>,
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

/// A message that passed every check.
#[derive(Debug, Clone, PartialEq)]
pub struct Accepted {
    /// Attachments in the order sent, then the text (if any).
    pub parts: Vec<Part>,
    pub want_voice_reply: bool,
    /// Content from outside the owner is in it (flagged by the client, or a document).
    pub outside_content: bool,
    /// Attachments of a message with several (an album, a burst) that were refused one by one
    /// and left out, the rest running; the model reads a note for each, the owner is told.
    pub left_out: Vec<Refusal>,
    /// Its attachments are already kept under `downloads/` (a cut-off turn running again).
    pub already_kept: bool,
}

/// One accepted piece of a message.
#[derive(Debug, Clone, PartialEq)]
pub enum Part {
    /// The owner's text.
    Text(String),
    /// An image for the model.
    Image {
        mime_type: &'static str,
        data: Vec<u8>,
    },
    /// A text document: `text` is what the model sees (`[文件: name]` + fenced block), `data`
    /// the bytes received, kept under a Kernel-made name with extension `ext`.
    Document {
        text: String,
        ext: String,
        data: Vec<u8>,
    },
    /// A voice note, transcribed in the turn.
    Voice(VoiceClip),
}

impl Part {
    /// The extension and bytes to keep in `downloads/`; `None` for text.
    pub fn download(&self) -> Option<(&str, &[u8])> {
        match self {
            Part::Text(_) => None,
            Part::Image { mime_type, data } => Some((image::extension(mime_type), data)),
            Part::Document { ext, data, .. } => Some((ext, data)),
            Part::Voice(clip) => Some((clip.extension(), &clip.data)),
        }
    }
}

impl UserInput {
    /// A text-only message.
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            text: text.into(),
            ..Self::default()
        }
    }

    /// Checks everything; refusals are worded in `locale`. `voice` says whether `[stt]` is
    /// configured.
    pub fn accept(self, locale: Locale, voice: bool) -> Result<Accepted, ApiError> {
        let mut accepted = self.check(voice).map_err(|r| r.into_error(locale))?;
        // The model reads what was left out before the rest of the message.
        let notes = accepted
            .left_out
            .iter()
            .map(|r| Part::Text(left_out_note(&r.message(locale), locale)));
        accepted.parts.splice(0..0, notes);
        Ok(accepted)
    }

    fn check(self, voice: bool) -> Result<Accepted, Refusal> {
        if self.text.chars().count() > MAX_TEXT_CHARS {
            return Err(Refusal::TextTooLong {
                max: MAX_TEXT_CHARS,
            });
        }
        let outside_content = self.outside_content
            || self
                .attachments
                .iter()
                .any(|a| matches!(a, Attachment::Document { .. }));
        let several = self.attachments.len() > 1;
        let mut parts = Vec::with_capacity(self.attachments.len() + 1);
        let mut left_out = Vec::new();
        for attachment in self.attachments {
            match accept_attachment(attachment, voice) {
                Ok(part) => parts.push(part),
                // One bad part of an album or a burst is left out (and named); the rest runs.
                Err(refusal) if several => left_out.push(refusal),
                Err(refusal) => return Err(refusal),
            }
        }
        if parts.is_empty() && !left_out.is_empty() {
            // Every attachment was refused: the message is, as a lone one would be.
            return Err(left_out.swap_remove(0));
        }
        if !self.text.trim().is_empty() {
            parts.push(Part::Text(self.text));
        }
        if parts.is_empty() {
            return Err(Refusal::EmptyMessage);
        }
        Ok(Accepted {
            parts,
            want_voice_reply: self.want_voice_reply,
            outside_content,
            left_out,
            already_kept: false,
        })
    }

    /// The user message of a message without voice notes; refusals in Chinese.
    #[cfg(test)]
    fn into_message(self) -> Result<Message, ApiError> {
        let accepted = self.accept(Locale::Zh, false)?;
        Ok(accepted.into_message(Vec::new()))
    }
}

impl Accepted {
    /// A cut-off turn's message (as the model first saw it) accepted again: its images and its
    /// text blocks (documents and transcripts are text by then) in order; `None` when nothing
    /// is left of it.
    pub fn again(message: Message, outside_content: bool, want_voice_reply: bool) -> Option<Self> {
        let parts: Vec<Part> = message
            .content
            .into_iter()
            .filter_map(|block| match block {
                Block::Text { text } if !text.trim().is_empty() => Some(Part::Text(text)),
                Block::Image { mime_type, data } => {
                    let mime_type = image::image_type(&mime_type, &data)?;
                    Some(Part::Image { mime_type, data })
                }
                _ => None,
            })
            .collect();
        (!parts.is_empty()).then_some(Accepted {
            parts,
            want_voice_reply,
            outside_content,
            left_out: Vec::new(),
            already_kept: true,
        })
    }

    /// The user message, with `transcripts` (one per voice part, in order) as `[语音: text]`.
    pub fn into_message(self, transcripts: Vec<String>) -> Message {
        let mut transcripts = transcripts.into_iter();
        let content = self
            .parts
            .into_iter()
            .filter_map(|part| match part {
                Part::Text(text) => Some(Block::Text { text }),
                Part::Image { mime_type, data } => Some(Block::Image {
                    mime_type: mime_type.to_owned(),
                    data,
                }),
                Part::Document { text, .. } => Some(Block::Text { text }),
                Part::Voice(_) => transcripts.next().map(|t| Block::text(voice_text(&t))),
            })
            .collect();
        Message {
            role: Role::User,
            content,
        }
    }
}

/// The note the model reads for an attachment left out (`reason` worded in `locale`).
pub(super) fn left_out_note(reason: &str, locale: Locale) -> String {
    match locale {
        Locale::Zh => format!("[未处理的附件：{reason}]"),
        Locale::En => format!("[Attachment left out: {reason}]"),
    }
}

/// `[语音: transcript]`, the transcript on one line.
pub(super) fn voice_text(transcript: &str) -> String {
    let line = transcript.split_whitespace().collect::<Vec<_>>().join(" ");
    format!("[语音: {line}]")
}

fn accept_attachment(attachment: Attachment, voice: bool) -> Result<Part, Refusal> {
    match attachment {
        Attachment::Image { mime_type, data } => {
            check_size(data.len(), What::Image)?;
            let mime_type = image::image_type(&mime_type, &data).ok_or(Refusal::ImageType {
                mime: mime_type.trim().to_owned(),
            })?;
            Ok(Part::Image { mime_type, data })
        }
        Attachment::Document { file_name, data } => {
            check_size(data.len(), What::Document)?;
            match document::audio_type(&file_name) {
                // An audio file sent as a file is a voice note.
                Some(_) if !voice => Err(Refusal::VoiceNotConfigured),
                Some(mime_type) => Ok(Part::Voice(VoiceClip { mime_type, data })),
                None => accept_document(&file_name, data),
            }
        }
        Attachment::Voice { mime_type, data } => {
            if !voice {
                return Err(Refusal::VoiceNotConfigured);
            }
            check_size(data.len(), What::Voice)?;
            let (_, mime_type) = audio_format(&mime_type).ok_or(Refusal::AudioType {
                mime: mime_type.trim().to_owned(),
            })?;
            Ok(Part::Voice(VoiceClip { mime_type, data }))
        }
        Attachment::Empty => Err(Refusal::NoContent),
    }
}

fn accept_document(file_name: &str, data: Vec<u8>) -> Result<Part, Refusal> {
    match document::classify(file_name) {
        FileKind::Text { lang } => Ok(Part::Document {
            text: document::read_text_document(file_name, &lang, &data)?,
            ext: document::saved_extension(file_name),
            data,
        }),
        FileKind::Image => match image::sniff(&data) {
            Some(mime_type) => Ok(Part::Image { mime_type, data }),
            None => Err(Refusal::NotAnImage {
                name: document::display_name(file_name),
            }),
        },
        FileKind::Office { ext } => Err(Refusal::OfficeFormat { ext }),
        FileKind::Unknown { ext } => Err(Refusal::UnknownExtension { ext }),
        FileKind::NoExtension => Err(Refusal::NoExtension {
            name: document::display_name(file_name),
        }),
    }
}

fn check_size(len: usize, what: What) -> Result<(), Refusal> {
    if len == 0 {
        return Err(Refusal::EmptyFile(what));
    }
    if len > MAX_ATTACHMENT_BYTES {
        return Err(Refusal::TooLarge(what));
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

    fn doc(name: &str, data: &[u8]) -> Attachment {
        Attachment::Document {
            file_name: name.into(),
            data: data.to_vec(),
        }
    }

    fn voice(mime: &str) -> Attachment {
        Attachment::Voice {
            mime_type: mime.into(),
            data: b"OggS voice".to_vec(),
        }
    }

    fn with(a: Attachment) -> UserInput {
        UserInput {
            text: "x".into(),
            attachments: vec![a],
            want_voice_reply: false,
            outside_content: false,
            replied_to: Vec::new(),
        }
    }

    fn refused(input: UserInput) -> Refusal {
        input.check(true).expect_err("refused")
    }

    #[test]
    fn text_and_images_become_blocks() {
        let m = UserInput::text("hello").into_message().unwrap();
        assert_eq!(m, Message::user_text("hello"));
        let m = UserInput {
            text: "  ".into(),
            attachments: vec![image("Image/PNG", 3)],
            ..UserInput::default()
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
            ..UserInput::default()
        }
        .into_message()
        .unwrap();
        assert!(
            matches!(&m.content[..], [Block::Image { .. }, Block::Text { text }] if text == "look")
        );
    }

    #[test]
    fn documents_become_fenced_text_and_image_files_images() {
        let accepted = with(doc("src/x.py", b"print(1)\n")).check(false).unwrap();
        assert_eq!(
            accepted.parts[0],
            Part::Document {
                text: "[文件: x.py]\n```py\nprint(1)\n```".into(),
                ext: "py".into(),
                data: b"print(1)\n".to_vec(),
            }
        );
        assert_eq!(
            accepted.parts[0].download(),
            Some(("py", &b"print(1)\n"[..]))
        );
        let png = b"\x89PNG\r\n\x1a\nrest";
        let accepted = with(doc("shot.PNG", png)).check(false).unwrap();
        assert!(matches!(
            &accepted.parts[0],
            Part::Image {
                mime_type: "image/png",
                ..
            }
        ));
    }

    #[test]
    fn voice_parts_take_their_transcripts_in_order() {
        let input = UserInput {
            text: "看看".into(),
            attachments: vec![voice("audio/ogg"), image("image/png", 2), voice("")],
            want_voice_reply: true,
            outside_content: false,
            replied_to: Vec::new(),
        };
        let accepted = input.check(true).unwrap();
        assert!(accepted.want_voice_reply);
        let m = accepted.into_message(vec!["第一 段".into(), "second\nline".into()]);
        let texts: Vec<String> = m
            .content
            .iter()
            .map(|b| match b {
                Block::Text { text } => text.clone(),
                _ => "<image>".into(),
            })
            .collect();
        assert_eq!(
            texts,
            ["[语音: 第一 段]", "<image>", "[语音: second line]", "看看"]
        );
    }

    #[test]
    fn bad_input_is_refused() {
        assert_eq!(refused(UserInput::text("")), Refusal::EmptyMessage);
        assert_eq!(refused(UserInput::text(" \n\t ")), Refusal::EmptyMessage);
        assert_eq!(
            refused(UserInput::text("字".repeat(MAX_TEXT_CHARS + 1))),
            Refusal::TextTooLong {
                max: MAX_TEXT_CHARS
            }
        );
        assert!(
            UserInput::text("字".repeat(MAX_TEXT_CHARS))
                .into_message()
                .is_ok()
        );
        assert!(matches!(
            refused(with(image("image/tiff", 3))),
            Refusal::ImageType { .. }
        ));
        assert_eq!(
            refused(with(image("image/png", 0))),
            Refusal::EmptyFile(What::Image)
        );
        assert_eq!(
            refused(with(image("image/png", MAX_ATTACHMENT_BYTES + 1))),
            Refusal::TooLarge(What::Image)
        );
        assert_eq!(refused(with(Attachment::Empty)), Refusal::NoContent);
    }

    #[test]
    fn documents_are_refused_by_type_encoding_and_size() {
        let cases = [
            (
                doc("a.pdf", b"%PDF"),
                Refusal::OfficeFormat { ext: "pdf".into() },
            ),
            (
                doc("b.DOCX", b"PK"),
                Refusal::OfficeFormat { ext: "docx".into() },
            ),
            (
                doc("c.xyz", b"?"),
                Refusal::UnknownExtension { ext: "xyz".into() },
            ),
            (
                doc("dir/blob", b"?"),
                Refusal::NoExtension {
                    name: "blob".into(),
                },
            ),
            (
                doc("d.txt", b"\xff\xfe"),
                Refusal::NotUtf8 {
                    name: "d.txt".into(),
                },
            ),
            (
                doc("e.png", b"not png"),
                Refusal::NotAnImage {
                    name: "e.png".into(),
                },
            ),
            (doc("f.txt", b""), Refusal::EmptyFile(What::Document)),
        ];
        for (attachment, expected) in cases {
            assert_eq!(refused(with(attachment)), expected);
        }
        let big = vec![b'a'; MAX_ATTACHMENT_BYTES + 1];
        assert_eq!(
            refused(with(doc("g.txt", &big))),
            Refusal::TooLarge(What::Document)
        );
    }

    #[test]
    fn one_bad_part_of_several_is_left_out_and_noted_a_lone_one_refused() {
        let mut input = with(doc("a.txt", b"alpha"));
        input.attachments.push(doc("b.pdf", b"%PDF"));
        let accepted = input.accept(Locale::En, false).unwrap();
        assert_eq!(
            accepted.left_out,
            vec![Refusal::OfficeFormat { ext: "pdf".into() }]
        );
        let note = left_out_note(&accepted.left_out[0].message(Locale::En), Locale::En);
        assert_eq!(accepted.parts[0], Part::Text(note));
        assert!(matches!(accepted.parts[1], Part::Document { .. }));
        assert_eq!(accepted.parts[2], Part::Text("x".into()));
        assert_eq!(accepted.parts.len(), 3);
        // Alone, the same document is refused; all parts bad and no text: the first refusal.
        assert_eq!(
            refused(with(doc("b.pdf", b"%PDF"))),
            Refusal::OfficeFormat { ext: "pdf".into() }
        );
        let mut all_bad = with(doc("b.pdf", b"%PDF"));
        all_bad.attachments.push(doc("c.xyz", b"?"));
        assert_eq!(
            refused(all_bad),
            Refusal::OfficeFormat { ext: "pdf".into() }
        );
    }

    #[test]
    fn voice_needs_stt_and_a_known_audio_type() {
        assert_eq!(
            with(voice("audio/ogg")).check(false).unwrap_err(),
            Refusal::VoiceNotConfigured
        );
        assert!(matches!(
            with(voice("audio/ogg")).accept(Locale::En, false),
            Err(ApiError::FailedPrecondition(m)) if m.contains("[stt]")
        ));
        assert_eq!(
            refused(with(voice("text/plain"))),
            Refusal::AudioType {
                mime: "text/plain".into()
            }
        );
        assert!(matches!(
            &with(voice("audio/x-m4a")).check(true).unwrap().parts[0],
            Part::Voice(VoiceClip {
                mime_type: "audio/mp4",
                ..
            })
        ));
    }
}
