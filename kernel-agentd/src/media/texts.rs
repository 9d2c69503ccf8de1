//! What the owner is told when a message or its media is refused, or a voice note cannot be
//! transcribed, in the owner's language (`general.locale`): kernel-tg shows these verbatim.

use kernel_common::config::Locale;

use super::SpeechError;
use crate::error::ApiError;

/// Most characters of a file name, extension or MIME type echoed back.
const MAX_SHOWN_CHARS: usize = 64;

/// What kind of attachment a refusal is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum What {
    Image,
    Document,
    Voice,
}

impl What {
    fn noun(self, locale: Locale) -> &'static str {
        match (self, locale) {
            (Self::Image, Locale::Zh) => "图片",
            (Self::Document, Locale::Zh) => "文件",
            (Self::Voice, Locale::Zh) => "语音",
            (Self::Image, Locale::En) => "image",
            (Self::Document, Locale::En) => "file",
            (Self::Voice, Locale::En) => "voice note",
        }
    }
}

/// Why a message is refused before its turn starts (nothing stored, no model call).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// No text and no attachment.
    EmptyMessage,
    /// The text is longer than `max` characters.
    TextTooLong { max: usize },
    /// An attachment whose kind the client did not set.
    NoContent,
    /// An attachment with zero bytes.
    EmptyFile(What),
    /// An attachment over 20 MB.
    TooLarge(What),
    /// An image over what the turn's provider takes (`provider`: its display name).
    ImageTooLargeFor {
        provider: &'static str,
        max_bytes: usize,
    },
    /// An image type neither provider accepts.
    ImageType { mime: String },
    /// A document named like an image whose bytes are not one.
    NotAnImage { name: String },
    /// PDF or an Office format.
    OfficeFormat { ext: String },
    /// An extension that is neither text nor a known unsupported format.
    UnknownExtension { ext: String },
    /// No extension and not a known extension-less name.
    NoExtension { name: String },
    /// Not UTF-8 text (or binary content).
    NotUtf8 { name: String },
    /// A voice note while `[stt]` is not configured.
    VoiceNotConfigured,
    /// An audio type the transcription endpoint does not take.
    AudioType { mime: String },
}

impl Refusal {
    /// The message for the owner.
    pub fn message(&self, locale: Locale) -> String {
        match locale {
            Locale::Zh => self.zh(),
            Locale::En => self.en(),
        }
    }

    /// The gRPC-facing error: `FailedPrecondition` for voice that is not set up, else
    /// `InvalidArgument`.
    pub fn into_error(self, locale: Locale) -> ApiError {
        let message = self.message(locale);
        match self {
            Self::VoiceNotConfigured => ApiError::FailedPrecondition(message),
            _ => ApiError::InvalidArgument(message),
        }
    }

    fn zh(&self) -> String {
        let z = Locale::Zh;
        match self {
            Self::EmptyMessage => "消息是空的。".into(),
            Self::TextTooLong { max } => format!("消息太长：最多 {max} 个字符。"),
            Self::NoContent => "有一个附件没有内容。".into(),
            Self::EmptyFile(w) => format!("{}是空的。", w.noun(z)),
            Self::TooLarge(w) => format!("{}太大：最大 20 MB。", w.noun(z)),
            Self::ImageTooLargeFor {
                provider,
                max_bytes,
            } => format!(
                "图片太大：{provider} 只接受不超过 {} MB 的图片。请压缩或截图后再发送。",
                mb(*max_bytes)
            ),
            Self::ImageType { mime } => format!(
                "不支持该图片格式（{}）：请发送 JPEG、PNG、GIF 或 WebP 图片。",
                shown(mime)
            ),
            Self::NotAnImage { name } => format!("文件 {} 不是有效的图片。", shown(name)),
            Self::OfficeFormat { ext } => format!(
                "暂不支持该格式（.{}）：还不能读取 PDF 和 Office 文档。请发送纯文本或代码文件，或直接粘贴文字。",
                shown(ext)
            ),
            Self::UnknownExtension { ext } => format!(
                "暂不支持 .{} 文件：只能读取 UTF-8 编码的文本和代码文件（如 txt、md、py、json）。",
                shown(ext)
            ),
            Self::NoExtension { name } => format!(
                "无法识别文件 {} 的类型（没有扩展名）：只能读取 UTF-8 编码的文本和代码文件。",
                shown(name)
            ),
            Self::NotUtf8 { name } => format!(
                "文件 {} 不是 UTF-8 编码的文本，无法读取：请转成 UTF-8 后再发送。",
                shown(name)
            ),
            Self::VoiceNotConfigured => "语音消息未启用：请在 config.toml 中配置 [stt]（OpenAI 兼容的语音转写接口），然后重启 kernel-agentd。".into(),
            Self::AudioType { mime } => format!(
                "不支持该语音格式（{}）：请发送 Ogg/Opus、MP3、M4A、WAV、WebM 或 FLAC。",
                shown(mime)
            ),
        }
    }

