//! The /web replies: the one-time login link to the web console, or why there is none.

use kernel_common::config::Locale;

use super::{Texts, escape_html};

impl Texts {
    /// The one-time login link (valid `minutes`, works once).
    pub fn web_login_link(self, url: &str, minutes: u32) -> String {
        let url = escape_html(url);
        if self.locale == Locale::En {
            format!(
                "Your one-time login link to the web console (valid {minutes} minutes, works \
                 once):\n<a href=\"{url}\">{url}</a>"
            )
        } else {
            format!(
                "网页控制台的一次性登录链接（{minutes} 分钟内有效，只能用一次）：\n<a href=\"{url}\">{url}</a>"
            )
        }
    }

    /// /web when the config has no `[web]` section.
    pub fn web_not_configured(self) -> &'static str {
        self.pick(
            "网页控制台还没有配置：在配置文件里加上 [web] 一节（例如 listen = \"127.0.0.1:8787\"），然后启动 kernel-web。",
            "The web console is not configured: add a [web] section to the config (e.g. listen = \"127.0.0.1:8787\") and start kernel-web.",
        )
    }
}
