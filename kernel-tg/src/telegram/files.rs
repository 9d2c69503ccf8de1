//! Voice notes and files to the owner's chat (a photo or a document), into the topic the
//! `Telegram` is bound to, falling back to the main chat when that topic is gone.

use teloxide::payloads::{SendDocumentSetters, SendPhotoSetters, SendVoiceSetters};
use teloxide::prelude::Requester;
use teloxide::types::{InputFile, MessageId, ReplyParameters};

use super::{SendError, Telegram, describe, retry};

impl Telegram {
    /// Sends an Ogg/Opus voice note.
    pub(crate) async fn send_voice(
        &self,
        ogg: Vec<u8>,
        reply_to: Option<MessageId>,
    ) -> Result<MessageId, SendError> {
        let ogg = &ogg;
        let message = self
            .to_topic_or_main(|thread| {
                retry(false, move || {
                    let file = InputFile::memory(ogg.clone()).file_name("reply.ogg");
                    let mut request = self.bot.send_voice(self.chat, file);
                    if let Some(thread) = thread {
                        request = request.message_thread_id(thread);
                    }
                    if let Some(id) = reply_to {
                        request = request.reply_parameters(
                            ReplyParameters::new(id).allow_sending_without_reply(),
                        );
                    }
                    request
                })
            })
            .await
            .map_err(describe)?;
        Ok(message.id)
    }

    /// Sends a file: as a photo when `photo`, else as a document; `caption` plain text.
    pub(crate) async fn send_file(
        &self,
        name: &str,
        data: Vec<u8>,
        caption: &str,
        photo: bool,
    ) -> Result<MessageId, SendError> {
        let file = || InputFile::memory(data.clone()).file_name(name.to_owned());
        let caption = (!caption.is_empty()).then(|| caption.to_owned());
        let (file, caption) = (&file, &caption);
        let message = if photo {
            self.to_topic_or_main(|thread| {
                retry(false, move || {
                    let mut request = self.bot.send_photo(self.chat, file());
                    if let Some(thread) = thread {
                        request = request.message_thread_id(thread);
                    }
                    if let Some(c) = caption {
                        request = request.caption(c.clone());
                    }
                    request
                })
            })
            .await
        } else {
            self.to_topic_or_main(|thread| {
                retry(false, move || {
                    let mut request = self.bot.send_document(self.chat, file());
                    if let Some(thread) = thread {
                        request = request.message_thread_id(thread);
                    }
                    if let Some(c) = caption {
                        request = request.caption(c.clone());
                    }
                    request
                })
            })
            .await
        }
        .map_err(describe)?;
        Ok(message.id)
    }
}