    fn en(&self) -> String {
        let e = Locale::En;
        match self {
            Self::EmptyMessage => "The message is empty.".into(),
            Self::TextTooLong { max } => {
                format!("The message is too long: at most {max} characters.")
            }
            Self::NoContent => "An attachment has no content.".into(),
            Self::EmptyFile(w) => format!("The {} is empty.", w.noun(e)),
            Self::TooLarge(w) => format!("The {} is larger than 20 MB.", w.noun(e)),
            Self::ImageTooLargeFor {
                provider,
                max_bytes,
            } => format!(
                "The image is too large: {provider} takes images up to {} MB. Compress it or \
                 send a screenshot instead.",
                mb(*max_bytes)
            ),
            Self::ImageType { mime } => format!(
                "Unsupported image type ({}): send a JPEG, PNG, GIF or WebP image.",
                shown(mime)
            ),
            Self::NotAnImage { name } => format!("{} is not a valid image.", shown(name)),
            Self::OfficeFormat { ext } => format!(
                "This format is not supported yet (.{}): PDF and Office documents cannot be read. \
                 Send a plain-text or code file, or paste the text.",
                shown(ext)
            ),
            Self::UnknownExtension { ext } => format!(
                ".{} files are not supported: only UTF-8 text and code files can be read \
                 (e.g. txt, md, py, json).",
                shown(ext)
            ),
            Self::NoExtension { name } => format!(
                "Cannot tell what kind of file {} is (it has no extension): only UTF-8 text and \
                 code files can be read.",
                shown(name)
            ),
            Self::NotUtf8 { name } => format!(
                "{} is not UTF-8 text and cannot be read: convert it to UTF-8 and send it again.",
                shown(name)
            ),
            Self::VoiceNotConfigured => "Voice messages are not set up: configure [stt] (an \
                OpenAI-compatible transcription endpoint) in config.toml, then restart \
                kernel-agentd."
                .into(),
            Self::AudioType { mime } => format!(
                "Unsupported audio type ({}): send Ogg/Opus, MP3, M4A, WAV, WebM or FLAC.",
                shown(mime)
            ),
        }
    }
}

/// Why a voice note could not be turned into text (the turn fails with this); the endpoint's
/// own words stay as they are (already redacted).
pub(crate) fn stt_failed(locale: Locale, error: &SpeechError) -> String {
    match locale {
        Locale::En => format!("Speech-to-text failed: {error}"),
        Locale::Zh => {
            let cause = match error {
                SpeechError::Cancelled => "已取消".to_owned(),
                SpeechError::TimedOut(after) => format!("{} 秒内没有结果", after.as_secs()),
                SpeechError::Network(m) => format!("无法连接语音转写接口：{m}"),
                SpeechError::Status { status, message } => {
                    format!("接口返回 {status}：{message}")
                }
                SpeechError::BadResponse(m) => format!("接口的回答无法使用：{m}"),
                SpeechError::Config(m) => format!("[stt] 配置无法使用：{m}"),
            };
            format!("语音识别失败：{cause}")
        }
    }
}

/// Why the voice reply did not come (one short line under the text answer; the cause cut to
/// [`MAX_TTS_CAUSE_CHARS`], already redacted words of the endpoint kept).
pub(crate) fn tts_failed(locale: Locale, error: &SpeechError) -> String {
    let cause = match locale {
        Locale::En => error.to_string(),
        Locale::Zh => match error {
            SpeechError::Cancelled => "已取消".to_owned(),
            SpeechError::TimedOut(after) => format!("{} 秒内没有结果", after.as_secs()),
            SpeechError::Network(m) => format!("无法连接语音合成服务：{m}"),
            SpeechError::Status { status, message } => format!("服务返回 {status}：{message}"),
            SpeechError::BadResponse(m) => format!("服务的回答无法使用：{m}"),
            SpeechError::Config(m) => format!("[tts] 配置无法使用：{m}"),
        },
    };
    let cause: String = cause
        .chars()
        .filter(|c| !c.is_control())
        .take(MAX_TTS_CAUSE_CHARS)
        .collect();
    match locale {
        Locale::Zh => format!("（没有语音回复：{cause}。以上为文字回答。）"),
        Locale::En => format!("(No voice reply: {cause}. The answer is above in text.)"),
    }
}

/// Most characters of a text-to-speech failure's cause shown to the owner.
const MAX_TTS_CAUSE_CHARS: usize = 160;

