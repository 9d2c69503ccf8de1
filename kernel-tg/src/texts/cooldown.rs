//! Texts of a provider cooling down: the time left, and what choosing it with `/provider` does.

use kernel_common::config::Locale;

use super::Texts;

impl Texts {
    /// The time left until `rfc3339` from `now`, rounded up to minutes: "还剩 5 分钟" /
    /// "5 min left"; empty when the time is unreadable.
    pub fn time_left(self, rfc3339: &str, now: chrono::DateTime<chrono::Utc>) -> String {
        let Ok(until) = chrono::DateTime::parse_from_rfc3339(rfc3339.trim()) else {
            return String::new();
        };
        let secs = (until.with_timezone(&chrono::Utc) - now)
            .num_seconds()
            .max(0);
        let minutes = (secs + 59) / 60;
        match self.locale() {
            Locale::Zh => format!("还剩 {minutes} 分钟"),
            Locale::En => format!("{minutes} min left"),
        }
    }

    /// A cooling provider's listing note: "（冷却中，至 14:05，还剩 5 分钟；选择它即结束冷却）".
    pub fn cooling_note(self, until: &str, now: chrono::DateTime<chrono::Utc>) -> String {
        let left = self.time_left(until, now);
        let until = self.cooling_until(until);
        match self.locale() {
            Locale::Zh => format!("（冷却中，{until}，{left}；选择它即结束冷却）"),
            Locale::En => {
                format!(" (cooling down {until}, {left}; choosing it ends the cooldown)")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn time_left_rounds_up_to_minutes_and_survives_garbage() {
        let now = chrono::DateTime::parse_from_rfc3339("2026-01-01T00:00:00Z")
            .unwrap()
            .with_timezone(&chrono::Utc);
        let en = Texts::new(Locale::En);
        assert_eq!(en.time_left("2026-01-01T00:04:01Z", now), "5 min left");
        assert_eq!(en.time_left("2025-01-01T00:00:00Z", now), "0 min left");
        assert_eq!(en.time_left("garbage", now), "");
        let zh = Texts::new(Locale::Zh).cooling_note("2026-01-01T00:05:00Z", now);
        assert!(
            zh.contains("还剩 5 分钟") && zh.contains("结束冷却"),
            "{zh}"
        );
    }
}
