//! Server-rendered SVG charts (no script): stacked daily bars, one colour per series, each
//! segment a `<rect class="bar">` carrying its day and series (`data-date`, `data-key`) and a
//! `<title>` with both and the value (the browser shows it on hover). Every label is escaped.

use crate::html::escape;

/// One stacked series: a value per day (same length and order as the chart's days).
#[derive(Debug, Clone)]
pub(crate) struct Series {
    pub(crate) key: String,
    pub(crate) values: Vec<f64>,
}

/// The series' colours, in order (cycled).
pub(crate) const COLOURS: [&str; 8] = [
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#9c755f",
];

const WIDTH: f64 = 900.0;
const HEIGHT: f64 = 220.0;
/// Room for the axis labels.
const LEFT: f64 = 70.0;
const BOTTOM: f64 = 20.0;
const TOP: f64 = 10.0;

/// The colour of the `i`-th series.
pub(crate) fn colour(i: usize) -> &'static str {
    COLOURS[i % COLOURS.len()]
}

/// A stacked bar chart of `series` over `days` (oldest first); `format` writes a value.
pub(crate) fn stacked_bars(
    id: &str,
    label: &str,
    days: &[String],
    series: &[Series],
    format: fn(f64) -> String,
) -> String {
    let totals: Vec<f64> = (0..days.len())
        .map(|d| {
            series
                .iter()
                .map(|s| s.values.get(d).copied().unwrap_or(0.0))
                .sum()
        })
        .collect();
    let max = totals.iter().copied().fold(0.0_f64, f64::max);
    let plot_w = WIDTH - LEFT;
    let plot_h = HEIGHT - TOP - BOTTOM;
    let slot = plot_w / days.len().max(1) as f64;
    let bar_w = (slot * 0.8).max(1.0);
    let mut svg = format!(
        "<svg id=\"{id}\" class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" \
         viewBox=\"0 0 {WIDTH} {HEIGHT}\" width=\"100%\" role=\"img\" aria-label=\"{label}\">\
         <title>{label}</title>",
        id = escape(id),
        label = escape(label),
    );
    let base = TOP + plot_h;
    // The axes, the top value and the first and last day.
    svg.push_str(&format!(
        "<line x1=\"{LEFT}\" y1=\"{TOP}\" x2=\"{LEFT}\" y2=\"{base}\" stroke=\"#999\"/>\
         <line x1=\"{LEFT}\" y1=\"{base}\" x2=\"{WIDTH}\" y2=\"{base}\" stroke=\"#999\"/>\
         <text x=\"{x}\" y=\"{y}\" font-size=\"11\" text-anchor=\"end\">{top}</text>\
         <text x=\"{x}\" y=\"{base}\" font-size=\"11\" text-anchor=\"end\">{zero}</text>",
        x = LEFT - 4.0,
        y = TOP + 10.0,
        top = escape(&format(max)),
        zero = escape(&format(0.0)),
    ));
    if let (Some(first), Some(last)) = (days.first(), days.last()) {
        svg.push_str(&format!(
            "<text x=\"{LEFT}\" y=\"{HEIGHT}\" font-size=\"11\">{}</text>\
             <text x=\"{WIDTH}\" y=\"{HEIGHT}\" font-size=\"11\" text-anchor=\"end\">{}</text>",
            escape(first),
            escape(last)
        ));
    }
    if max > 0.0 {
        for (d, day) in days.iter().enumerate() {
            let x = LEFT + slot * d as f64 + (slot - bar_w) / 2.0;
            let mut y = base;
            for (i, s) in series.iter().enumerate() {
                let value = s.values.get(d).copied().unwrap_or(0.0);
                if value <= 0.0 {
                    continue;
                }
                let h = (value / max * plot_h).max(0.5);
                y -= h;
                svg.push_str(&format!(
                    "<rect class=\"bar\" data-date=\"{date}\" data-key=\"{key}\" x=\"{x:.2}\" \
                     y=\"{y:.2}\" width=\"{bar_w:.2}\" height=\"{h:.2}\" fill=\"{fill}\">\
                     <title>{date} · {key} · {value}</title></rect>",
                    date = escape(day),
                    key = escape(&s.key),
                    fill = colour(i),
                    value = escape(&format(value)),
                ));
            }
        }
    }
    svg.push_str("</svg>");
    svg
}

/// The legend of `series`: a colour swatch (an inline SVG square) and the key of each.
pub(crate) fn legend(series: &[Series]) -> String {
    let items: Vec<String> = series
        .iter()
        .enumerate()
        .map(|(i, s)| {
            format!(
                "<span class=\"legend-item\"><svg width=\"10\" height=\"10\" \
                 xmlns=\"http://www.w3.org/2000/svg\"><rect width=\"10\" height=\"10\" \
                 fill=\"{}\"/></svg> {}</span>",
                colour(i),
                escape(&s.key)
            )
        })
        .collect();
    format!("<p class=\"legend\">{}</p>", items.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bar_per_day_and_series_with_a_title_and_escaped_keys() {
        let days = vec!["2026-01-01".to_owned(), "2026-01-02".to_owned()];
        let series = vec![
            Series {
                key: "<b>x</b>".to_owned(),
                values: vec![1.0, 0.0],
            },
            Series {
                key: "y".to_owned(),
                values: vec![2.0, 3.0],
            },
        ];
        let svg = stacked_bars("c", "cost", &days, &series, |v| format!("${v:.2}"));
        assert_eq!(svg.matches("<rect class=\"bar\"").count(), 3, "{svg}");
        assert!(
            svg.contains("<title>2026-01-02 · y · $3.00</title>"),
            "{svg}"
        );
        assert!(svg.contains("&lt;b&gt;x&lt;/b&gt;"), "{svg}");
        assert!(!svg.contains("<b>"), "{svg}");
        let empty = stacked_bars("c", "cost", &days, &[], |v| format!("{v}"));
        assert!(!empty.contains("<rect class=\"bar\""));
    }
}