/// The transcript was empty.
pub(crate) fn stt_heard_nothing(locale: Locale) -> String {
    match locale {
        Locale::Zh => "语音识别失败：没有识别出任何文字。".into(),
        Locale::En => "Speech-to-text failed: no words were recognised.".into(),
    }
}

/// Closes a voice reply that was cut at `max_chars`.
pub(crate) fn rest_in_text(locale: Locale) -> &'static str {
    match locale {
        Locale::Zh => "其余内容请看文字消息。",
        Locale::En => "The rest is in the text message.",
    }
}

/// `bytes` in MB (MiB), up to two decimals: `3.75`, `5`.
fn mb(bytes: usize) -> String {
    let hundredths = bytes * 100 / (1024 * 1024);
    let shown = format!("{}.{:02}", hundredths / 100, hundredths % 100);
    shown.trim_end_matches('0').trim_end_matches('.').to_owned()
}

/// `s` made safe to echo: control characters dropped, at most [`MAX_SHOWN_CHARS`] characters
/// (`…` when cut).
pub(crate) fn shown(s: &str) -> String {
    let clean: String = s.chars().filter(|c| !c.is_control()).collect();
    kernel_common::text::truncate(&clean, MAX_SHOWN_CHARS).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_tts_failure_is_one_short_line_in_both_languages() {
        let e = SpeechError::Network(format!("refused\n{}", "x".repeat(400)));
        let zh = tts_failed(Locale::Zh, &e);
        assert!(
            zh.starts_with("（没有语音回复：无法连接语音合成服务：refused"),
            "{zh}"
        );
        assert!(zh.ends_with("以上为文字回答。）"), "{zh}");
        let en = tts_failed(Locale::En, &e);
        assert!(
            en.starts_with("(No voice reply: cannot reach the endpoint: refused"),
            "{en}"
        );
        for line in [&zh, &en] {
            assert!(!line.contains('\n'), "{line}");
            assert!(line.chars().count() < MAX_TTS_CAUSE_CHARS + 60, "{line}");
        }
    }

    #[test]
    fn messages_follow_the_locale() {
        let r = Refusal::OfficeFormat { ext: "pdf".into() };
        assert!(r.message(Locale::Zh).starts_with("暂不支持该格式（.pdf）"));
        assert!(
            r.message(Locale::En)
                .starts_with("This format is not supported yet (.pdf)")
        );
        let r = Refusal::TooLarge(What::Image);
        assert_eq!(r.message(Locale::Zh), "图片太大：最大 20 MB。");
        assert_eq!(r.message(Locale::En), "The image is larger than 20 MB.");
        let r = Refusal::ImageTooLargeFor {
            provider: "Claude",
            max_bytes: 3_932_160,
        };
        assert_eq!(
            r.message(Locale::Zh),
            "图片太大：Claude 只接受不超过 3.75 MB 的图片。请压缩或截图后再发送。"
        );
        assert_eq!(
            r.message(Locale::En),
            "The image is too large: Claude takes images up to 3.75 MB. Compress it or send a \
             screenshot instead."
        );
        assert_eq!(mb(5 * 1024 * 1024), "5");
        assert_eq!(mb(1536 * 1024), "1.5");
    }

    #[test]
    fn voice_not_set_up_is_a_failed_precondition() {
        assert!(matches!(
            Refusal::VoiceNotConfigured.into_error(Locale::Zh),
            ApiError::FailedPrecondition(m) if m.contains("[stt]")
        ));
        assert!(matches!(
            Refusal::NotUtf8 { name: "a.txt".into() }.into_error(Locale::En),
            ApiError::InvalidArgument(m) if m.contains("a.txt")
        ));
    }

    #[test]
    fn stt_failures_name_their_cause_in_the_locale() {
        let e = SpeechError::Status {
            status: 401,
            message: "bad key".into(),
        };
        assert_eq!(
            stt_failed(Locale::Zh, &e),
            "语音识别失败：接口返回 401：bad key"
        );
        assert_eq!(
            stt_failed(Locale::En, &e),
            "Speech-to-text failed: the endpoint answered 401: bad key"
        );
        let e = SpeechError::TimedOut(std::time::Duration::from_secs(120));
        assert_eq!(stt_failed(Locale::Zh, &e), "语音识别失败：120 秒内没有结果");
    }

    #[test]
    fn echoed_names_are_clean_and_short() {
        assert_eq!(shown("a\nb\u{7}.txt"), "ab.txt");
        let long = shown(&"x".repeat(500));
        assert_eq!(long.chars().count(), MAX_SHOWN_CHARS + 1);
        assert!(long.ends_with('…'));
    }
}
