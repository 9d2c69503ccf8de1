//! `[providers.<name>] max_image_bytes` / `max_image_side_px`: the largest image a provider
//! takes. kernel-agentd scales a bigger image down to fit (keeping its aspect ratio) before the
//! turn; a `claude` provider has its API's own limit, which these can only lower.

use crate::limits::MAX_ATTACHMENT_BYTES;

/// The smallest `max_image_bytes` accepted (smaller leaves nothing of a photo).
pub const MIN_IMAGE_BYTES: usize = 10 * 1024;
/// The largest `max_image_bytes` accepted: the attachment limit (20 MB) already applies.
pub const MAX_IMAGE_BYTES: usize = MAX_ATTACHMENT_BYTES;
/// The smallest `max_image_side_px` accepted.
pub const MIN_IMAGE_SIDE: u32 = 64;
/// The largest `max_image_side_px` accepted.
pub const MAX_IMAGE_SIDE: u32 = 20_000;

/// What the configuration says one image may be for a provider; `None`: nothing of its own.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ImageLimits {
    /// The most decoded bytes.
    pub max_bytes: Option<usize>,
    /// The most pixels on either side.
    pub max_side: Option<u32>,
}
